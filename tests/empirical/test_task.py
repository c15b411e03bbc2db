"""The max-retrieval data: the target is the class of the highest-priority item."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from softmax_dispersion.empirical.task import max_retrieval_batch  # noqa: E402


def generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


@settings(max_examples=40)
@given(
    batch=st.integers(1, 8),
    n=st.integers(1, 40),
    classes=st.integers(2, 12),
    seed=st.integers(0, 2**31 - 1),
)
def test_target_is_the_class_of_the_highest_priority_item(
    batch: int, n: int, classes: int, seed: int
) -> None:
    data = max_retrieval_batch(batch, n, classes=classes, generator=generator(seed))
    assert data.items.shape == (batch, n, 1 + classes)
    assert data.items.dtype == torch.float32
    assert data.target.shape == data.top.shape == (batch,)
    assert data.target.dtype == data.top.dtype == torch.int64
    for items, target, top in zip(
        data.items.tolist(), data.target.tolist(), data.top.tolist(), strict=True
    ):
        priorities = [item[0] for item in items]
        # Independently of torch: the first index of the largest priority, and its class.
        best = max(range(n), key=lambda i: (priorities[i], -i))
        one_hot = items[best][1:]
        assert top == best
        assert one_hot.count(1.0) == 1 and one_hot.count(0.0) == classes - 1
        assert target == one_hot.index(1.0)
        assert all(0.0 <= p < 1.0 for p in priorities)
        assert all(sorted(set(item[1:])) in ([0.0, 1.0], [1.0]) for item in items)


def test_classes_are_spread_over_all_labels() -> None:
    data = max_retrieval_batch(2000, 3, classes=4, generator=generator(0))
    counts = torch.bincount(data.target, minlength=4)
    assert counts.min() > 400  # about 500 each


def test_the_same_seed_gives_the_same_data() -> None:
    first = max_retrieval_batch(4, 9, generator=generator(7))
    second = max_retrieval_batch(4, 9, generator=generator(7))
    other = max_retrieval_batch(4, 9, generator=generator(8))
    for a, b in zip(first, second, strict=True):
        assert torch.equal(a, b)
    assert not torch.equal(first.items, other.items)


def test_a_single_item_is_its_own_maximum() -> None:
    data = max_retrieval_batch(5, 1, classes=3, generator=generator(1))
    assert data.top.tolist() == [0] * 5
    assert torch.equal(data.target, data.items[:, 0, 1:].argmax(-1))


@pytest.mark.parametrize("device", [None, "cpu", torch.device("cpu")])
def test_device_defaults_to_the_generators(device: torch.device | str | None) -> None:
    data = max_retrieval_batch(3, 4, generator=generator(2), device=device)
    reference = max_retrieval_batch(3, 4, generator=generator(2))
    for part in data:
        assert part.device == torch.device("cpu")
    for a, b in zip(data, reference, strict=True):
        assert torch.equal(a, b)


@pytest.mark.parametrize(
    ("batch", "n", "classes", "message"),
    [
        (1, 0, 10, "n must be >= 1"),
        (0, 5, 10, "batch and n must be >= 1"),
        (2, -1, 10, "n must be >= 1"),
        (2, 5, 1, "classes must be >= 2"),
        (2, 5, 0, "classes must be >= 2"),
    ],
)
def test_bad_sizes_are_rejected(batch: int, n: int, classes: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        max_retrieval_batch(batch, n, classes=classes, generator=generator(0))


@pytest.mark.parametrize("lead", [0.05, 0.5, 0.9])
def test_gap_controlled_sets_keep_their_lead(lead: float) -> None:
    from softmax_dispersion.empirical.task import gap_controlled_batch

    data = gap_controlled_batch(64, 33, lead=lead, generator=torch.Generator().manual_seed(1))
    priority = data.items[..., 0]
    top = priority.gather(1, data.top[:, None])[:, 0]
    others = priority.clone()
    others[torch.arange(64), data.top] = -1
    assert bool((top >= lead).all()) and bool((top <= 1).all())
    assert bool((top - others.amax(-1) >= lead - 1e-6).all())
    assert bool((priority.argmax(-1) == data.top).all())
    assert len(set(data.top.tolist())) > 10  # the top item is anywhere in the set
    labels = data.items[..., 1:].argmax(-1)
    assert bool((labels.gather(1, data.top[:, None])[:, 0] == data.target).all())


@pytest.mark.parametrize(("n", "lead"), [(1, 0.5), (5, 0.0), (5, 1.0)])
def test_gap_controlled_sets_reject_bad_arguments(n: int, lead: float) -> None:
    from softmax_dispersion.empirical.task import gap_controlled_batch

    with pytest.raises(ValueError):
        gap_controlled_batch(2, n, lead=lead, generator=torch.Generator())
