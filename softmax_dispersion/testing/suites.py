"""The fixed input suites of :func:`~softmax_dispersion.testing.check_softmax`.

Five suites, each a list of :class:`Case` (named float64 rows, rounded to the tested
dtype by the battery, with a boolean mask for the cases that have masked entries):

``random``
    Seeded normal rows (``numpy.random.default_rng(seed)``) of lengths 1, 2, 3, 5, 7, 8,
    137, 1238, 2049 and 4096 at scales from 1e-5 to 30 and several offsets, one row of
    16384; the odd width of known CUDA bugs (:data:`ODD_WIDTHS`: 517, pytorch#143644,
    and odd in 513–1023 with ``n mod 32 != 31``, pytorch#147284) in four rows; and rows
    of vocabulary length (:data:`LONG_LENGTHS`: 32,000 with a small spread, so that
    16-bit running totals meet sums far above 2048, and 128,256 and 262,144 with
    entries more than 88 below the maximum, where a long-row path that takes
    ``log(exp(t)/S)`` underflows); and one call of 257 rows of 12 (:data:`MANY_ROWS`:
    past a grid of 64, 128 or 256 row programs).
``families``
    One row of every finite family of the registry
    :data:`softmax_dispersion.numerics.families.FAMILIES` (spike, dip, two-level,
    near-ties, a geometric ladder, consecutive floats, huge magnitudes, sentinel floors,
    long uniform rows, off-block lengths, half-masked rows, ...): a family added there is
    in this suite.
``bad_inputs``
    Every finite input of PAPER.md's table of bad inputs: uniform rows of 2049, 4096 and
    8192 (16-bit accumulation stalls at 2048), logits below −5e4 (online softmax with a
    finite starting max), ``finfo.min`` masks (a row of only ``finfo.min`` is a policy
    row: a fully masked row), gaps of 17 (float32) and 37 (float64) for
    log-softmax, logits near −2e4, logits past the overflow of ``exp`` (710 for float64,
    89 for float32, 12 for float16) for code without the max shift, the off-block
    lengths 137 and 1238; rows whose terms are just below half an ulp of the leading
    partial sum (a sum held in the format, in blocks of 16 or more, stalls on them);
    rows with subnormal outputs; logits near ±1e6 with the maximum's log-probability
    −0.0149 (``x − logsumexp(x)`` rounds it to 0.0 in float32); a plateau of 4096
    logits at 0 followed by 12,288 at −3.5 (a running total held in float16 passes 4096
    and then loses every later tile);
    rows near ``−finfo.max`` and ``+finfo.max`` (a unique
    maximum within ``2**-6`` of the format's largest value) at :data:`FINFO_LENGTHS`,
    where a scale ``β > 1`` applied before the max shift (``softmax(β·x)``) overflows:
    NaN for a finite input.
``masks``
    Partially masked rows, the case real attention code breaks on: finite logits with
    ``−inf`` entries (random masks of several densities, one visible entry, the
    largest logit masked), masks written as the sentinels ``finfo.min``, ``−1e4`` and
    ``−5e4``, visible logits below −5e4 (a sentinel mask above them takes the weight)
    and, in float32 and float64, below −1e6 and (one visible entry) −1e39 (a
    ``finfo.min`` of a narrower format used as the sentinel) and near −1e8 and −1e10
    (below the finite fills ``−1e7`` and ``−1e9``), and prefix and suffix
    masks whose edge lies off the block sizes (33 of 64, 137 of 256, 1238 of 2048).
    For ``kind="masked_softmax"`` the masked entries hold values the function must
    ignore (:func:`masked_input`).

``shapes``
    Arrays that are not a stack of rows: a square ``(16, 16)`` one (an implementation
    that reads a square input column-major, or normalises over the first axis) and a
    3-D ``(2, 3, 7)`` one (normalised over its last axis, not axis 1), each in a call
    of its own, and a ``(24, 16)`` input given as a transposed view (not contiguous: a
    kernel that reads its input's memory as contiguous reads the columns; numpy and
    torch, jax arrays have no strides).

The non-finite rows of the table (``+inf``, all ``−inf``, NaN, NaN among masks) and the
rows of only ``finfo.min`` (at every length of :func:`scale_lengths`) are policy cases:
:func:`policy_rows` (and :data:`MASKED_POLICY_ROWS` for the masked kind).  A row of
``finfo.min`` is a finite input: NaN there is an accuracy failure, not a policy.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from softmax_dispersion.numerics.rounding import float_format

__all__ = [
    "FINFO_LENGTHS",
    "LEADING_TILES",
    "LONG_LENGTHS",
    "MASKED_POLICY_ROWS",
    "ODD_WIDTHS",
    "POLICY_ROWS",
    "SUITES",
    "Case",
    "build_case",
    "build_suites",
    "masked_input",
    "near_finfo_rows",
    "policy_rows",
    "scale_lengths",
    "suite_case",
]

F64 = npt.NDArray[np.float64]
Bool = npt.NDArray[np.bool_]

RANDOM_LENGTHS = (1, 2, 3, 8, 137, 1238, 2049, 4096)
"""Row lengths of the random suite (plus one row of 16384 and :data:`ODD_LENGTHS`)."""
ODD_LENGTHS = (5, 7)
"""Odd row lengths of the random suite (their own generator)."""
ODD_WIDTHS = (517,)
"""Odd widths behind CUDA softmax bugs, four rows each: 517 is pytorch#143644's, and an
odd width in 513–1023 with ``n mod 32 != 31`` (517 mod 32 = 5), pytorch#147284's."""
LONG_LENGTHS = (32000, 128256, 262144)
"""Rows of vocabulary length (one each): beyond the 16,384 of the earlier suites."""
_LONG_SCALES = (0.5, 30.0, 30.0)


@dataclass(frozen=True)
class Case:
    """A named batch of input rows (float64, rows along the last axis).

    Attributes
    ----------
    name : str
        ``"suite/case"``, e.g. ``"bad_inputs/uniform_4096"``; rebuild it with
        :func:`build_case`.
    rows : numpy.ndarray
        Shape ``(batch, n)``: the logits as a plain softmax sees them (masked entries
        ``−inf`` or a sentinel).
    mask : numpy.ndarray or None
        Boolean, shaped like ``rows``: False at the masked entries; ``None`` when the
        case masks nothing.
    shape : tuple of int or None
        The shape the rows are given in, in a call of their own (a square or 3-D array
        whose last axis holds the rows); ``None``: stacked with the other rows of their
        length, as ``(batch, n)``.
    transposed : bool
        Given as a transposed view (its last two axes swapped in memory: not contiguous;
        numpy and torch, jax arrays have no strides).
    """

    name: str
    rows: F64
    mask: Bool | None = None
    shape: tuple[int, ...] | None = None
    transposed: bool = False

    @property
    def suite(self) -> str:
        """The suite the case belongs to."""
        return self.name.split("/", 1)[0]

    @property
    def visible(self) -> Bool:
        """The entries a masked softmax attends to (all, without a mask)."""
        return np.ones(self.rows.shape, dtype=bool) if self.mask is None else self.mask


def _random(dtype: str, seed: int) -> list[Case]:
    rng = np.random.default_rng(seed)
    # Small spreads too: an output that is merely close to uniform must show up.
    scales = np.array([0.5, 2.0, 8.0, 30.0, 1e-3, 1e-5, 0.05, 4.0])
    cases = []
    for n in RANDOM_LENGTHS:
        batch = 8 if n <= 1238 else 2
        scale = np.resize(scales, batch)[:, None]
        offset = rng.uniform(-10, 10, size=(batch, 1))
        cases.append(Case(f"random/n{n}", rng.standard_normal((batch, n)) * scale + offset))
    cases.append(Case("random/n16384", rng.standard_normal((1, 16384)) * 3.0))
    # Odd lengths (vector-tail remainders), from their own generator: the rows above
    # stay the ones earlier versions drew.
    odd = np.random.default_rng(seed + 5)
    for n in ODD_LENGTHS:
        rows = odd.standard_normal((8, n)) * scales[:, None] + odd.uniform(-10, 10, size=(8, 1))
        cases.append(Case(f"random/n{n}", rows))
    for n in ODD_WIDTHS:
        rows = odd.standard_normal((4, n)) * scales[:4, None] + odd.uniform(-10, 10, size=(4, 1))
        cases.append(Case(f"random/n{n}", rows))
    long = np.random.default_rng(seed + 6)
    for n, spread in zip(LONG_LENGTHS, _LONG_SCALES, strict=True):
        cases.append(Case(f"random/n{n}", long.standard_normal((1, n)) * spread))
    return [*cases, _many_rows(seed)]


MANY_ROWS = (257, 12)
"""The shape of ``random/rows_257``: one call of more rows than a grid of 64, 128 or 256
row programs holds (each row its own offset and spread), at a short length."""


def _many_rows(seed: int) -> Case:
    """257 rows of 12 (with their shifted and permuted copies, 1285 rows in one call).

    A kernel whose grid stops at 128 (or 64, 256) rows and hands the later rows an
    earlier row's maximum or normaliser shows: every row's sum is its own.
    """
    rng = np.random.default_rng(seed + 9)
    rows, n = MANY_ROWS
    spread = rng.uniform(0.5, 4.0, size=(rows, 1))
    return Case(
        f"random/rows_{rows}",
        rng.standard_normal((rows, n)) * spread + rng.uniform(-10, 10, (rows, 1)),
    )


_REQUIRED: dict[str, int] = {"n": 64, "delta": 10, "k_high": 5}
"""Values for the families' required parameters in the fixed suite."""
_OVERRIDES: dict[str, dict[str, object]] = {"huge_magnitude": {"scale": 1e4}}
"""Defaults that do not suit a fixed suite in every dtype (1e300 is not a float32)."""


def _family_row(name: str, dtype: str, seed: int) -> F64 | None:
    """One row of the registered family ``name`` in ``dtype``, or ``None`` (a policy row)."""
    from softmax_dispersion.numerics.families import FAMILIES

    family = FAMILIES[name]
    arguments: dict[str, object] = {}
    for parameter in family.parameters:
        if parameter in family.required:
            value = _REQUIRED[parameter]
            arguments[parameter] = max(value, family.min_n) if parameter == "n" else value
        elif parameter == "dtype":
            arguments[parameter] = dtype
        elif parameter == "seed":
            arguments[parameter] = seed
    arguments.update(_OVERRIDES.get(name, {}))
    row = np.asarray(family.build(**arguments).to_array(), dtype=np.float64)
    if np.isnan(row).any() or np.isposinf(row).any() or not np.isfinite(row).any():
        return None
    return row


def _families(dtype: str, seed: int) -> list[Case]:
    from softmax_dispersion.numerics.families import FAMILIES

    cases = []
    for name in FAMILIES:
        row = _family_row(name, dtype, seed)
        if row is not None:
            mask = np.isfinite(row)[None, :]
            cases.append(Case(f"families/{name}", row[None, :], None if mask.all() else mask))
    return cases


def _half_ulp_rows(dtype: str) -> list[Case]:
    """Rows whose terms ``c`` lie just below half an ulp of 1 in ``dtype``.

    With the maximum first, ``1 + c`` rounds back to 1 in the format: a sum held in the
    format stalls on every term after the maximum (a block of ``b`` loses ``(b − 1)c``,
    ``b·p/2`` units in the last place of the normaliser), while a sum held in float32
    for a 16-bit format, as the tolerance assumes, loses nothing.
    """
    precision = float_format(dtype).precision
    gap = precision * math.log(2) + 0.1
    cases = []
    for n in (64, 256):
        row = np.full((2, n), -gap)
        row[:, 0] = 0.0
        row[1, 0], row[1, 1] = -gap, 0.0  # the maximum second
        cases.append(Case(f"bad_inputs/half_ulp_terms_{n}", row))
    return cases


def _plateau_then_shelf() -> Case:
    """4096 logits at 0, then 12,288 at −3.5: a sum that passes 4096 before its small terms.

    A running total held in float16 (between tiles, or in blocks) reaches 4096, where
    float16's spacing is 4, and then loses every tile of 32 small terms (about 0.97 each
    tile): 8 % of the sum.  The same terms in another order, or summed in float32, lose
    nothing.  Uniform rows hide this: their tile sums are exact multiples of 32.
    """
    row = np.full((1, 16384), -3.5)
    row[0, :4096] = 0.0
    return Case("bad_inputs/plateau_then_shelf", row)


def _subnormal_rows(dtype: str) -> list[Case]:
    """Outputs across the subnormal range: gaps from ``−log(tiny)`` to ``−log(s_min)``."""
    fmt = float_format(dtype)
    low, high = -math.log(2.0**fmt.emin), -math.log(fmt.smallest_subnormal)
    row = np.concatenate([[0.0], -np.linspace(low - 0.5, high + 0.5, 31)])
    return [Case("bad_inputs/subnormal_outputs", row[None, :])]


FINFO_LENGTHS = (8, 82, 300)
"""Lengths of the rows of ``finfo.min`` and near ``±finfo.max``: where the scales of the
row kinds exceed 1, so that ``softmax(β·x)`` written literally (scale, then shift)
overflows.  A row of ``n`` equal logits has entropy ``log n``: the adaptive rule's ``β``
is 1.75 at ``n = 4``... 2.42 (its largest) at 82 and 1.5 at 300; SSMax's ``s·log n``
exceeds 1 at 8 for ``s >= 0.49``, at 300 for ``s >= 0.18``
(:func:`scale_lengths` adds a longer row for smaller ``s``)."""


def scale_lengths(s: float | None = None) -> tuple[int, ...]:
    """:data:`FINFO_LENGTHS` (and 4), plus SSMax's first length with ``s·log n >= 1.25``.

    Examples
    --------
    >>> scale_lengths(), scale_lengths(0.5), scale_lengths(0.125)
    ((4, 8, 82, 300), (4, 8, 82, 300), (4, 8, 82, 300, 22027))
    """
    lengths: tuple[int, ...] = (4, *FINFO_LENGTHS)
    if s is not None and s > 0:
        needed = math.ceil(math.exp(1.25 / s))
        if lengths[-1] < needed <= 262144:
            lengths = (*lengths, needed)
    return lengths


def near_finfo_rows(dtype: str, n: int) -> Case:
    """Two rows of ``n`` logits within ``2**-5`` of ``−finfo.max`` and of ``+finfo.max``.

    Row 0 has its maximum at ``−(1 − 2**-6)·finfo.max`` and the others between
    ``−(1 − 2**-7)·finfo.max`` and ``−finfo.max``; row 1 its maximum at
    ``+(1 − 2**-6)·finfo.max`` and the others between ``(1 − 2**-6)(1 − 2**-7)`` and
    ``(1 − 2**-5)`` times ``finfo.max``.  The maximum is unique in every format (two
    bfloat16 ulps above the next entry) and the gaps are huge, so a correct softmax is
    one-hot (every formulation, the log-sum-exp ones too), while ``β·x`` with
    ``β > 1.016`` overflows to ``−inf`` (a NaN row) or ``+inf`` (NaN too).

    Examples
    --------
    >>> case = near_finfo_rows("float16", 8)
    >>> case.name, case.rows[[0, 1, 0], [0, 0, -1]].tolist()
    ('bad_inputs/near_finfo_8', [-64480.5, 64480.5, -65504.0])
    """
    big = float_format(dtype).max_finite
    top = big * (1 - 2.0**-6)
    low = np.concatenate([[-top], np.linspace(-top * (1 + 2.0**-7), -big, n - 1)])
    high = np.concatenate([[top], np.linspace(top * (1 - 2.0**-7), big * (1 - 2.0**-5), n - 1)])
    return Case(f"bad_inputs/near_finfo_{n}", np.stack([low, high]))


def _bad_inputs(dtype: str, seed: int) -> list[Case]:
    fmt = float_format(dtype)
    big = fmt.max_finite
    rng = np.random.default_rng(seed + 1)
    cases = [
        Case(f"bad_inputs/uniform_{n}", np.array([[0.0] * n, [3.0] * n]))
        for n in (2049, 4096, 8192)
    ]
    below = -5e4 - 16.0 * np.floor(rng.uniform(0, 64, size=(2, 64)))
    below[:, 0] = -5e4
    cases.append(Case("bad_inputs/below_minus_5e4", below))
    masked = np.concatenate([rng.standard_normal((2, 8)) * 2, np.full((2, 8), -big)], axis=1)
    cases.append(Case("bad_inputs/finfo_min_masks", masked))
    cases.append(Case("bad_inputs/gap_17", np.array([[0.0] + [-17.5] * 15, [0.0] + [-20.0] * 15])))
    cases.append(Case("bad_inputs/gap_37", np.array([[0.0] + [-37.5] * 15, [0.0] + [-40.0] * 15])))
    near = np.array([[-2e4] * 8, [-2e4, -2e4 + 16, -2e4 + 32, -2e4 - 16] * 2])
    cases.append(Case("bad_inputs/near_minus_2e4", near))
    if big > 1e7:
        # log-softmax −0.0149 at the maximum, where float32's ulp is 0.0625: a log-sum-exp
        # rounded at the logits' magnitude turns it into 0.0 (x − logsumexp(x)).
        gaps = np.array([0.0, 4.2, 30.0, 40.0, 55.0, 60.0, 75.0, 80.0])
        cases.append(Case("bad_inputs/near_minus_1e6", np.stack([-1e6 - gaps, 1e6 - gaps])))
    for top in (12.0, 90.0, 711.0):
        if top + 1 < big:
            row = np.array([[top, top - 1, top - 2.5, top - 6, top - 0.5, top - 3, top - 1, top]])
            cases.append(Case(f"bad_inputs/no_max_shift_{int(top)}", row))
    for n in (137, 1238):
        cases.append(Case(f"bad_inputs/off_block_{n}", rng.standard_normal((4, n)) * 4.0))
    cases += [near_finfo_rows(dtype, n) for n in FINFO_LENGTHS]
    cases.append(_plateau_then_shelf())
    return cases + _half_ulp_rows(dtype) + _subnormal_rows(dtype)


def _with_mask(name: str, rows: F64, mask: Bool, fill: float = -math.inf) -> Case:
    return Case(name, np.where(mask, rows, fill), mask)


LEADING_TILES = (64, 128, 256)
"""Sizes of the fully masked leading tile of ``masks/leading_tile_*`` (flash-attention#2082)."""
FAR_BELOW = (1e8, 1e10)
"""Magnitudes of the visible logits of ``masks/visible_far_below_sentinels``."""


def _far_below_sentinels(dtype: str, rng: np.random.Generator) -> Case:
    """Visible logits near −1e8 and −1e10: below the finite fills ``−1e7`` and ``−1e9``.

    A masked entry filled with such a sentinel then lies above every visible logit and
    takes the weight.  Each row's maximum is unique and every other visible logit lies a
    multiple of ``max(48, ulp)`` below it: their terms (``≤ e^{-48}``) vanish beside 1, so
    ``max + log S`` rounds to the maximum and ``x − max`` is exact; the log-sum-exp and
    log-add-exp formulations, which lose ``u·|max e|`` in the exponent, keep every value.
    """
    rows = np.empty((len(FAR_BELOW), 64))
    mask = rng.uniform(size=rows.shape) < 0.5
    for r, magnitude in enumerate(FAR_BELOW):
        top = int(rng.integers(64))
        unit = max(48.0, float(np.spacing(np.array(magnitude, dtype=dtype))))
        rows[r] = -magnitude - unit * rng.integers(1, 8, size=64)
        rows[r, top] = -magnitude
        mask[r, top] = True
    return _with_mask("masks/visible_far_below_sentinels", rows, mask)


def _masks(dtype: str, seed: int) -> list[Case]:
    fmt = float_format(dtype)
    rng = np.random.default_rng(seed + 2)
    cases = []
    for n, density in ((64, 0.3), (137, 0.9), (1238, 0.5)):
        rows = rng.standard_normal((4, n)) * 3.0
        mask = rng.uniform(size=(4, n)) < density
        mask[:, 0] = True  # every row keeps a visible entry
        cases.append(_with_mask(f"masks/random_{n}", rows, mask))
    rows = rng.standard_normal((2, 32)) * 2.0
    one = np.zeros((2, 32), dtype=bool)
    one[0, 5] = one[1, 31] = True
    cases.append(_with_mask("masks/one_visible", rows, one))
    hidden_max = rows.copy()
    hidden_max[:, 3] = 40.0
    keep = np.ones((2, 32), dtype=bool)
    keep[:, 3] = False
    cases.append(_with_mask("masks/largest_masked", hidden_max, keep))
    for label, sentinel in (
        ("finfo_min", -fmt.max_finite),
        ("minus_1e4", -1e4),
        ("minus_5e4", -5e4),
    ):
        rows = rng.standard_normal((2, 64)) * 2.0
        mask = rng.uniform(size=(2, 64)) < 0.6
        mask[:, 0] = True
        cases.append(_with_mask(f"masks/sentinel_{label}", rows, mask, sentinel))
    deep = -5e4 - 16.0 * np.floor(rng.uniform(0, 16, size=(2, 64)))
    deep_mask = rng.uniform(size=(2, 64)) < 0.5
    deep_mask[:, 0] = True
    cases.append(_with_mask("masks/visible_below_minus_5e4", deep, deep_mask))
    # Visible logits below a narrower format's finfo.min (float16's −65504 in 32 bits,
    # float32's −3.4e38 in float64): a sentinel of the wrong format becomes the maximum.
    # Only where u·|logit| is small (float32, float64) and, below −3.4e38, with a single
    # visible entry: there the log-sum-exp formulations lose every other value themselves.
    if fmt.unit_roundoff <= 2.0**-24:
        low = -1e6 + rng.standard_normal((2, 64)) * 4.0
        low_mask = rng.uniform(size=low.shape) < 0.5
        low_mask[:, 0] = True
        if fmt.max_finite > 1e39:
            low = np.concatenate([low, np.full((1, 64), -1e39)])
            single = np.zeros((1, 64), dtype=bool)
            single[0, 7] = True
            low_mask = np.concatenate([low_mask, single])
        cases.append(_with_mask("masks/visible_below_narrow_sentinels", low, low_mask))
        cases.append(_far_below_sentinels(dtype, np.random.default_rng(seed + 3)))
    for n, width in ((64, 33), (256, 137), (2048, 1238)):
        rows = rng.standard_normal((2, n)) * 2.0
        mask = np.zeros((2, n), dtype=bool)
        mask[0, :width] = True  # a prefix (causal row)
        mask[1, n - width :] = True  # a suffix (left padding)
        cases.append(_with_mask(f"masks/edge_{width}_of_{n}", rows, mask))
    # Their own generator: the rows above stay the ones earlier versions drew.
    tiles = np.random.default_rng(seed + 8)
    for tile in LEADING_TILES:
        rows = -130.0 + tiles.uniform(-30, 30, size=(2, tile + 64))
        mask = np.ones(rows.shape, dtype=bool)
        mask[:, :tile] = False
        cases.append(_with_mask(f"masks/leading_tile_{tile}", rows, mask))
    return cases


SHAPES = ((16, 16), (2, 3, 7))
"""The shapes of the ``shapes`` suite's calls (their last axis holds the rows)."""


def _shapes(dtype: str, seed: int) -> list[Case]:
    rng = np.random.default_rng(seed + 4)
    cases = []
    for shape in SHAPES:
        n = shape[-1]
        rows = rng.standard_normal((math.prod(shape) // n, n)) * 3.0
        label = "x".join(map(str, shape))
        cases.append(
            Case(f"shapes/{'square' if len(shape) == 2 else 'array'}_{label}", rows, shape=shape)
        )
    # a transposed view (x.mT of a (16, 24) array): a kernel that reads its input's memory
    # as if it were contiguous reads the columns
    rows = rng.standard_normal((24, 16)) * 3.0
    cases.append(Case("shapes/transposed_24x16", rows, shape=(24, 16), transposed=True))
    return cases


SUITES: dict[str, Callable[[str, int], list[Case]]] = {
    "random": _random,
    "families": _families,
    "bad_inputs": _bad_inputs,
    "masks": _masks,
    "shapes": _shapes,
}
"""The suites by name."""

POLICY_ROWS: dict[str, list[float]] = {
    "+inf entry": [math.inf, 0.0, 1.0, 2.0],
    "all -inf row": [-math.inf] * 4,
    "finfo.min row": [-math.inf] * 4,  # placeholder: -finfo.min of the dtype, see policy_rows
    "NaN in a row": [1.0, math.nan, 2.0, 3.0],
    "NaN in a masked position": [1.0, 2.0, -math.inf, math.nan],
}
"""The rows whose outputs are policies (reported, not failed): non-finite logits, and a
row of only ``finfo.min`` (a fully masked row written with the sentinel: the math path
gives the uniform limit, fused kernels NaN, a log-sum-exp rounded at that magnitude
ones)."""


def policy_rows(dtype: str) -> dict[str, list[float]]:
    """:data:`POLICY_ROWS` with the ``finfo.min`` row in ``dtype``.

    Examples
    --------
    >>> policy_rows("float16")["finfo.min row"]
    [-65504.0, -65504.0, -65504.0, -65504.0]
    """
    rows = dict(POLICY_ROWS)
    rows["finfo.min row"] = [-float_format(dtype).max_finite] * 4
    return rows


MASKED_POLICY_ROWS: dict[str, tuple[list[float], list[bool]]] = {
    "fully masked row": ([1.0, 2.0, 3.0, 4.0], [False] * 4),
    "NaN under the mask": ([1.0, 2.0, math.nan, 3.0], [True, True, False, True]),
    "+inf under the mask": ([1.0, 2.0, math.inf, 3.0], [True, True, False, True]),
    "+inf entry": ([math.inf, 0.0, 1.0, 2.0], [True] * 4),
    "NaN in a row": ([1.0, math.nan, 2.0, 3.0], [True] * 4),
}
"""The policy rows of ``kind="masked_softmax"``: ``(x, mask)``, mask True where visible."""


def masked_input(case: Case, dtype: str) -> F64:
    """The logits a masked softmax ``fn(x, mask)`` gets for ``case``.

    The masked entries hold values it must ignore: in turn the largest finite value of
    ``dtype`` (``x + mask_bias`` code turns it into a real logit), 0, and the value a
    plain softmax sees there (``−inf`` or the case's sentinel).

    Examples
    --------
    >>> case = Case("x/y", np.array([[1.0, -np.inf, -np.inf, -np.inf]]),
    ...             np.array([[True, False, False, False]]))
    >>> masked_input(case, "float16").tolist()
    [[1.0, 0.0, -inf, 65504.0]]
    """
    if case.mask is None:
        return case.rows
    hidden = np.resize(np.array([float_format(dtype).max_finite, 0.0, np.nan]), case.rows.shape)
    hidden = np.where(np.isnan(hidden), case.rows, hidden)
    return np.where(case.mask, case.rows, hidden)


def build_suites(dtype: str, names: Iterable[str] | None = None, seed: int = 0) -> list[Case]:
    """The cases of the named suites (all by default) for ``dtype``.

    Examples
    --------
    >>> cases = build_suites("float32", ["bad_inputs"])
    >>> cases[1].name, cases[1].rows.shape
    ('bad_inputs/uniform_4096', (2, 4096))
    """
    chosen = list(SUITES) if names is None else list(names)
    unknown = [name for name in chosen if name not in SUITES]
    if unknown:
        raise ValueError(f"unknown suite(s) {', '.join(unknown)}; known: {', '.join(SUITES)}")
    cases: list[Case] = []
    for name in chosen:
        cases.extend(SUITES[name](dtype, seed))
    return cases


def suite_case(name: str, dtype: str = "float32", seed: int = 0) -> Case:
    """The case called ``name`` (``"suite/case"``), as the battery built it (rows and mask).

    Examples
    --------
    >>> case = suite_case("masks/one_visible", "float32")
    >>> case.rows.shape, int(case.visible.sum())
    ((2, 32), 2)
    """
    suite = name.split("/", 1)[0]
    found = re.fullmatch(r"bad_inputs/near_finfo_(\d+)", name)
    if found:  # every length a scale needs, not only the suite's own
        return near_finfo_rows(dtype, int(found.group(1)))
    for case in build_suites(dtype, [suite], seed):
        if case.name == name:
            return case
    raise ValueError(f"no case called {name!r}")


def build_case(name: str, dtype: str = "float32", seed: int = 0) -> F64:
    """The rows of the case called ``name`` (``"suite/case"``), as the battery built them.

    Examples
    --------
    >>> build_case("bad_inputs/gap_17")[0, :3].tolist()
    [0.0, -17.5, -17.5]
    """
    return suite_case(name, dtype, seed).rows
