"""The certified attention reference: enclosures hold the exact value (mpmath at 300 bits),
the three engines agree, torch's SDPA semantics are followed, bad input is refused."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from softmax_dispersion.testing.attention_reference import (
    _dd_engine,
    _exact_rows,
    _float64_engine,
    attention_problem,
    reference_attention,
    round_to_format,
)

DTYPES = ("float16", "float32", "float64")


def _mp_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, bias: np.ndarray, scale: mpmath.mpf):
    """The exact attention of one batch, in mpmath (rows of q; bias −inf excludes)."""
    out = []
    for i in range(q.shape[0]):
        scores = []
        for j in range(k.shape[0]):
            if math.isinf(bias[i, j]):
                scores.append(None)
                continue
            dot = mpmath.fsum(
                mpmath.mpf(float(a)) * mpmath.mpf(float(b)) for a, b in zip(q[i], k[j], strict=True)
            )
            scores.append(dot * scale + mpmath.mpf(float(bias[i, j])))
        visible = [s for s in scores if s is not None]
        top = max(visible)
        weights = [mpmath.exp(s - top) if s is not None else mpmath.mpf(0) for s in scores]
        total = mpmath.fsum(weights)
        out.append(
            [
                mpmath.fsum(w / total * mpmath.mpf(float(v[j, c])) for j, w in enumerate(weights))
                for c in range(v.shape[1])
            ]
        )
    return out


def _inputs(dtype: str, seed: int, size: float = 2.0, keys: int = 11, dims: int = 5):
    rng = np.random.default_rng(seed)
    q = (rng.normal(size=(2, 3, dims)) * size).astype(dtype)
    k = (rng.normal(size=(2, keys, dims)) * size).astype(dtype)
    v = rng.normal(size=(2, keys, 4)).astype(dtype)
    mask = rng.random((3, keys)) > 0.3
    mask[:, 0] = True
    return q, k, v, mask


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("seed", [0, 1])
def test_enclosure_holds_the_exact_value(dtype: str, seed: int) -> None:
    q, k, v, mask = _inputs(dtype, seed)
    ref = reference_attention(q, k, v, attn_mask=mask)
    problem = attention_problem(q, k, v, attn_mask=mask)
    with mpmath.workprec(300):
        scale = 1 / mpmath.sqrt(q.shape[-1])
        for b in range(2):
            exact = _mp_attention(q[b], k[b], v[b], problem.bias[b], scale)
            for i in range(3):
                for c in range(4):
                    truth = exact[i][c]
                    low, high = ref.lower[b, i, c], ref.upper[b, i, c]
                    assert mpmath.mpf(float(low)) <= truth <= mpmath.mpf(float(high))
                    centre = mpmath.mpf(float(ref.centre[b, i, c])) + mpmath.mpf(
                        float(ref.centre_low[b, i, c])
                    )
                    assert abs(centre - truth) <= mpmath.mpf(float(ref.radius[b, i, c]))
    assert np.all(ref.upper - ref.lower <= 1e-12 * (np.abs(ref.centre) + 1))


def test_the_engines_agree_and_are_narrow() -> None:
    q, k, v, mask = _inputs("float32", 3, keys=40, dims=8)
    problem = attention_problem(q, k, v, attn_mask=mask)
    fast = _float64_engine(problem, 2.0**-34)
    dd = _dd_engine(problem)
    rows = [(b, i) for b in range(2) for i in range(3)]
    exact = _exact_rows(problem, rows, 2.0**-60, False)
    assert not fast.wide.any() and not dd.wide.any()
    for b, i in rows:
        centre, low, radius, probs, _, _ = exact[b, i]
        for engine in (fast, dd):
            for c in range(centre.size):
                terms = (engine.centre[b, i, c], engine.low[b, i, c], -centre[c], -low[c])
                gap = abs(mpmath.fsum(mpmath.mpf(float(t)) for t in terms))
                assert gap <= mpmath.mpf(float(engine.radius[b, i, c] + radius[c]))
        assert np.all(dd.radius[b, i] < 1e-25)  # double-double: about 2**-95 of the scale
        assert np.all(fast.radius[b, i] < 1e-12)
        assert np.allclose(fast.probs[b, i], probs, rtol=1e-14, atol=1e-300)


def test_float64_inputs_take_the_double_double_engine() -> None:
    q, k, v, mask = _inputs("float64", 4)
    ref = reference_attention(q, k, v, attn_mask=mask)
    assert ref.exact_rows == 0
    assert np.all(ref.radius < 1e-25)


def test_semantics_masks_causal_scale_and_broadcasting() -> None:
    rng = np.random.default_rng(5)
    q = rng.normal(size=(2, 3, 4, 8)).astype(np.float32)
    k = rng.normal(size=(1, 3, 6, 8)).astype(np.float32)  # batch broadcasts to q's
    v = rng.normal(size=(6, 2)).astype(np.float32)  # no batch at all
    causal = reference_attention(q, k, v, is_causal=True)
    lower = np.tril(np.ones((4, 6), dtype=bool))
    masked = reference_attention(q, k, v, attn_mask=lower)
    assert np.array_equal(causal.values, masked.values)
    additive = np.where(lower, 0.0, -np.inf).astype(np.float32)
    assert np.array_equal(reference_attention(q, k, v, attn_mask=additive).values, masked.values)
    assert causal.values.shape == (2, 3, 4, 2)
    assert np.all(causal.probs[..., 0, 1:] == 0)
    # the first query sees one key: its output is that key's value exactly
    assert np.array_equal(causal.values[..., 0, :], np.broadcast_to(v[0], (2, 3, 2)))
    scaled = reference_attention(q, k, v, scale=1 / math.sqrt(8))
    default = reference_attention(q, k, v)
    assert np.allclose(scaled.values, default.values, rtol=1e-6)
    doubled = reference_attention(2 * q, k, v, scale=0.5 / math.sqrt(8))
    assert np.allclose(doubled.values, default.values, rtol=1e-6)


def test_fully_masked_rows_are_undefined_and_do_not_spill() -> None:
    q, k, v, mask = _inputs("float32", 6)
    mask[1] = False
    ref = reference_attention(q, k, v, attn_mask=mask)
    assert ref.fully_masked[:, 1].all() and not ref.fully_masked[:, 0].any()
    assert np.isnan(ref.values[:, 1]).all()
    assert np.isfinite(ref.values[:, [0, 2]]).all()


def test_a_finite_mask_is_an_input_and_rounded_scores_are_offered() -> None:
    q, k, v, _ = _inputs("float32", 7)
    big = np.full((3, 11), np.finfo(np.float32).min, dtype=np.float32)
    exact = reference_attention(q, k, v, attn_mask=big)
    plain = reference_attention(q, k, v)
    # shift invariance: the exact answer ignores a constant mask
    assert np.allclose(exact.values, plain.values, rtol=1e-6, atol=1e-7)
    rounded = reference_attention(q, k, v, attn_mask=big, scores="rounded")
    # every score rounds to finfo.min: uniform weights, the mean of the values
    assert not rounded.ambiguous.any()
    mean = v.astype(np.float64).mean(axis=1, keepdims=True)
    assert np.allclose(rounded.values, np.broadcast_to(mean, rounded.values.shape), rtol=1e-6)


def test_torch_and_jax_arrays() -> None:
    torch = pytest.importorskip("torch")
    q, k, v, mask = _inputs("float32", 8)
    expected = reference_attention(q, k, v, attn_mask=mask).values
    tensors = [torch.from_numpy(a) for a in (q, k, v, mask)]
    assert np.array_equal(reference_attention(*tensors[:3], attn_mask=tensors[3]).values, expected)
    half = reference_attention(*(t.to(torch.bfloat16) for t in tensors[:3]))
    assert half.dtype == "bfloat16"
    assert np.array_equal(half.values, round_to_format(half.values, "bfloat16"))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"attn_mask": np.ones((3, 11), dtype=bool), "is_causal": True}, "not given together"),
        ({"attn_mask": np.ones((5, 11), dtype=bool)}, "does not broadcast"),
        ({"attn_mask": np.ones((4, 2, 3, 11), dtype=bool)}, "does not broadcast"),
        ({"scale": -1.0}, "scale must be a finite number >= 0"),
        ({"scale": float("nan")}, "scale must be a finite number >= 0"),
        ({"attn_mask": np.full((3, 11), np.nan)}, "finite values or -inf"),
    ],
)
def test_bad_input_is_named(kwargs: dict, message: str) -> None:
    q, k, v, _ = _inputs("float32", 9)
    with pytest.raises(ValueError, match=message):
        reference_attention(q, k, v, **kwargs)


def test_bad_shapes_are_named() -> None:
    q, k, v, _ = _inputs("float32", 9)
    with pytest.raises(ValueError, match="q's"):
        reference_attention(q, k[..., :3], v)
    with pytest.raises(ValueError, match="keys"):
        reference_attention(q, k, v[:, :4])
    with pytest.raises(ValueError, match="without adding dimensions"):
        reference_attention(q[0], k, v)
