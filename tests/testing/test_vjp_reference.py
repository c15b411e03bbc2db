"""The certified VJP references: enclosures hold the exact values (mpmath at 300 bits), in
every engine; −inf logits and undefined rows; bad input refused."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from softmax_dispersion.testing.vjp_reference import _arb_row, reference_softmax_vjp, vjp_scale


def _exact(x: np.ndarray, g: np.ndarray, log: bool) -> list[mpmath.mpf]:
    visible = [i for i, v in enumerate(x) if np.isfinite(v)]
    top = max(mpmath.mpf(float(x[i])) for i in visible)
    weights = [
        mpmath.exp(mpmath.mpf(float(v)) - top) if np.isfinite(v) else mpmath.mpf(0) for v in x
    ]
    total = mpmath.fsum(weights)
    p = [w / total for w in weights]
    gm = [mpmath.mpf(float(v)) for v in g]
    if log:
        s = mpmath.fsum(gm)
        return [gm[i] - p[i] * s for i in range(len(x))]
    c = mpmath.fsum(a * b for a, b in zip(p, gm, strict=True))
    return [p[i] * (gm[i] - c) for i in range(len(x))]


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_enclosures_hold_the_exact_values(dtype: str, log: bool) -> None:
    rng = np.random.default_rng(11)
    x = (rng.normal(size=(3, 37)) * 4).astype(dtype)
    x[1, :5] = -np.inf
    g = rng.normal(size=(3, 37)).astype(dtype)
    ref = reference_softmax_vjp(x, g, log=log)
    assert ref.exact_rows == 0
    with mpmath.workprec(300):
        for r in range(3):
            exact = _exact(x[r], g[r], log)
            for i, truth in enumerate(exact):
                assert (
                    mpmath.mpf(float(ref.lower[r, i]))
                    <= truth
                    <= mpmath.mpf(float(ref.upper[r, i]))
                )
    assert np.all(ref.values[1, :5] == (g[1, :5] if log else 0.0))
    scale = vjp_scale(ref.probs, g.astype(np.float64), log)
    assert np.all(ref.radius <= 1e-12 * scale + 1e-300)


def test_the_arb_row_agrees_with_the_engines() -> None:
    rng = np.random.default_rng(12)
    x = rng.normal(size=(1, 50)) * 3
    g = rng.normal(size=(1, 50))
    for log in (False, True):
        ref = reference_softmax_vjp(x, g, log=log)
        centre, low, radius, _ = _arb_row(x[0], g[0], log, 200)
        gap = np.abs((ref.centre[0] - centre) + (ref.centre_low[0] - low))
        assert np.all(gap <= ref.radius[0] + radius + 1e-30)


def test_a_row_of_minus_inf_is_undefined() -> None:
    x = np.array([[0.0, 1.0], [-np.inf, -np.inf]])
    ref = reference_softmax_vjp(x, np.ones_like(x))
    assert ref.undefined.tolist() == [False, True]
    assert np.isnan(ref.values[1]).all() and np.isfinite(ref.values[0]).all()


def test_bad_input_is_named() -> None:
    with pytest.raises(ValueError, match="g has shape"):
        reference_softmax_vjp(np.zeros(3), np.zeros(4))
    with pytest.raises(ValueError, match="finite"):
        reference_softmax_vjp(np.zeros(3), np.array([0.0, np.nan, 1.0]))
    with pytest.raises(ValueError, match="at least one dimension"):
        reference_softmax_vjp(np.float64(1.0), np.float64(1.0))
