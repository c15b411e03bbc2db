"""The fixed input suites of the VJP kinds: ``fn(x, g)`` for softmax and log-softmax.

Each :class:`VJPCase` holds float64 logits ``x`` (rows along the last axis, ``−inf``
allowed) and an upstream gradient ``g`` of the same shape, rounded to the tested dtype by
the battery.  Five suites:

``random``
    Seeded normal rows of 1, 2, 7, 137 and 1238 entries at several spreads (33 rows per
    call up to 137 entries: more than a group of 8 or 16), normal gradients, rows far
    apart from each other, logits past the overflow of the format's ``exp`` (code
    that recomputes the weights without the max shift overflows), and one call of 257
    rows of 24 (past a grid of 64, 128 or 256 row programs).
``long``
    Rows of 4096 entries (torch's own float64 backward must pass there) and 8192, and
    uniform rows of 4096 with a gradient of one sign (``⟨g, p⟩ ≈ 1.5`` summed from 4096
    terms of ``1.5/4096``: a float16 accumulator stalls at 1); in float16 and float32 one
    row of 32,000 (a vocabulary) with a gradient of one sign, where a reduction over
    chunks of the row that drops the sum across chunks shows.
``neg_inf``
    Logits of ``−inf`` (their weight and their softmax VJP entry are exactly 0; the
    log-softmax VJP entry is exactly ``g``): random positions, a leading block of 128.
``cancellation``
    Near one-hot rows with ``g`` nearly constant, so that ``g − ⟨g, p⟩`` cancels (the
    scale ``p_i(|g_i| + Σ_j p_j|g_j|)`` keeps the allowance honest there), one-hot
    gradients (cross-entropy's), and gradients spanning ``10⁻³`` to ``10³``.
``shapes``
    A 3-D input ``(2, 3, 7)``, normalised over its last axis.

A row of only ``−inf`` is a policy input (:func:`vjp_policy_cases`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from softmax_dispersion.numerics.rounding import float_format

__all__ = ["SUITE_BUILDERS", "VJP_SUITES", "VJPCase", "vjp_policy_cases", "vjp_suites"]

F64 = npt.NDArray[np.float64]


@dataclass(frozen=True)
class VJPCase:
    """One VJP input: ``fn(x, g)``.

    Attributes
    ----------
    name : str
        ``"suite/case"``.
    x, g : numpy.ndarray
        Float64 logits and upstream gradient, the same shape (rows along the last axis).
    """

    name: str
    x: F64
    g: F64

    @property
    def suite(self) -> str:
        """The suite the case belongs to."""
        return self.name.split("/", 1)[0]


def _random(dtype: str, seed: int) -> list[VJPCase]:
    rng = np.random.default_rng(seed + 20)
    spreads = np.array([0.5, 2.0, 6.0, 1e-3, 4.0, 1.0, 10.0, 0.05])
    if float_format(dtype).precision < 24:
        spreads = np.minimum(spreads, 3.0)  # weights stay in the 16-bit normal range
    cases = []
    for n in (1, 2, 7, 137, 1238):
        # more rows than a group of 8 (or 16) per call: a per-row term that later groups
        # take from an earlier row shows; 33 rows leave a partial group
        rows = 33 if n <= 137 else 8
        scale = np.resize(spreads, rows)[:, None]
        x = rng.standard_normal((rows, n)) * scale + rng.uniform(-5, 5, size=(rows, 1))
        g = rng.standard_normal((rows, n))
        cases.append(VJPCase(f"random/n{n}", x, g))
    step = 4.0 if dtype == "float16" else 50.0
    apart = rng.standard_normal((4, 32)) - step * np.arange(3, -1, -1)[:, None]  # lowest first
    cases.append(VJPCase("random/rows_apart", apart, rng.standard_normal((4, 32))))
    return [*cases, _past_overflow(dtype, seed), _many_rows(seed)]


MANY_ROWS = 257
"""The rows of ``random/rows_257``: past a grid of 64, 128 or 256 row programs."""


def _many_rows(seed: int) -> VJPCase:
    """257 short rows in one call, each with its own offset and gradient.

    A kernel whose row programs stop at a grid size (64, 128, 256) and hand the later
    rows an earlier row's ``⟨g, p⟩`` or ``Σg`` shows: each row's term is its own.
    """
    rng = np.random.default_rng(seed + 26)
    x = rng.standard_normal((MANY_ROWS, 24)) * 2.0 + rng.uniform(-5, 5, size=(MANY_ROWS, 1))
    g = rng.standard_normal((MANY_ROWS, 24)) + rng.uniform(-2, 2, size=(MANY_ROWS, 1))
    return VJPCase(f"random/rows_{MANY_ROWS}", x, g)


EXP_OVERFLOW = {"float16": 12.0, "bfloat16": 90.0, "float32": 90.0, "float64": 711.0}
"""Logits past the overflow of each format's ``exp``: code without the max shift fails."""


def _past_overflow(dtype: str, seed: int) -> VJPCase:
    rng = np.random.default_rng(seed + 25)
    x = EXP_OVERFLOW[dtype] + rng.uniform(0, 2, size=(4, 16))
    return VJPCase("random/past_exp_overflow", x, rng.standard_normal((4, 16)))


def _long(dtype: str, seed: int) -> list[VJPCase]:
    rng = np.random.default_rng(seed + 21)
    cases = []
    for n, rows in ((4096, 4), (8192, 2)):
        x = rng.standard_normal((rows, n)) * 2.0
        g = rng.standard_normal((rows, n))
        cases.append(VJPCase(f"long/n{n}", x, g))
    # uniform weights with a gradient of one sign: ⟨g, p⟩ ≈ 1.5 is a sum of 4096 terms
    # 1.5/4096 each, under half an ulp of float16 at 1 to 2: a float16 accumulator stalls
    # at 1.  (With g ≈ 1 it stalls only near 1 itself, an error of 1.4% of each weight,
    # inside T15's allowance of 7.9% there: T12's default model bounds each float16
    # weight of that row by 2.4%, the log-sum-exp-first form's, and no check can ask less.)
    x = np.zeros((2, 4096))
    g = 1.5 + 1e-2 * rng.standard_normal((2, 4096))
    cases.append(VJPCase("long/uniform_4096_one_sign", x, g))
    if dtype in VOCABULARY_DTYPES:
        cases.append(_vocabulary(seed))
    return cases


VOCABULARY_LENGTH = 32000
"""The length of ``long/vocabulary_32000``: an LM head's vocabulary (cross-entropy's VJP)."""
VOCABULARY_DTYPES = ("float16", "float32")
"""The dtypes that hold it (one row: the other two formats add time, not another bug)."""


def _vocabulary(seed: int) -> VJPCase:
    """One row of 32,000 logits with a gradient of one sign.

    A kernel that reduces ``⟨g, p⟩`` or ``Σg`` over chunks of the row (8192 entries, say)
    and drops the reduction across chunks is off by the other chunks' share: with ``g``
    of one sign no chunk's share cancels another's.
    """
    rng = np.random.default_rng(seed + 27)
    x = rng.standard_normal((1, VOCABULARY_LENGTH)) * 2.0
    g = 1.0 + 0.5 * rng.uniform(size=(1, VOCABULARY_LENGTH))
    return VJPCase(f"long/vocabulary_{VOCABULARY_LENGTH}", x, g)


def _neg_inf(dtype: str, seed: int) -> list[VJPCase]:
    rng = np.random.default_rng(seed + 22)
    x = rng.standard_normal((6, 137)) * 2.0
    x[rng.uniform(size=x.shape) < 0.3] = -np.inf
    x[:, 0] = 0.5
    g = rng.standard_normal(x.shape)
    cases = [VJPCase("neg_inf/random", x, g)]
    x = rng.standard_normal((4, 384)) * 2.0
    x[:, :128] = -np.inf
    cases.append(VJPCase("neg_inf/leading_block_128", x, rng.standard_normal(x.shape)))
    return cases


def _cancellation(dtype: str, seed: int) -> list[VJPCase]:
    rng = np.random.default_rng(seed + 23)
    gap = 8.0 if float_format(dtype).precision < 24 else 20.0
    x = np.full((4, 64), -gap) + rng.uniform(-1, 1, size=(4, 64))
    x[:, 0] = 0.0
    g = 3.0 + 1e-3 * rng.standard_normal((4, 64))
    cases = [VJPCase("cancellation/near_one_hot", x, g)]
    x = rng.standard_normal((4, 50)) * 3.0
    onehot = np.zeros((4, 50))
    onehot[np.arange(4), rng.integers(0, 50, size=4)] = -1.0
    cases.append(VJPCase("cancellation/one_hot_gradient", x, onehot))
    g = rng.standard_normal((4, 100)) * 10.0 ** rng.uniform(-3, 3, size=(4, 100))
    cases.append(VJPCase("cancellation/mixed_magnitudes", rng.standard_normal((4, 100)) * 2, g))
    return cases


def _shapes(dtype: str, seed: int) -> list[VJPCase]:
    rng = np.random.default_rng(seed + 24)
    return [
        VJPCase("shapes/three_d", rng.standard_normal((2, 3, 7)), rng.standard_normal((2, 3, 7)))
    ]


SUITE_BUILDERS: dict[str, Callable[[str, int], list[VJPCase]]] = {
    "random": _random,
    "long": _long,
    "neg_inf": _neg_inf,
    "cancellation": _cancellation,
    "shapes": _shapes,
}
"""The VJP suites by name: ``builder(dtype, seed)`` → cases."""
VJP_SUITES = tuple(SUITE_BUILDERS)
"""The VJP suites' names, in order."""


def check_vjp_suite_names(suites: list[str] | tuple[str, ...] | None) -> list[str]:
    """The suite names, checked (all when ``None``).

    Raises
    ------
    ValueError
        For an unknown name or an empty selection.
    """
    names = list(VJP_SUITES if suites is None else suites)
    if not names:
        raise ValueError("suites is empty: choose at least one of " + ", ".join(VJP_SUITES))
    unknown = [name for name in names if name not in SUITE_BUILDERS]
    if unknown:
        raise ValueError(f"unknown VJP suite {unknown[0]!r}; known: {', '.join(VJP_SUITES)}")
    return names


def vjp_suites(
    dtype: str, suites: list[str] | tuple[str, ...] | None = None, seed: int = 0
) -> list[VJPCase]:
    """The cases of ``suites`` (all by default) for ``dtype``.

    Examples
    --------
    >>> [c.name for c in vjp_suites("float32", ["neg_inf"])]
    ['neg_inf/random', 'neg_inf/leading_block_128']
    """
    names = check_vjp_suite_names(suites)
    float_format(dtype)
    return [case for name in names for case in SUITE_BUILDERS[name](dtype, seed)]


def vjp_policy_cases(dtype: str) -> dict[str, VJPCase]:
    """The inputs whose outputs are named, not judged: ``all -inf row``.

    Examples
    --------
    >>> list(vjp_policy_cases("float32"))
    ['all -inf row']
    """
    x = np.array([[0.0, 1.0, -1.0, 2.0], [-np.inf] * 4])
    g = np.array([[1.0, -2.0, 0.5, 3.0], [1.0, -2.0, 0.5, 3.0]])
    return {"all -inf row": VJPCase("policy/all_minus_inf_row", x, g)}
