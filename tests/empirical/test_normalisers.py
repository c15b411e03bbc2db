"""Each attention normaliser against an independent definition, and against the oracle.

References: softmax in mpmath at 60 digits; the adaptive rule from the theory's one
definition (``adaptive_inverse_temperature``) at an entropy computed here in mpmath;
SSMax and log-n in numpy; sparsemax as the sort-based simplex projection and
1.5-entmax by bisection on its threshold, both in numpy.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import mpmath
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from softmax_dispersion.empirical._torch_formulas import torch_function  # noqa: E402
from softmax_dispersion.empirical.normalisers import (  # noqa: E402
    NORMALISERS,
    AdaptiveTemperature,
    Entmax15,
    LogN,
    Normalised,
    Normaliser,
    ScalableSoftmax,
    Softmax,
    Sparsemax,
    make_normaliser,
    rule_entropy,
)
from softmax_dispersion.testing import check_softmax  # noqa: E402
from softmax_dispersion.testing.battery import LIBRARY_DTYPES  # noqa: E402
from softmax_dispersion.theory.adaptive_temperature import (  # noqa: E402
    adaptive_constants,
    adaptive_inverse_temperature,
)

COEFFICIENTS = (-0.037, 0.481, -2.3, 4.917, -1.791)
"""The rule's polynomial, highest degree first (for the deliberately wrong port)."""
ROOT_LOW = 0.8485819960
ROOT_HIGH = 5.944520828
PEAK = 4.412401866


def logits(shape: tuple[int, ...], scale: float, seed: int) -> torch.Tensor:
    """Float64 logits ``N(0, scale²)`` of the given shape."""
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed)).double() * scale


def rows_of(x: torch.Tensor) -> list[list[float]]:
    return x.reshape(-1, x.shape[-1]).tolist()  # type: ignore[no-any-return]


# --- independent references -------------------------------------------------------------


def mp_softmax(row: Sequence[Any]) -> list[Any]:
    """Softmax of mpf values at the working precision (no shift needed in mpmath)."""
    top = max(row)
    exps = [mpmath.exp(v - top) for v in row]
    total = mpmath.fsum(exps)
    return [e / total for e in exps]


def mp_adaptive(row: Sequence[float]) -> tuple[list[float], float, float]:
    """The paper's rule at 60 digits: (weights, β, H) with H = −Σ p log(p + 10⁻⁹)."""
    with mpmath.workdps(60):
        x = [mpmath.mpf(v) for v in row]
        p = mp_softmax(x)
        offset = mpmath.mpf(1) / 10**9
        entropy = -mpmath.fsum(pi * mpmath.log(pi + offset) for pi in p)
        beta = adaptive_inverse_temperature.mpmath(entropy)
        weights = mp_softmax([beta * v for v in x])
        return [float(w) for w in weights], float(beta), float(entropy)


def np_softmax(x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)  # type: ignore[no-any-return]


def np_sparsemax(z: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """The Euclidean projection of one row onto the simplex (sort-based)."""
    ordered = np.sort(z)[::-1]
    cumulative = np.cumsum(ordered)
    k = np.arange(1, z.size + 1)
    support = int(k[1 + k * ordered > cumulative][-1])
    tau = (cumulative[support - 1] - 1) / support
    return np.maximum(z - tau, 0.0)


def np_entmax15(z: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """1.5-entmax of one row: ``[z/2 − τ]_+²`` with ``τ`` bisected so the row sums to 1."""
    half = z / 2
    low, high = half.max() - 1.0, half.max()  # the sum is >= 1 at `low`, 0 at `high`
    for _ in range(200):
        tau = (low + high) / 2
        if (np.maximum(half - tau, 0.0) ** 2).sum() >= 1.0:
            low = tau
        else:
            high = tau
    return np.maximum(half - low, 0.0) ** 2  # type: ignore[no-any-return]


def two_level_row(n: int, entropy: float) -> list[float]:
    """One logit ``a``, ``n − 1`` at 0, with ``a`` bisected so the rule's entropy is ``entropy``."""

    def rule(a: float) -> float:
        p = np_softmax(np.array([a] + [0.0] * (n - 1)))
        return float(-(p * np.log(p + 1e-9)).sum())

    low, high = 0.0, 80.0  # the entropy falls as `a` grows
    for _ in range(200):
        middle = (low + high) / 2
        low, high = (middle, high) if rule(middle) > entropy else (low, middle)
    return [low] + [0.0] * (n - 1)


# --- softmax --------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 7, 300])
@pytest.mark.parametrize("scale", [0.1, 3.0, 40.0])
def test_softmax_matches_mpmath(n: int, scale: float) -> None:
    x = logits((2, 3, n), scale, seed=n)
    out = Softmax(2)(x)
    with mpmath.workdps(60):
        expected = [
            [float(w) for w in mp_softmax([mpmath.mpf(v) for v in row])] for row in rows_of(x)
        ]
    got = out.weights.reshape(-1, n).numpy()
    np.testing.assert_allclose(got, np.array(expected), rtol=1e-12, atol=0)
    assert torch.equal(out.exponentiated, x)
    assert torch.equal(out.beta, torch.ones(2, 3, dtype=torch.float64))
    single = Softmax(2)(x.float()).weights.double().reshape(-1, n).numpy()
    np.testing.assert_allclose(single, np.array(expected), rtol=2e-5, atol=1e-30)


# --- adaptive temperature ----------------------------------------------------------------


Reference = tuple[list[float], list[float], float, float]
"""A row, and the rule's weights, β and entropy on it (:func:`mp_adaptive`)."""


def adaptive_discrepancy(module: Normaliser, cases: list[Reference]) -> tuple[float, float]:
    """The largest |β − β_ref| and |weight − weight_ref| of ``module`` on float64 rows."""
    beta_error = weight_error = 0.0
    for row, weights, beta, _ in cases:
        out = module(torch.tensor([[row]], dtype=torch.float64))
        beta_error = max(beta_error, abs(float(out.beta[0, 0]) - beta))
        weight_error = max(
            weight_error, float(np.abs(out.weights[0, 0].numpy() - np.array(weights)).max())
        )
    return beta_error, weight_error


ENTROPIES = [
    0.1,
    0.5,
    0.5 + 1e-9,
    0.7,
    ROOT_LOW - 1e-3,
    ROOT_LOW - 1e-7,
    ROOT_LOW,
    ROOT_LOW + 1e-7,
    ROOT_LOW + 1e-3,
    1.5,
    2.5,
    PEAK,
    5.0,
    ROOT_HIGH - 1e-3,
    ROOT_HIGH - 1e-7,
    ROOT_HIGH,
    ROOT_HIGH + 1e-7,
    ROOT_HIGH + 1e-3,
    6.5,
]


@pytest.fixture(scope="module")
def designed() -> list[Reference]:
    """Rows of 1024 logits whose entropies are :data:`ENTROPIES`, a few random rows."""
    rows = [two_level_row(1024, h) for h in ENTROPIES]
    rows += rows_of(logits((6, 40), 2.0, seed=3)) + rows_of(logits((3, 5), 0.3, seed=4))
    return [(row, *mp_adaptive(row)) for row in rows]


def test_designed_rows_have_the_intended_entropies(designed: list[Reference]) -> None:
    for (_, _, beta, entropy), target in zip(designed, ENTROPIES, strict=False):
        assert entropy == pytest.approx(target, abs=1e-9)
        if target in (ROOT_LOW, ROOT_HIGH):
            assert beta == pytest.approx(1.0, abs=1e-8)
        if target == PEAK:
            assert beta == pytest.approx(2.421387707, abs=1e-8)


def test_adaptive_module_matches_the_theory_definition(designed: list[Reference]) -> None:
    beta_error, weight_error = adaptive_discrepancy(AdaptiveTemperature(1), designed)
    assert beta_error < 1e-9
    assert weight_error < 1e-9


def test_adaptive_output_is_softmax_of_the_scaled_logits() -> None:
    x = logits((3, 4, 50), 1.5, seed=5)
    out = AdaptiveTemperature(3)(x)
    assert torch.all(out.beta >= 1) and torch.all(out.beta <= 2.4214)
    torch.testing.assert_close(out.weights, torch.softmax(out.beta[..., None] * x, -1))
    spread = x.amax(-1) - x.amin(-1)
    scaled = out.exponentiated.amax(-1) - out.exponentiated.amin(-1)
    torch.testing.assert_close(scaled, out.beta * spread)
    entropy = rule_entropy(torch.softmax(x, -1))
    torch.testing.assert_close(out.beta, torch_function(adaptive_inverse_temperature)(entropy))


def test_rule_entropy_ignores_zero_weights() -> None:
    # A weight that underflowed to 0 (float16) contributes 0, never 0·log 0 = NaN.
    weights = torch.tensor([[0.5, 0.5, 0.0, 0.0]], dtype=torch.float16)
    assert float(rule_entropy(weights)) == pytest.approx(math.log(2), rel=1e-3)


def test_lambdified_rule_matches_numpy_and_mpmath_on_a_grid() -> None:
    constants = adaptive_constants()
    special = [
        float(v)
        for v in (
            constants.sharpening_starts.evalf(30),
            constants.sharpening_ends.evalf(30),
            constants.peak_entropy.evalf(30),
        )
    ]
    grid = np.concatenate(
        [
            np.linspace(0.0, 9.0, 1801),
            [0.5, np.nextafter(0.5, 1), np.nextafter(0.5, 0)],
            special,
            [v + d for v in special for d in (-1e-9, 1e-9, -1e-6, 1e-6)],
        ]
    )
    got = torch_function(adaptive_inverse_temperature)(torch.from_numpy(grid)).numpy()
    # The same polynomial, evaluated in another order: a few ulps apart.
    np.testing.assert_allclose(got, adaptive_inverse_temperature.numpy(grid), rtol=0, atol=1e-13)
    with mpmath.workdps(40):
        exact = np.array([float(adaptive_inverse_temperature.mpmath(h)) for h in grid])
    np.testing.assert_allclose(got, exact, rtol=0, atol=1e-13)
    assert got.min() == 1.0 and got.max() == pytest.approx(2.421387707, abs=1e-9)
    assert got[grid <= 0.5].max() == 1.0


class AscendingAdaptive(AdaptiveTemperature):
    """The rule with its coefficients read in ascending order (a known bad port)."""

    def forward(self, logits: torch.Tensor) -> Normalised:
        with torch.no_grad():
            entropy = rule_entropy(torch.softmax(logits, dim=-1))
            poly = sum(c * entropy**k for k, c in enumerate(COEFFICIENTS))
            beta = torch.where(entropy > 0.5, torch.clamp(poly, min=1.0), 1.0)
        return self._softmax(logits, beta)


def test_the_comparison_catches_coefficients_in_ascending_order(
    designed: list[Reference],
) -> None:
    beta_error, weight_error = adaptive_discrepancy(AscendingAdaptive(1), designed)
    assert beta_error > 0.1
    assert weight_error > 1e-3


# --- SSMax and log-n ---------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 16, 1000])
def test_ssmax_and_logn_match_numpy(n: int) -> None:
    x = logits((2, 3, n), 2.0, seed=10 + n)
    ssmax = ScalableSoftmax(2).double()
    ssmax.s.data = torch.tensor([0.5, 2.0], dtype=torch.float64)
    out = ssmax(x)
    s = np.array([0.5, 2.0])[:, None, None]
    np.testing.assert_allclose(
        out.weights.detach().numpy(), np_softmax(s * math.log(n) * x.numpy()), rtol=1e-12, atol=0
    )
    np.testing.assert_allclose(
        out.beta.detach().numpy(), np.broadcast_to(s[..., 0] * math.log(n), (2, 3)), rtol=1e-15
    )
    logn = LogN(2)(x)
    np.testing.assert_allclose(
        logn.weights.numpy(), np_softmax(math.log(n) * x.numpy()), rtol=1e-12, atol=0
    )
    assert torch.all(logn.beta == math.log(n))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_length_scaling_counts_rows_longer_than_a_16_bit_float_holds(dtype: torch.dtype) -> None:
    # float16's largest finite value is 65504: a count of 70,000 taken to float16 is inf,
    # and β = s·log n with it (the oracle's 128,256-entry row found this).
    n = 70_000
    x = torch.zeros((1, 1, n), dtype=dtype)
    for module in (ScalableSoftmax(1, s=1.0), LogN(1)):
        out = module.to(dtype)(x)
        assert torch.isfinite(out.beta).all()
        assert math.isclose(float(out.beta.detach()), math.log(n), rel_tol=1e-2)
        assert torch.isfinite(out.weights).all()


def test_ssmax_scale_is_learned_per_member() -> None:
    ssmax = ScalableSoftmax(2, s=1.5)
    assert ssmax.s.tolist() == [1.5, 1.5]
    out = ssmax(logits((2, 4, 9), 1.0, seed=0).float())
    out.weights[0, :, 0].sum().backward()
    assert ssmax.s.grad is not None
    assert ssmax.s.grad[0] != 0 and ssmax.s.grad[1] == 0


# --- entmax --------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 5, 60, 400])
@pytest.mark.parametrize(
    ("module", "reference"), [(Sparsemax, np_sparsemax), (Entmax15, np_entmax15)]
)
def test_sparse_normalisers_match_numpy(
    module: type[Normaliser],
    reference: Callable[[np.ndarray[Any, Any]], np.ndarray[Any, Any]],
    n: int,
) -> None:
    pytest.importorskip("entmax")
    x = logits((2, 3, n), 2.0, seed=20 + n)
    out = module(2)(x)
    expected = np.array([reference(np.array(row)) for row in rows_of(x)])
    np.testing.assert_allclose(out.weights.reshape(-1, n).numpy(), expected, rtol=0, atol=1e-10)
    assert out.exponentiated is None and not module.softmax_family
    assert torch.equal(out.beta, torch.ones(2, 3, dtype=torch.float64))
    assert torch.all(out.weights >= 0)
    torch.testing.assert_close(out.weights.sum(-1), torch.ones(2, 3, dtype=torch.float64))


@pytest.mark.parametrize(("module", "one_hot_gap"), [(Sparsemax, 1.0), (Entmax15, 2.0)])
def test_sparse_normalisers_are_exactly_one_hot_past_the_gap(
    module: type[Normaliser], one_hot_gap: float
) -> None:
    pytest.importorskip("entmax")
    rest = logits((1, 2, 31), 0.3, seed=1).clamp(-1, 0)
    top = torch.full((1, 2, 1), one_hot_gap, dtype=torch.float64)
    weights = module(1)(torch.cat([rest, top], dim=-1)).weights
    assert torch.equal(weights[..., -1], torch.ones(1, 2, dtype=torch.float64))
    assert torch.equal(weights[..., :-1], torch.zeros_like(rest))
    below = torch.tensor([[[0.0, one_hot_gap * 0.9, -5.0]]], dtype=torch.float64)
    weights = module(1)(below).weights
    assert 0 < float(weights[0, 0, 0]) < float(weights[0, 0, 1]) < 1
    assert float(weights[0, 0, 2]) == 0.0


# --- the oracle --------------------------------------------------------------------------


def as_rows(module: Normaliser) -> Callable[[torch.Tensor], torch.Tensor]:
    """``module`` applied along the last axis of a 1-D or 2-D tensor (one member).

    A float32 or float64 input runs a module converted to that dtype (SSMax's ``s``
    is a parameter: in float32 its ``β = s log n`` would be charged as a float64 error).
    """

    def normalise(x: torch.Tensor) -> torch.Tensor:
        work = module.to(x.dtype) if x.dtype in (torch.float32, torch.float64) else module
        with torch.no_grad():
            out = work(x.reshape(1, -1, x.shape[-1])).weights
        return out.reshape(x.shape)

    normalise.__name__ = normalise.__qualname__ = f"{type(module).__name__}.forward"
    return normalise


@pytest.mark.parametrize(
    ("module", "kind", "s", "dtypes"),
    [
        (AdaptiveTemperature(1), "adaptive_temperature", None, None),
        (ScalableSoftmax(1, s=0.75), "ssmax", 0.75, ("float16", "float32", "float64")),
        (LogN(1), "ssmax", 1.0, ("float32",)),
        (Softmax(1), "softmax", None, ("float32",)),
    ],
    ids=["adaptive", "ssmax", "logn", "softmax"],
)
def test_the_oracle_passes_the_torch_modules(
    module: Normaliser, kind: str, s: float | None, dtypes: tuple[str, ...] | None
) -> None:
    report = check_softmax(as_rows(module), kind=kind, library="torch", dtypes=dtypes, s=s)
    report.raise_if_failed()
    tested = {result.dtype for result in report.results}
    assert report.passed and tested == set(dtypes or LIBRARY_DTYPES["torch"])


def test_the_oracle_fails_the_ascending_port() -> None:
    report = check_softmax(
        as_rows(AscendingAdaptive(1)),
        kind="adaptive_temperature",
        library="torch",
        dtypes=["float64"],
        suites=["random"],
    )
    assert not report.passed
    assert "accuracy" in {r.name for r in report.failures}


def test_the_wrapper_takes_one_row_and_keeps_the_shape() -> None:
    fn = as_rows(AdaptiveTemperature(1))
    row = torch.tensor([2.0, 0.0, 0.0, 0.0])
    assert fn(row).shape == (4,)
    torch.testing.assert_close(fn(row), fn(row[None])[0])


# --- the registry ------------------------------------------------------------------------


def test_make_normaliser_builds_every_registered_normaliser() -> None:
    assert set(NORMALISERS) == {
        "softmax",
        "adaptive_temperature",
        "adaptive_refit",
        "ssmax",
        "logn",
        "entmax15",
        "sparsemax",
    }
    for name, cls in NORMALISERS.items():
        module = make_normaliser(name, 3)
        assert type(module) is cls and module.name == name and module.members == 3
        inference_only = name in ("adaptive_temperature", "adaptive_refit")
        assert module.train_with == ("softmax" if inference_only else name)
        assert module.softmax_family == (name not in ("entmax15", "sparsemax"))


@pytest.mark.parametrize("name", ["", "Softmax", "entmax", "temperature"])
def test_make_normaliser_rejects_unknown_names(name: str) -> None:
    with pytest.raises(ValueError, match="unknown normaliser"):
        make_normaliser(name, 1)


# --- bounded heads, the refit rule, padding ----------------------------------------------


@pytest.mark.parametrize("name", ["softcap2", "softcap0.5", "qknorm3", "qknorm4.25"])
def test_bounded_heads_keep_every_logit_below_their_cap(name: str) -> None:
    head = make_normaliser(name, 2)
    assert head.name == name and head.train_with == name and head.softmax_family
    cap = float(name.removeprefix("softcap").removeprefix("qknorm"))
    assert head.logit_bound == cap
    keys = torch.randn(2, 3, 50, 8, generator=torch.Generator().manual_seed(0)).double() * 100
    query = torch.randn(2, 8, generator=torch.Generator().manual_seed(1)).double() * 100
    logits = head.attention_logits(keys, query).detach()
    assert logits.shape == (2, 3, 50)
    assert bool((logits.abs() <= cap).all())
    assert float(logits.abs().max()) > 0.3 * cap  # the cap binds, it does not flatten


def test_softcap_is_cap_tanh_of_the_dot_product() -> None:
    keys = torch.randn(1, 2, 5, 4, generator=torch.Generator().manual_seed(2)).double()
    query = torch.randn(1, 4, generator=torch.Generator().manual_seed(3)).double()
    dot = torch.einsum("mbnd,md->mbn", keys, query) / 2  # √d = 2
    capped = make_normaliser("softcap3", 1).attention_logits(keys, query)
    torch.testing.assert_close(capped, 3 * torch.tanh(dot / 3))


def test_qknorm_is_the_learned_scale_times_the_cosine() -> None:
    head = make_normaliser("qknorm4", 1)
    head.scale_logit.data.fill_(1.0)
    keys = torch.randn(1, 2, 5, 4, generator=torch.Generator().manual_seed(4)).double()
    query = torch.randn(1, 4, generator=torch.Generator().manual_seed(5)).double()
    cosine = torch.nn.functional.cosine_similarity(keys, query[:, None, None, :], dim=-1)
    expected = 4 / (1 + math.exp(-1.0)) * cosine
    torch.testing.assert_close(head.attention_logits(keys, query).detach(), expected)


@pytest.mark.parametrize("name", ["softcap", "softcap0", "softcap2.50", "qknorm-1", "cap2"])
def test_bounded_names_are_checked(name: str) -> None:
    with pytest.raises(ValueError, match=r"unknown normaliser|write the cap"):
        make_normaliser(name, 1)


def test_display_names_come_from_the_classes() -> None:
    for name in (*NORMALISERS, "softcap2", "qknorm3"):
        described = make_normaliser(name, 1).describe()
        assert described["display_name"] and isinstance(described["display_name"], str)
    assert make_normaliser("adaptive_temperature", 1).describe()["display_name"] == "adaptive θ"
    assert make_normaliser("softcap2", 1).describe()["logit_bound"] == 2.0


def test_the_refit_rule_with_the_papers_coefficients_is_the_paper_rule() -> None:
    x = logits((2, 4, 40), 3.0, seed=11)
    paper = AdaptiveTemperature(2)(x)
    refit = make_normaliser("adaptive_refit", 2)(x)
    torch.testing.assert_close(refit.beta, paper.beta)
    torch.testing.assert_close(refit.weights, paper.weights)


def test_the_refit_rule_uses_each_members_coefficients() -> None:
    head = make_normaliser("adaptive_refit", 2)
    assert hasattr(head, "set_coefficients")
    head.set_coefficients([[0, 0, 0, 0, 1.5], [0, 0, 0, 0, 3.0]])
    x = logits((2, 4, 40), 0.1, seed=12)  # flat rows: entropy near log 40 > 1/2
    out = head(x)
    assert torch.allclose(out.beta[0], torch.full((4,), 1.5, dtype=torch.float64))
    assert torch.allclose(out.beta[1], torch.full((4,), 3.0, dtype=torch.float64))
    with pytest.raises(ValueError, match="rows of 5"):
        head.set_coefficients([[1.0, 2.0]])


@pytest.mark.parametrize("name", ["softmax", "ssmax", "logn", "entmax15", "sparsemax"])
def test_padding_gets_no_weight_and_no_nan_gradient(name: str) -> None:
    if name in ("entmax15", "sparsemax"):
        pytest.importorskip("entmax")
    head = make_normaliser(name, 1)
    real = torch.tensor([[[1.0, 0.2, -0.5]]], requires_grad=True)
    padded = torch.cat([real, torch.full((1, 1, 2), -math.inf)], dim=-1)
    out, alone = head(padded), head(real)
    torch.testing.assert_close(out.weights[..., :3], alone.weights)
    assert bool((out.weights[..., 3:] == 0).all())
    torch.testing.assert_close(out.beta, alone.beta)  # length scaling counts real items
    out.weights[0, 0, 0].backward()
    assert real.grad is not None and bool(torch.isfinite(real.grad).all())
    for parameter in head.parameters():
        assert parameter.grad is not None and bool(torch.isfinite(parameter.grad).all())
