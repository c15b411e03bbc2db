"""The ensemble model: members are independent models, and training one works."""

from __future__ import annotations

import math
import subprocess
import sys
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from softmax_dispersion.empirical.config import preset  # noqa: E402
from softmax_dispersion.empirical.evaluation import evaluate  # noqa: E402
from softmax_dispersion.empirical.model import EnsembleLinear, MaxRetrievalModel  # noqa: E402
from softmax_dispersion.empirical.normalisers import ScalableSoftmax, Softmax  # noqa: E402
from softmax_dispersion.empirical.task import max_retrieval_batch  # noqa: E402
from softmax_dispersion.empirical.training import build_model, train  # noqa: E402

TRAIN_STEPS = 300
"""Steps of the one real training run: ~95% accuracy at n = 16 (measured 0.947–0.965)."""
TRAIN_ACCURACY = 0.7
"""What each of its three members must reach at n = 16 (chance is 0.1)."""


def model(seeds: list[int], normaliser: str = "softmax", width: int = 8) -> MaxRetrievalModel:
    config = preset("quick", width=width)
    return build_model(config, normaliser, seeds, torch.device("cpu"))


def test_ensemble_linear_is_one_linear_map_per_member() -> None:
    layer = EnsembleLinear(3, 5, 4).double()
    generator = torch.Generator().manual_seed(0)
    for member in range(3):
        layer.reset_member(member, generator)
    x = torch.randn(3, 2, 6, 5, generator=generator, dtype=torch.float64)
    out = layer(x)
    assert out.shape == (3, 2, 6, 4)
    for member in range(3):
        expected = torch.nn.functional.linear(
            x[member], layer.weight[member].T, layer.bias[member, 0]
        )
        torch.testing.assert_close(out[member], expected, rtol=1e-12, atol=1e-12)


def test_reset_member_uses_the_default_linear_initialisation() -> None:
    layer = EnsembleLinear(2, 100, 50)
    layer.reset_member(1, torch.Generator().manual_seed(3))
    bound = 1 / math.sqrt(100)
    values = torch.cat([layer.weight[1].flatten(), layer.bias[1].flatten()])
    assert values.abs().max() <= bound
    assert values.abs().max() > 0.9 * bound and abs(float(values.detach().mean())) < 0.1 * bound


def test_a_member_does_not_depend_on_the_other_seeds() -> None:
    pair = model([0, 1])
    shifted = model([1, 2])
    alone = model([1])
    names = [name for name, _ in pair.named_parameters()]
    assert "query" in names and len(names) > 5
    for (name, a), b, c in zip(
        pair.named_parameters(), shifted.parameters(), alone.parameters(), strict=True
    ):
        assert torch.equal(a[1], b[0]), name
        assert torch.equal(a[1], c[0]), name
        assert not torch.equal(a[0], a[1]), name


def test_gradients_of_one_member_leave_the_others_alone() -> None:
    net = MaxRetrievalModel(
        ScalableSoftmax(3, s=1.0), features=11, width=8, classes=10, seeds=[0, 1, 2]
    )
    data = max_retrieval_batch(4, 7, generator=torch.Generator().manual_seed(0))
    items = torch.stack([data.items] * 3)
    out = net(items)
    loss = torch.nn.functional.cross_entropy(out.class_logits[1], data.target)
    loss.backward()
    params = dict(net.named_parameters())
    assert "normaliser.s" in params
    for name, param in params.items():
        assert param.grad is not None, name
        assert torch.count_nonzero(param.grad[1]) > 0, name
        assert torch.count_nonzero(param.grad[0]) == 0, name
        assert torch.count_nonzero(param.grad[2]) == 0, name


def test_members_see_only_their_own_inputs() -> None:
    net = model([0, 1])
    items = torch.rand(2, 3, 5, 11, generator=torch.Generator().manual_seed(0))
    before = net(items).class_logits
    changed = items.clone()
    changed[1] = torch.rand(3, 5, 11, generator=torch.Generator().manual_seed(1))
    after = net(changed).class_logits
    assert torch.equal(before[0], after[0])
    assert not torch.equal(before[1], after[1])


def test_one_seed_per_member_is_required() -> None:
    with pytest.raises(ValueError, match="one seed per member"):
        MaxRetrievalModel(Softmax(2), features=11, width=8, classes=10, seeds=[0])


def test_an_inference_only_normaliser_cannot_be_trained() -> None:
    with pytest.raises(ValueError, match="inference only"):
        train(preset("quick", steps=2, width=8), "adaptive_temperature", [0])


@pytest.mark.slow
def test_a_member_trains_as_if_alone() -> None:
    config = preset("quick", steps=12, width=16, batch=32)
    pair = train(config, "softmax", [0, 1]).model
    alone = train(config, "softmax", [1]).model
    for (name, a), b in zip(pair.named_parameters(), alone.parameters(), strict=True):
        # Batched and single matrix products round differently: close, not equal (measured
        # up to 3e-5 apart; 12 steps move a parameter by up to 12 × 3e-3).
        torch.testing.assert_close(a[1], b[0], rtol=1e-3, atol=2e-4, msg=name)
    assert not torch.allclose(pair.query[0], pair.query[1])


@pytest.mark.slow
def test_training_beats_chance_by_a_wide_margin() -> None:
    config = preset("quick", steps=TRAIN_STEPS, width=64, sizes=(16,), test_sets=512)
    run = train(config, "softmax", [0, 1, 2])
    assert not run.model.training
    assert run.seeds == [0, 1, 2] and run.steps_per_second > 0
    assert all(loss < 0.5 * math.log(10) for loss in run.final_loss), run.final_loss
    rows = evaluate(run.model, config, run.seeds, ["softmax"]).rows
    accuracies = [row["accuracy"] for row in rows]
    assert len(accuracies) == 3 and all(a >= TRAIN_ACCURACY for a in accuracies), accuracies


@pytest.mark.slow
def test_training_and_evaluation_leave_subnormals_alone() -> None:
    # A library must not change the process's float environment: flushing subnormals in
    # training once leaked into torch's worker threads and broke other tests' softmax.
    code = (
        "import torch\n"
        "from softmax_dispersion.empirical.config import preset\n"
        "from softmax_dispersion.empirical.evaluation import evaluate\n"
        "from softmax_dispersion.empirical.training import train\n"
        "config = preset('quick', steps=3, width=8, sizes=(16,), test_sets=4)\n"
        "run = train(config, 'softmax', [0])\n"
        "evaluate(run.model, config, [0], ['softmax'])\n"
        "tiny = torch.full((1 << 20,), 1e-39)\n"
        "row = torch.tensor([0.0, -100.0])\n"
        "print(float((tiny * 1.0).min()) > 0, float(torch.softmax(row, 0)[1]) > 0)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True", "True"]


@pytest.mark.slow
def test_each_member_draws_its_own_training_sizes(monkeypatch: pytest.MonkeyPatch) -> None:
    from softmax_dispersion.empirical import training

    seen: list[list[int]] = []
    original = training._padded

    def record(batches: list[Any], length: int) -> Any:
        seen.append([batch.items.shape[1] for batch in batches])
        return original(batches, length)

    monkeypatch.setattr(training, "_padded", record)
    config = preset("quick", steps=20, width=8, batch=4)
    train(config, "softmax", [0, 1, 2])
    sizes = list(zip(*seen, strict=True))
    assert len({tuple(s) for s in sizes}) == 3  # three different schedules
    alone: list[list[int]] = []
    monkeypatch.setattr(
        training,
        "_padded",
        lambda b, n: (alone.append([x.items.shape[1] for x in b]), original(b, n))[1],
    )
    train(config, "softmax", [1])
    assert [s[0] for s in alone] == list(sizes[1])  # a member's schedule is its seed's alone
    low, high = config.train_sizes
    assert all(low <= n <= high for s in sizes for n in s)


@pytest.mark.slow
def test_padding_changes_no_member_result() -> None:
    # Padded to a longer set with −inf logits, a member's loss is its unpadded loss.
    config = preset("quick", width=8)
    model = build_model(config, "ssmax", [0], torch.device("cpu"))
    data = max_retrieval_batch(6, 5, generator=torch.Generator().manual_seed(2))
    items = data.items[None]
    padded = torch.cat([items, torch.zeros(1, 6, 3, 11)], dim=2)
    lengths = torch.full((1, 6), 5)
    with torch.no_grad():
        plain = model(items).class_logits
        masked = model(padded, lengths=lengths).class_logits
    torch.testing.assert_close(plain, masked, rtol=1e-5, atol=1e-6)


@pytest.mark.slow
def test_learning_curves_are_recorded_per_member() -> None:
    config = preset("quick", steps=30, width=8, curve_every=10, curve_sets=4)
    run = train(config, "softmax", [0, 1])
    for curve in run.curves:
        assert curve["step"] == [0, 10, 20, 30]
        for key in ("p_top_16", "p_top_256", "accuracy_16", "accuracy_256"):
            assert len(curve[key]) == 4 and all(0 <= v <= 1 for v in curve[key])
    assert run.curves[0]["p_top_16"] != run.curves[1]["p_top_16"]
    assert run.seconds_per_seed == pytest.approx(run.seconds / 2)


def test_threads_default_to_the_idle_cores() -> None:
    import os

    from softmax_dispersion.empirical.experiment import ExperimentError, choose_threads

    assert choose_threads(3) == 3
    assert 1 <= choose_threads() <= (os.cpu_count() or 1)
    with pytest.raises(ExperimentError, match="threads must be >= 1"):
        choose_threads(0)
