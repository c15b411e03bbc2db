"""The fixed input suites of :func:`~softmax_dispersion.testing.check_softmax`.

Three suites, each a list of :class:`Case` (named float64 rows, rounded to the tested
dtype by the battery):

``random``
    Seeded normal rows (``numpy.random.default_rng(seed)``) of lengths 1, 2, 3, 8, 137,
    1238, 2049 and 4096 at several scales and offsets, and one row of 16384.
``families``
    The adversarial families of :mod:`softmax_dispersion.numerics.families`: spike,
    dip, two-level, near-ties, a geometric ladder, consecutive floats, huge magnitudes.
``bad_inputs``
    Every finite input of PAPER.md's table of bad inputs: uniform rows of 2049, 4096 and
    8192 (16-bit accumulation stalls at 2048), logits below −5e4 (online softmax with a
    finite starting max), ``finfo.min`` masks, gaps of 17 (float32) and 37 (float64) for
    log-softmax, logits near −2e4, logits past the overflow of ``exp`` (710 for float64,
    89 for float32, 12 for float16) for code without the max shift, and the off-block
    lengths 137 and 1238.

The non-finite rows of the table (``+inf``, all ``−inf``, NaN, NaN among masks) are
policy cases: :data:`POLICY_ROWS`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from softmax_dispersion.numerics.rounding import float_format

__all__ = ["POLICY_ROWS", "SUITES", "Case", "build_case", "build_suites"]

F64 = npt.NDArray[np.float64]

RANDOM_LENGTHS = (1, 2, 3, 8, 137, 1238, 2049, 4096)
"""Row lengths of the random suite (plus one row of 16384)."""


@dataclass(frozen=True)
class Case:
    """A named batch of input rows (float64, rows along the last axis).

    Attributes
    ----------
    name : str
        ``"suite/case"``, e.g. ``"bad_inputs/uniform_4096"``; rebuild it with
        :func:`build_case`.
    rows : numpy.ndarray
        Shape ``(batch, n)``.
    """

    name: str
    rows: F64

    @property
    def suite(self) -> str:
        """The suite the case belongs to."""
        return self.name.split("/", 1)[0]


def _random(dtype: str, seed: int) -> list[Case]:
    rng = np.random.default_rng(seed)
    scales = np.array([0.5, 2.0, 8.0, 30.0])
    cases = []
    for n in RANDOM_LENGTHS:
        batch = 8 if n <= 1238 else 2
        scale = np.resize(scales, batch)[:, None]
        offset = rng.uniform(-10, 10, size=(batch, 1))
        cases.append(Case(f"random/n{n}", rng.standard_normal((batch, n)) * scale + offset))
    cases.append(Case("random/n16384", rng.standard_normal((1, 16384)) * 3.0))
    return cases


def _families(dtype: str, seed: int) -> list[Case]:
    from softmax_dispersion.numerics import families as fam

    builders: list[tuple[str, Callable[[], object]]] = [
        ("spike", lambda: fam.spike(64, 10)),
        ("dip", lambda: fam.dip(64, 10)),
        ("two_level", lambda: fam.two_level(100, 5, 6)),
        ("near_ties", lambda: fam.near_ties(64, 1, dtype=dtype, seed=seed)),
        ("geometric_ladder", lambda: fam.geometric_ladder(40, 2.0)),
        ("tiny_gaps", lambda: fam.tiny_gaps(32, dtype=dtype)),
        ("huge_magnitude", lambda: fam.huge_magnitude(16, scale=1e4, seed=seed)),
    ]
    cases = []
    for name, build in builders:
        row = build().to_array()  # type: ignore[attr-defined]
        cases.append(Case(f"families/{name}", np.asarray(row, dtype=np.float64)[None, :]))
    return cases


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
    cases.append(Case("bad_inputs/finfo_min_row", np.full((1, 16), -big)))
    cases.append(Case("bad_inputs/gap_17", np.array([[0.0] + [-17.5] * 15, [0.0] + [-20.0] * 15])))
    cases.append(Case("bad_inputs/gap_37", np.array([[0.0] + [-37.5] * 15, [0.0] + [-40.0] * 15])))
    near = np.array([[-2e4] * 8, [-2e4, -2e4 + 16, -2e4 + 32, -2e4 - 16] * 2])
    cases.append(Case("bad_inputs/near_minus_2e4", near))
    for top in (12.0, 90.0, 711.0):
        if top + 1 < big:
            row = np.array([[top, top - 1, top - 2.5, top - 6, top - 0.5, top - 3, top - 1, top]])
            cases.append(Case(f"bad_inputs/no_max_shift_{int(top)}", row))
    for n in (137, 1238):
        cases.append(Case(f"bad_inputs/off_block_{n}", rng.standard_normal((4, n)) * 4.0))
    return cases


SUITES: dict[str, Callable[[str, int], list[Case]]] = {
    "random": _random,
    "families": _families,
    "bad_inputs": _bad_inputs,
}
"""The suites by name."""

POLICY_ROWS: dict[str, list[float]] = {
    "+inf entry": [np.inf, 0.0, 1.0, 2.0],
    "all -inf row": [-np.inf] * 4,
    "NaN in a row": [1.0, np.nan, 2.0, 3.0],
    "NaN in a masked position": [1.0, 2.0, -np.inf, np.nan],
}
"""The non-finite rows whose outputs are policies (reported, not failed)."""


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


def build_case(name: str, dtype: str = "float32", seed: int = 0) -> F64:
    """The rows of the case called ``name`` (``"suite/case"``), as the battery built them.

    Examples
    --------
    >>> build_case("bad_inputs/gap_17")[0, :3].tolist()
    [0.0, -17.5, -17.5]
    """
    suite = name.split("/", 1)[0]
    for case in build_suites(dtype, [suite], seed):
        if case.name == name:
            return case.rows
    raise ValueError(f"no case called {name!r}")
