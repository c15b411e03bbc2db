"""The fixed input suites of the attention kind: the inputs fused kernels meet.

Each :class:`AttentionCase` holds float64 ``q``, ``k``, ``v`` (rounded to the tested dtype
by the battery), an optional mask (boolean: True takes part; or float: added to the
scores, in the tested dtype), ``is_causal`` and ``scale``.  Seven suites:

``random``
    Seeded normal inputs from one key to 1238 keys (an off-block length), head sizes 8 to
    64, several heads and batches; rows lifted 40 apart by a constant bias each.
``long``
    Near-uniform weights over positive values, on which a weighted sum held in 16 bits
    stalls (:data:`LONG_KEYS`: 4096 and 8192 keys in 16 bits, 4096 in float32), sharp
    weights over 4096 keys (every dtype), and in float32 sharp weights over 16,384 keys
    whose second half scores 2 higher (a split of the keys at 8192 combined without
    rescaling by each split's maximum fails).
``masks``
    Masks whose edges lie at 137 of 256 and 1238 of 2048 keys (off the tile sizes),
    fully masked leading tiles (64, 128, 256 keys) before visible scores near −100 (an
    online softmax whose running maximum starts at 0 underflows there; not in bfloat16,
    where no answer is vouched for at that size), random masks of
    several densities, causal masks (square and ``L < S``, top-left aligned), additive
    float masks (``−inf`` and ALiBi-like finite biases), keys masked by ``finfo.min``,
    and a batch where one batch element and one query row are fully masked (they must
    not contaminate the others).
``large_scores``
    Scores near ``10⁴`` (float32, float64; 30 in float16 and 4 in bfloat16, where a
    larger score is not held precisely enough for any answer to be vouched for) with
    near-ties, and masked keys whose raw scores lie ``2·10⁴`` above the visible ones (a
    boolean mask turned into a ``−1e4`` bias lets them through).
``scales``
    Explicit scales 0.3 and 0.0 (honoured as 0: each row the mean of its values), and
    0.3 together with a causal mask and with a float mask (a kernel path of their own).
``tiles``
    Shapes that cross the tiles and grids of fused kernels: 160 query rows, head sizes
    128 and 100 (not a multiple of 8), six heads with their own values, two batch
    elements of 12 heads (24 programs, past a head index kept modulo 8 and a grid of 16
    batch×head programs), and causal
    masks over 160 keys with two batch elements, ``L > S`` (96 × 40) and ``L < S``
    (24 × 144), top-left aligned as torch's ``is_causal``.
``shapes``
    Arrays outside the core contract ``(B, H, L, E)`` with ``Ev = E``: 3-D inputs, a
    value size other than ``E``, ``L ≠ S``, a mask broadcast over heads, and batch
    dimensions of ``k``, ``v`` and the mask broadcast to ``q``'s.  Checked where the
    implementation takes them (some fused kernels only take 4-D inputs with ``Ev = E``).

The fully masked rows and the rows of ``finfo.min`` are *policy* inputs
(:func:`policy_cases`): their outputs are named, not judged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from softmax_dispersion.numerics.rounding import float_format

__all__ = [
    "ATTENTION_SUITES",
    "SUITE_BUILDERS",
    "AttentionCase",
    "attention_suites",
    "check_suite_names",
    "policy_cases",
]

F64 = npt.NDArray[np.float64]
Bool = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class AttentionCase:
    """One attention input: ``fn(q, k, v, attn_mask, is_causal, scale)``.

    Attributes
    ----------
    name : str
        ``"suite/case"``.
    q, k, v : numpy.ndarray
        Float64 values, ``(..., L, E)``, ``(..., S, E)``, ``(..., S, Ev)``.
    mask : numpy.ndarray or None
        Boolean (True: takes part) or float64 (added to the scores; rounded to the
        tested dtype).
    is_causal : bool
        Top-left aligned causal masking.
    scale : float or None
        The scale (``None``: ``1/√E``).
    core : bool
        Within the core contract (4-D, ``Ev = E``): every implementation must take it.
    recipe : tuple of str
        For a case derived from a suite's case (keys permuted, a row alone): Python
        lines that turn the suite case's ``q, k, v, mask`` into this one (reproducers).
    """

    name: str
    q: F64
    k: F64
    v: F64
    mask: npt.NDArray[Any] | None = None
    is_causal: bool = False
    scale: float | None = None
    core: bool = True
    recipe: tuple[str, ...] = ()

    @property
    def suite(self) -> str:
        """The suite the case belongs to."""
        return self.name.split("/", 1)[0]

    @property
    def base(self) -> str:
        """The name of the suite case this one is derived from (itself if none)."""
        return self.name.split(" ", 1)[0]


def _normal(rng: np.random.Generator, b: int, h: int, length: int, dims: int, size: float) -> F64:
    return rng.standard_normal((b, h, length, dims)) * size


def _random(dtype: str, seed: int) -> list[AttentionCase]:
    rng = np.random.default_rng(seed + 10)
    cases = []
    # bfloat16 holds a score of scale·Σ|q k| ≈ 10 to ±0.2 (T14's c·u term): smaller inputs
    damp = 0.7 if dtype == "bfloat16" else 1.0
    for b, h, length, keys, dims, size in (
        (1, 1, 1, 1, 8, 1.0),
        (2, 3, 5, 7, 16, 1.0),
        (2, 2, 8, 137, 64, 1.5 * damp),
        (1, 2, 8, 1238, 64, 1.0 * damp),
    ):
        q = _normal(rng, b, h, length, dims, size)
        k = _normal(rng, b, h, keys, dims, size)
        v = _normal(rng, b, h, keys, dims, 1.0)
        cases.append(AttentionCase(f"random/s{keys}_e{dims}", q, k, v))
    # rows 40 apart, the first the lowest (a float bias constant along each row: the exact
    # answer ignores it): a maximum taken across rows underflows the lower rows
    q = _normal(rng, 1, 2, 4, 16, 1.0)
    k = _normal(rng, 1, 2, 24, 16, 1.0)
    v = _normal(rng, 1, 2, 24, 16, 1.0)
    apart = np.broadcast_to(-40.0 * np.arange(3, -1, -1)[:, None], (4, 24)).copy()
    cases.append(AttentionCase("random/rows_apart", q, k, v, apart))
    return cases


LONG_KEYS = {"float16": (4096, 8192), "bfloat16": (4096, 8192), "float32": (4096,), "float64": ()}
"""The key lengths of the ``long`` suite's near-uniform rows per dtype (16-bit accumulation)."""
SPLIT_KEYS = 16384
"""The keys of ``long/sharp_16384`` (float32): past a split of the keys at 8192."""


def _long(dtype: str, seed: int) -> list[AttentionCase]:
    rng = np.random.default_rng(seed + 11)
    cases = []
    for keys in LONG_KEYS[dtype]:
        q = _normal(rng, 1, 1, 4, 64, 0.05)
        k = _normal(rng, 1, 1, keys, 64, 0.05)
        v = 1.0 + 0.25 * rng.standard_normal((1, 1, keys, 64))
        cases.append(AttentionCase(f"long/uniform_{keys}", q, k, v))
    q = _normal(rng, 1, 2, 4, 64, 1.0)
    k = _normal(rng, 1, 2, 4096, 64, 1.0)
    v = _normal(rng, 1, 2, 4096, 64, 1.0)
    cases.append(AttentionCase("long/sharp_4096", q, k, v))
    if dtype == "float32":
        cases.append(_split_keys(seed))
    return cases


def _split_keys(seed: int) -> AttentionCase:
    """Sharp scores over 16,384 keys, the larger half in the second 8192.

    A split-K kernel (flash decoding) whose partial results are combined without
    rescaling by each split's maximum weighs the splits wrongly: the keys of the second
    half score 2 higher, so its maximum is far from the first half's.
    """
    rng = np.random.default_rng(seed + 18)
    q = _normal(rng, 1, 1, 4, 64, 1.0)
    q[..., 0] = 8.0  # with k's first entry: +2 on every score of the second half
    k = _normal(rng, 1, 1, SPLIT_KEYS, 64, 1.0)
    k[..., 0] = 0.0
    k[..., SPLIT_KEYS // 2 :, 0] = 2.0
    v = _normal(rng, 1, 1, SPLIT_KEYS, 64, 1.0)
    return AttentionCase(f"long/sharp_{SPLIT_KEYS}", q, k, v)


def _planted(rng: np.random.Generator, a: F64, slopes: F64, dims: int = 8) -> tuple[F64, F64]:
    """``q``, ``k`` whose scores at scale 1 are ``a_j + t_i·slope_j`` (plus ``10⁻⁴`` noise).

    ``a`` and ``slopes`` are ``(..., S)``; the queries' ``t_i`` are 4 values in ``[−1, 1]``.
    """
    shape = a.shape[:-1]
    keys = a.shape[-1]
    t = np.linspace(-1.0, 1.0, 4)
    q = np.zeros((*shape, 4, dims))
    q[..., 0] = 1.0
    q[..., 1] = t
    q[..., 2:] = 0.01 * rng.standard_normal((*shape, 4, dims - 2))
    k = np.zeros((*shape, keys, dims))
    k[..., 0] = a
    k[..., 1] = slopes
    k[..., 2:] = 0.01 * rng.standard_normal((*shape, keys, dims - 2))
    return q, k


def _masks(dtype: str, seed: int) -> list[AttentionCase]:
    rng = np.random.default_rng(seed + 12)
    fmt = float_format(dtype)
    cases = []
    # mask edges off the tile sizes: the first 137 of 256 keys, the first 1238 of 2048
    for visible, keys in ((137, 256), (1238, 2048)):
        q = _normal(rng, 1, 2, 4, 64, 1.0)
        k = _normal(rng, 1, 2, keys, 64, 1.0)
        v = _normal(rng, 1, 2, keys, 64, 1.0)
        mask = np.zeros((4, keys), dtype=bool)
        mask[:, :visible] = True
        cases.append(AttentionCase(f"masks/edge_{visible}_of_{keys}", q, k, v, mask))
        suffix = ~mask
        suffix[:, -1] = True
        cases.append(AttentionCase(f"masks/after_{visible}_of_{keys}", q, k, v, suffix))
    # fully masked leading tiles (−inf), then visible scores near −100 (below float32's
    # exp range once shifted by a maximum taken as 0), the offset carried by the float
    # mask; not in bfloat16, whose scores near 100 are held to ±0.25 only (T14 vouches
    # for nothing there: the other formats catch the bug)
    for lead in (64, 128, 256) if dtype != "bfloat16" else ():
        keys = lead + 192
        q = _normal(rng, 1, 1, 4, 16, 0.3)
        k = _normal(rng, 1, 1, keys, 16, 0.3)
        v = _normal(rng, 1, 1, keys, 16, 1.0)
        offset = -100.0 - rng.uniform(0, 3, size=(4, keys))
        offset[:, :lead] = -np.inf
        cases.append(AttentionCase(f"masks/leading_tile_{lead}", q, k, v, offset))
    for density in (0.3, 0.9):
        q = _normal(rng, 2, 2, 8, 32, 1.0)
        k = _normal(rng, 2, 2, 137, 32, 1.0)
        v = _normal(rng, 2, 2, 137, 32, 1.0)
        mask = rng.uniform(size=(2, 2, 8, 137)) < density
        mask[..., 0] = True
        cases.append(AttentionCase(f"masks/random_{density:g}", q, k, v, mask))
    for length, keys in ((64, 64), (8, 64)):
        q = _normal(rng, 1, 2, length, 16, 1.0)
        k = _normal(rng, 1, 2, keys, 16, 1.0)
        v = _normal(rng, 1, 2, keys, 16, 1.0)
        cases.append(AttentionCase(f"masks/causal_{length}x{keys}", q, k, v, is_causal=True))
    # additive float masks: −inf and finite ALiBi-like biases
    q = _normal(rng, 1, 2, 8, 16, 1.0)
    k = _normal(rng, 1, 2, 40, 16, 1.0)
    v = _normal(rng, 1, 2, 40, 16, 1.0)
    slopes = np.array([0.5, 0.125])[None, :, None, None]
    distance = np.arange(40)[None, :] - np.arange(8)[:, None]
    bias = -slopes * np.abs(distance)
    bias = np.where(rng.uniform(size=(1, 2, 8, 40)) < 0.2, -np.inf, bias)
    bias[..., 0] = 0.0
    cases.append(AttentionCase("masks/float_bias", q, k, v, bias))
    sentinel = np.zeros((8, 40))
    sentinel[:, 20:] = -fmt.max_finite  # finfo.min of the tested dtype: an input, not a mask
    cases.append(AttentionCase("masks/finfo_min_keys", q, k, v, sentinel))
    cases.append(_isolation(rng))
    return cases


def _isolation(rng: np.random.Generator) -> AttentionCase:
    """A batch with one fully masked batch element and one fully masked query row."""
    q = _normal(rng, 3, 2, 4, 16, 1.0)
    k = _normal(rng, 3, 2, 24, 16, 1.0)
    v = _normal(rng, 3, 2, 24, 16, 1.0)
    mask = rng.uniform(size=(3, 1, 4, 24)) < 0.7
    mask[..., 0] = True
    mask[1] = False
    mask[0, :, 2] = False
    return AttentionCase("masks/one_row_fully_masked", q, k, v, mask)


LARGE_SCORES = {"float16": 30.0, "bfloat16": 4.0, "float32": 1e4, "float64": 1e4}
"""The size of the scores of the ``large_scores`` suite per dtype (scale 1)."""


def _large(dtype: str, seed: int) -> list[AttentionCase]:
    rng = np.random.default_rng(seed + 13)
    size = LARGE_SCORES[dtype]
    keys = 96
    a = size + rng.uniform(-2, 2, size=(1, 2, keys)) * min(1.0, size / 30)
    q, k = _planted(rng, a, rng.uniform(-0.5, 0.5, size=(1, 2, keys)))
    v = _normal(rng, 1, 2, keys, 8, 1.0)
    cases = [AttentionCase(f"large_scores/near_{size:g}", q, k, v, scale=1.0)]
    # masked keys far above the visible ones: a boolean mask turned into a finite bias
    high = np.where(np.arange(keys) % 3 == 0, 2.0 * size, 0.0)[None, None, :]
    a = high + rng.uniform(-2, 2, size=(1, 2, keys)) * min(1.0, size / 30)
    q, k = _planted(rng, a, rng.uniform(-0.5, 0.5, size=(1, 2, keys)))
    mask = np.broadcast_to(high[0] == 0, (4, keys)).copy()
    cases.append(AttentionCase(f"large_scores/masked_above_{size:g}", q, k, v, mask, scale=1.0))
    return cases


SCALES = (0.3, 0.0)
"""The explicit scales of the ``scales`` suite besides the ``1.0`` of ``large_scores``: 0.3
is no fixed point of ``1/s``, ``s²`` or ``√s`` (each misreading shows), and 0 is honoured
as 0 (every row the mean of its visible values, as torch's SDPA does), which
``scale or 1/√E`` turns into the default."""


def _scales(dtype: str, seed: int) -> list[AttentionCase]:
    rng = np.random.default_rng(seed + 16)
    # scores of a few units at scale 0.3: larger inputs than the default scale's
    size = 1.2 if dtype == "bfloat16" else 1.6
    cases = []
    for scale in SCALES:
        q = _normal(rng, 1, 2, 8, 32, size)
        k = _normal(rng, 1, 2, 40, 32, size)
        v = _normal(rng, 1, 2, 40, 32, 1.0)
        cases.append(AttentionCase(f"scales/scale_{scale:g}", q, k, v, scale=scale))
    # the scale with a causal mask (a causal kernel of its own) and with a float mask
    q = _normal(rng, 1, 2, 48, 32, size)
    k = _normal(rng, 1, 2, 48, 32, size)
    v = _normal(rng, 1, 2, 48, 32, 1.0)
    cases.append(AttentionCase("scales/causal_scale_0.3", q, k, v, is_causal=True, scale=0.3))
    distance = np.arange(40)[None, :] - np.arange(8)[:, None]
    bias = -0.25 * np.abs(distance) + rng.uniform(-1, 1, size=(8, 40))
    q = _normal(rng, 1, 2, 8, 32, size)
    k = _normal(rng, 1, 2, 40, 32, size)
    v = _normal(rng, 1, 2, 40, 32, 1.0)
    cases.append(AttentionCase("scales/float_mask_scale_0.3", q, k, v, bias, scale=0.3))
    return cases


def _tiles(dtype: str, seed: int) -> list[AttentionCase]:
    rng = np.random.default_rng(seed + 17)
    damp = 0.7 if dtype == "bfloat16" else 1.0  # as in ``random``: bfloat16's scores
    cases = []
    # query rows past a tile of 64 and of 128; head sizes past 64 and off the multiples of 8
    for b, h, length, keys, dims in ((1, 1, 160, 96, 16), (1, 1, 4, 64, 128), (1, 1, 4, 40, 100)):
        q = _normal(rng, b, h, length, dims, damp)
        k = _normal(rng, b, h, keys, dims, damp)
        v = _normal(rng, b, h, keys, dims, 1.0)
        cases.append(AttentionCase(f"tiles/l{length}_s{keys}_e{dims}", q, k, v))
    # six heads, each its own data: a head index taken modulo a grid size shows
    q = _normal(rng, 1, 6, 4, 16, 1.0)
    k = _normal(rng, 1, 6, 24, 16, 1.0)
    v = _normal(rng, 1, 6, 24, 16, 1.0) + np.arange(6)[None, :, None, None]
    cases.append(AttentionCase("tiles/heads_6", q, k, v))
    # two batch elements of 12 heads: 24 programs, past a head index kept mod 8 and a
    # grid of 16 batch×head programs; each program's values offset by its own number
    q = _normal(rng, 2, 12, 4, 16, damp)
    k = _normal(rng, 2, 12, 24, 16, damp)
    offsets = 0.5 * np.arange(24.0).reshape(1, 2, 12)[0][:, :, None, None]
    v = _normal(rng, 2, 12, 24, 16, 1.0) + offsets
    cases.append(AttentionCase("tiles/batch_2_heads_12", q, k, v))
    # causal over several key tiles, two batch elements, and L ≠ S both ways (top-left)
    for length, keys in ((160, 160), (96, 40), (24, 144)):
        q = _normal(rng, 2, 2, length, 16, 1.0)
        k = _normal(rng, 2, 2, keys, 16, 1.0)
        v = _normal(rng, 2, 2, keys, 16, 1.0)
        name = f"tiles/causal_{length}x{keys}"
        cases.append(AttentionCase(name, q, k, v, is_causal=True))
    return cases


def _shapes(dtype: str, seed: int) -> list[AttentionCase]:
    rng = np.random.default_rng(seed + 14)
    cases = []
    q = rng.standard_normal((3, 5, 16))
    k = rng.standard_normal((3, 9, 16))
    v = rng.standard_normal((3, 9, 16))
    cases.append(AttentionCase("shapes/three_d", q, k, v, core=False))
    v = rng.standard_normal((1, 2, 9, 5))
    q4 = rng.standard_normal((1, 2, 4, 16))
    k4 = rng.standard_normal((1, 2, 9, 16))
    cases.append(AttentionCase("shapes/value_size_5", q4, k4, v, core=False))
    mask = rng.uniform(size=(4, 9)) < 0.7
    mask[:, 0] = True
    v4 = rng.standard_normal((1, 2, 9, 16))
    cases.append(AttentionCase("shapes/mask_over_heads", q4, k4, v4, mask))
    # batch dimensions of k, v and the mask broadcast to q's (the SDPA contract)
    q = rng.standard_normal((2, 3, 5, 16))
    k = rng.standard_normal((1, 3, 9, 16))
    v = rng.standard_normal((2, 1, 9, 16))
    bias = rng.uniform(-2, 0, size=(2, 1, 5, 9))
    cases.append(AttentionCase("shapes/broadcast_batch", q, k, v, bias, core=False))
    return cases


SUITE_BUILDERS: dict[str, Callable[[str, int], list[AttentionCase]]] = {
    "random": _random,
    "long": _long,
    "masks": _masks,
    "large_scores": _large,
    "scales": _scales,
    "tiles": _tiles,
    "shapes": _shapes,
}
"""The attention suites by name: ``builder(dtype, seed)`` → cases."""
ATTENTION_SUITES = tuple(SUITE_BUILDERS)
"""The attention suites' names, in order."""


def attention_suites(
    dtype: str, suites: list[str] | tuple[str, ...] | None = None, seed: int = 0
) -> list[AttentionCase]:
    """The cases of ``suites`` (all by default) for ``dtype``.

    Raises
    ------
    ValueError
        For an unknown suite name, or an empty selection.

    Examples
    --------
    >>> [c.name for c in attention_suites("float32", ["large_scores"])]
    ['large_scores/near_10000', 'large_scores/masked_above_10000']
    """
    names = check_suite_names(suites)
    float_format(dtype)
    return [case for name in names for case in SUITE_BUILDERS[name](dtype, seed)]


def check_suite_names(suites: list[str] | tuple[str, ...] | None) -> list[str]:
    """The suite names, checked (all when ``None``); raises as :func:`attention_suites`."""
    names = list(ATTENTION_SUITES if suites is None else suites)
    if not names:
        raise ValueError("suites is empty: choose at least one of " + ", ".join(ATTENTION_SUITES))
    unknown = [name for name in names if name not in SUITE_BUILDERS]
    if unknown:
        raise ValueError(
            f"unknown attention suite {unknown[0]!r}; known: {', '.join(ATTENTION_SUITES)}"
        )
    return names


def policy_cases(dtype: str, seed: int = 0) -> dict[str, AttentionCase]:
    """The inputs whose outputs are named, not judged, by policy key.

    ``fully masked row``: every key of a row excluded (by a boolean mask);
    ``finfo.min row``: a float mask of ``finfo.min`` on every key of a row (an input,
    not a mask: the exact answer ignores it; the format rounds the scores to one value).

    Examples
    --------
    >>> sorted(policy_cases("float32"))
    ['finfo.min row', 'fully masked row']
    """
    fmt = float_format(dtype)
    rng = np.random.default_rng(seed + 15)
    q = rng.standard_normal((1, 1, 3, 8))
    k = rng.standard_normal((1, 1, 6, 8))
    v = rng.standard_normal((1, 1, 6, 8))
    mask = np.ones((3, 6), dtype=bool)
    mask[1] = False
    sentinel = np.zeros((3, 6))
    sentinel[1] = -fmt.max_finite
    return {
        "fully masked row": AttentionCase("policy/fully_masked_row", q, k, v, mask),
        "finfo.min row": AttentionCase("policy/finfo_min_row", q, k, v, sentinel),
    }
