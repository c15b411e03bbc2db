"""Certified logit spreads of layer-0 heads over every input tokens can make.

The LayerNorm-set certificate (:mod:`.spread_bounds`) bounds a head over every LayerNorm
output; layer 0 only ever sees the finite set :class:`~.token_domain.EmbeddingDomain`
(every token × position × token type).  :func:`certify_tokens` bounds the largest row
spread over that set,

    ``δ_tok = scaling · max_{query x} max_{keys x₁, x₂} q(x)·(κ(x₁) − κ(x₂))``,

by branch and bound, every bound certified (:mod:`.enclosures`):

1. ``h(q) = max_k q·κ − min_k q·κ`` is convex and positively homogeneous in ``q`` (the
   support function of the keys' differences), so for ``q = inv·U'_t + (inv·n_{p,s} + q₀)``
   with ``n_{p,s} = W'_p + Y'_s``, ``h(q) <= inv·h(U'_t) + g_{p,s}(inv)`` with
   ``g_{p,s}(i) = h(i·n_{p,s} + q₀)`` convex in ``i``: below its chord between grid points.
   ``h(U'_t)`` for every token and ``g`` on a grid of ``inv`` for every (p, s) are bounded
   over **every** key by :meth:`~.token_domain.KeySupport.spread_upper`.
2. That bound is evaluated for every query input; the inputs are taken in decreasing
   order of it and each is evaluated exactly over every key
   (:meth:`~.token_domain.KeySupport.exact`), until the next bound is within a relative
   ``tolerance`` of the best spread found.  The certificate is the largest of the exact
   bounds and the bounds of the inputs not evaluated.

The best triple found (a query input and the two keys that attain its spread) is a real
spread the head takes, so ``[found, δ_tok]`` brackets the true maximum over the set.
Whether a sequence of tokens realises it is a separate question (two keys need two
positions): :func:`realisable_triple` picks the best triple with distinct positions for
the best queries, to be run through the model.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from softmax_dispersion.empirical.pretrained.enclosures import U64, Enclosure, down, up
from softmax_dispersion.empirical.pretrained.token_domain import (
    EmbeddingDomain,
    HeadParts,
    KeySupport,
)

__all__ = ["TokenCertificate", "certify_tokens", "realisable_triple"]

Key = tuple[int, int, int]
"""An input ``(token, position, token type)``."""


@dataclass(frozen=True)
class TokenCertificate:
    """A head's certified spread over every token input, and the best triple found."""

    spread_upper: float
    """Certified: no row of the head, for any input of tokens, positions and token types,
    has a logit spread above this (exact arithmetic on the model's float weights)."""
    found: float
    """Certified lower end of the spread of :attr:`query`'s row between :attr:`high` and
    :attr:`low`: a spread the head really takes on inputs of the set."""
    query: Key
    high: Key
    low: Key
    evaluated: int
    """Query inputs refined (bounded directly over every key)."""
    exact: int
    """Of those, the ones evaluated exactly over every key."""
    inputs: int
    """The size of the set: tokens × positions × types."""
    bound_left: float
    """The largest bound among the query inputs not refined (scaled; 0 when every input was)."""
    converged: bool
    """Whether the refinement stopped within the tolerance (not by its budget)."""
    seconds: float


@dataclass(frozen=True)
class _Candidates:
    bounds: np.ndarray
    inputs: np.ndarray  # [m, 3] (type, token, position)
    rest: float


def _keep_top(
    bounds: list[np.ndarray], inputs: list[np.ndarray], keep: int, rest: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """The candidates merged, the indices of the ``keep`` largest bounds, and ``rest``
    raised to the largest bound left out (what is dropped still bounds the head)."""
    merged, merged_inputs = np.concatenate(bounds), np.concatenate(inputs)
    kept = _top(merged, keep)
    dropped = np.ones(merged.size, dtype=bool)
    dropped[kept] = False
    if np.any(dropped):
        rest = max(rest, float(merged[dropped].max()))
    return merged, merged_inputs, kept, rest


def _top(values: np.ndarray, count: int) -> np.ndarray:
    if values.size <= count:
        return np.arange(values.size)
    return np.argpartition(-values, count - 1)[:count]


def _grid(domain: EmbeddingDomain, points: int) -> np.ndarray:
    low = float(domain.inv_lo.min())
    high = float(domain.inv_hi.max())
    return np.geomspace(low, high, points)


def _chord_upper(x: np.ndarray, grid: np.ndarray, values: np.ndarray) -> np.ndarray:
    """An upper bound, at each ``x`` in ``[grid[0], grid[-1]]``, of a convex function whose
    upper bounds at the grid points are ``values`` (``[..., points]`` broadcast over x)."""
    j = np.clip(np.searchsorted(grid, x, side="right") - 1, 0, grid.size - 2)
    left = np.take_along_axis(values, j, axis=-1)
    right = np.take_along_axis(values, j + 1, axis=-1)
    fraction = np.clip((x - grid[j]) / (grid[j + 1] - grid[j]), 0.0, 1.0)
    chord = left + (right - left) * fraction
    # A few roundings, each within u of |left| + |right|; the fraction's own rounding moves
    # the chord by at most 4u·|right − left|.
    return up(chord + 16 * U64 * (np.abs(left) + np.abs(right)))


def _first_stage(
    domain: EmbeddingDomain,
    parts: HeadParts,
    support: KeySupport,
    *,
    grid_points: int,
    keep: int,
    chunk: int = 1024,
) -> _Candidates:
    """Step 1: an upper bound of ``h`` at every query input; the ``keep`` largest kept."""
    token_spread = support.spread_upper(parts.query_token, "split")  # h(U'_t), every t
    grid = _grid(domain, grid_points)
    n_ps = [parts.query_position + parts.query_type[s : s + 1] for s in range(domain.type_count)]
    offset = parts.query_offset
    g = np.empty((domain.type_count, domain.position_count, grid_points))
    for s, base in enumerate(n_ps):
        rows_mid, rows_rad = [], []
        for value in grid:
            row = base.scaled(value) + Enclosure(
                np.broadcast_to(offset.mid, base.mid.shape),
                np.broadcast_to(offset.rad, base.mid.shape),
            )
            rows_mid.append(row.mid)
            rows_rad.append(np.broadcast_to(row.rad, row.mid.shape))
        rows = Enclosure(np.concatenate(rows_mid), np.concatenate(rows_rad))
        g[s] = support.spread_upper(rows).reshape(grid_points, -1).T
    bounds: list[np.ndarray] = []
    inputs: list[np.ndarray] = []
    threshold = -np.inf
    rest = -np.inf
    for s in range(domain.type_count):
        for start in range(0, domain.tokens, chunk):
            tokens = np.arange(start, min(start + chunk, domain.tokens))
            inv_lo = domain.inv_lo[s, tokens].astype(np.float64)
            inv_hi = domain.inv_hi[s, tokens].astype(np.float64)
            g_ps = np.broadcast_to(g[s][None], (tokens.size, *g[s].shape))
            chord = np.maximum(
                _chord_upper(inv_lo[..., None], grid, g_ps)[..., 0],
                _chord_upper(inv_hi[..., None], grid, g_ps)[..., 0],
            )
            bound = up(up(inv_hi * token_spread[tokens, None]) + chord)
            above = bound > threshold
            if np.any(~above):
                rest = max(rest, float(bound[~above].max()))
            t_index, p_index = np.nonzero(above)
            bounds.append(bound[t_index, p_index])
            inputs.append(np.stack([np.full(t_index.size, s), tokens[t_index], p_index], axis=1))
            if sum(b.size for b in bounds) > 2 * keep:
                merged, merged_inputs, kept, rest = _keep_top(bounds, inputs, keep, rest)
                bounds, inputs = [merged[kept]], [merged_inputs[kept]]
                threshold = float(merged[kept].min())
    merged, merged_inputs, kept, rest = _keep_top(bounds, inputs, keep, rest)
    order = kept[np.argsort(-merged[kept], kind="stable")]
    return _Candidates(merged[order], merged_inputs[order], rest)


class _TokenTypeBounds:
    """The second split's bound, ``g_{t,s}(inv) + inv·h(W'_p)``, per (token, type), lazily.

    ``g_{t,s}`` is bounded at three points of the token's ``inv`` range (over positions)
    and by its chord in between; ``h(W'_p)`` once for every position.
    """

    points = 3

    def __init__(self, domain: EmbeddingDomain, parts: HeadParts, support: KeySupport) -> None:
        self.domain, self.parts, self.support = domain, parts, support
        self.position_spread = support.spread_upper(parts.query_position, "split")
        self.chords: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}

    def _compute(self, groups: list[tuple[int, int]]) -> None:
        domain, parts = self.domain, self.parts
        grids, rows_mid, rows_rad = [], [], []
        offset = parts.query_offset
        for t, s in groups:
            low = float(domain.inv_lo[s, t].min())
            high = float(domain.inv_hi[s, t].max())
            grid = np.geomspace(low, high, self.points) if high > low else np.array([low] * 2)
            grid[0], grid[-1] = low, high
            base = parts.query_token[t : t + 1] + parts.query_type[s : s + 1]
            for value in grid:
                row = base.scaled(value) + offset
                rows_mid.append(row.mid[0])
                rows_rad.append(np.broadcast_to(row.rad, row.mid.shape)[0])
            grids.append(grid)
        values = self.support.spread_upper(
            Enclosure(np.array(rows_mid), np.array(rows_rad)), "coarse"
        ).reshape(len(groups), -1)
        for (t, s), grid, g in zip(groups, grids, values, strict=True):
            self.chords[(t, s)] = (grid, g)

    def bound(self, inputs: np.ndarray) -> np.ndarray:
        """Upper bounds of ``h`` (unscaled) at query inputs ``[m, 3]`` (type, token, position)."""
        keys = [(int(t), int(s)) for s, t, _ in inputs]
        missing = sorted(set(keys) - set(self.chords))
        if missing:
            self._compute(missing)
        grids = np.array([self.chords[key][0] for key in keys])
        values = np.array([self.chords[key][1] for key in keys])
        kinds, tokens, positions = inputs[:, 0], inputs[:, 1], inputs[:, 2]
        inv_lo = self.domain.inv_lo[kinds, tokens, positions].astype(np.float64)
        inv_hi = self.domain.inv_hi[kinds, tokens, positions].astype(np.float64)
        chord = np.maximum(_chord_rows(inv_lo, grids, values), _chord_rows(inv_hi, grids, values))
        return np.asarray(up(chord + up(inv_hi * self.position_spread[positions])))


def _chord_rows(x: np.ndarray, grids: np.ndarray, values: np.ndarray) -> np.ndarray:
    """:func:`_chord_upper` with a grid of its own per row (``grids``, ``values``: ``[m, G]``)."""
    j = np.clip((grids <= x[:, None]).sum(axis=1) - 1, 0, grids.shape[1] - 2)[:, None]
    left, right = np.take_along_axis(values, j, 1)[:, 0], np.take_along_axis(values, j + 1, 1)[:, 0]
    g_left, g_right = (
        np.take_along_axis(grids, j, 1)[:, 0],
        np.take_along_axis(grids, j + 1, 1)[:, 0],
    )
    span = g_right - g_left
    fraction = np.clip(np.where(span > 0, (x - g_left) / np.where(span > 0, span, 1.0), 0.0), 0, 1)
    chord = np.maximum(
        left + (right - left) * fraction, np.where(span > 0, -np.inf, np.maximum(left, right))
    )
    return np.asarray(up(chord + 16 * U64 * (np.abs(left) + np.abs(right))))


def certify_tokens(
    domain: EmbeddingDomain,
    parts: HeadParts,
    *,
    tolerance: float = 0.1,
    budget: int = 200_000,
    grid_points: int = 4,
    batch: int = 4096,
    direct_batch: int = 256,
) -> TokenCertificate:
    """Certify an upper bound on the head's logit spread over every token input.

    Parameters
    ----------
    domain, parts
        Layer 0's input set and the head's key and query parts on it.
    tolerance
        Stop refining once every query input not refined has a bound within this
        relative margin of the best spread found.
    budget
        The most query inputs refined; the certificate stays valid when it is spent (it
        is then the largest bound left).
    grid_points
        Points of the ``inv`` grid for the position part's chord.
    batch
        Query inputs bounded by the second split between two checks of the stopping rule.
    direct_batch
        Query inputs bounded directly over every key at once.

    Returns
    -------
    TokenCertificate

    Notes
    -----
    A query input is refined first by the second split,
    ``h(q) <= g_{t,s}(inv) + inv·h(W'_p)`` with ``g_{t,s}(i) = h(i·(U'_t + Y'_s) + q₀)``
    convex in ``i`` (tight where positions matter little, as the first split is where
    tokens do), then by bounding its row directly over every key, with the split groups
    and then the coarse ones; where that bound is still above
    ``(1 + tolerance)`` times the best spread found, it is evaluated exactly
    (:meth:`~.token_domain.KeySupport.exact`).  Soundness rests on the enclosures of
    ``inv`` and of the parts, the support bounds over every key, the triangle inequality
    and positive homogeneity of ``h``, the convexity of ``g`` in ``inv``, and the exact
    evaluations.  Queries and keys range over every input
    independently: a row's keys and query come from one sequence, so this set of triples
    holds every row any sequence makes.
    """
    clock = time.perf_counter()
    support = KeySupport(domain, parts)
    candidates = _first_stage(domain, parts, support, grid_points=grid_points, keep=budget)
    found = -np.inf
    best: tuple[Key, Key, Key] = ((0, 0, 0), (0, 0, 0), (0, 0, 0))
    refined_upper = -np.inf
    evaluated = exact = 0
    total = candidates.bounds.size
    index = 0

    def evaluate(s: int, t: int, p: int, row: Enclosure) -> float:
        nonlocal found, best, exact
        score = support.exact(row)
        exact += 1
        spread = float(down(score.upper_found - score.lower_found))
        if spread > found:
            found, best = spread, ((t, p, s), score.argmax, score.argmin)
        return float(up(score.upper - score.lower))

    by_group = _TokenTypeBounds(domain, parts, support)
    while index < total and candidates.bounds[index] > (1 + tolerance) * max(found, 0.0):
        inputs = candidates.inputs[index : index + batch]
        index += batch
        evaluated += len(inputs)
        # Second split, tight where positions matter little: h(q) <= g_ts(inv) + inv·h(W'_p).
        bound = np.minimum(candidates.bounds[index - batch : index], by_group.bound(inputs))
        target = (1 + tolerance) * max(found, 0.0)
        settled = bound <= target
        if np.any(settled):
            refined_upper = max(refined_upper, float(bound[settled].max()))
        inputs, bound = inputs[~settled], bound[~settled]
        for start in range(0, len(inputs), direct_batch):
            part = inputs[start : start + direct_batch]
            rows = parts.queries(domain, part[:, 1], part[:, 2], part[:, 0])
            direct = np.minimum(
                bound[start : start + direct_batch], support.spread_upper(rows, "split")
            )
            loose = np.flatnonzero(direct > (1 + tolerance) * max(found, 0.0))
            if loose.size:
                direct[loose] = np.minimum(
                    direct[loose], support.spread_upper(rows[loose], "coarse")
                )
            for i in np.argsort(-direct, kind="stable"):
                value = float(direct[i])
                if value > (1 + tolerance) * max(found, 0.0):
                    s, t, p = (int(v) for v in part[i])
                    value = min(value, evaluate(s, t, p, rows[i]))
                refined_upper = max(refined_upper, value)
    left = float(candidates.bounds[index]) if index < total else candidates.rest
    left = max(left, candidates.rest)
    upper = max(refined_upper, left)
    scaling = parts.scaling
    return TokenCertificate(
        spread_upper=float(up(upper * scaling)),
        found=float(down(found * scaling)),
        query=best[0],
        high=best[1],
        low=best[2],
        evaluated=evaluated,
        exact=exact,
        inputs=domain.size,
        bound_left=float(up(left * scaling)) if math.isfinite(left) else 0.0,
        converged=bool(upper <= (1 + tolerance) * found),
        seconds=time.perf_counter() - clock,
    )


def realisable_triple(
    domain: EmbeddingDomain, parts: HeadParts, query: Key
) -> tuple[Key, Key, float]:
    """For one query input, the two keys at distinct positions (neither at the query's
    position, unless it is the query's own input) with the largest spread — a float64
    estimate of a spread a sequence of tokens realises.

    Returns
    -------
    tuple
        The high key, the low key and their spread (scaled; a float64 estimate).
    """
    t, p, s = query
    q = parts.queries(domain, np.array([t]), np.array([p]), np.array([s])).mid[0]
    scores = np.empty((domain.type_count, domain.tokens, domain.position_count))
    a = parts.key_token.mid @ q
    b = parts.key_position.mid @ q
    c = parts.key_type.mid @ q
    inv = (domain.inv_lo.astype(np.float64) + domain.inv_hi) / 2
    for kind in range(domain.type_count):
        scores[kind] = inv[kind] * (a[:, None] + b[None, :] + c[kind])
    own = scores[s, t, p]
    allowed = scores.copy()
    allowed[:, :, p] = np.nan
    allowed[s, t, p] = own

    def pick(table: np.ndarray, largest: bool) -> Key:
        flat = np.nanargmax(table) if largest else np.nanargmin(table)
        kind, token, position = np.unravel_index(flat, table.shape)
        return (int(token), int(position), int(kind))

    options = []
    for first_largest in (True, False):
        first = pick(allowed, first_largest)
        rest = allowed.copy()
        rest[:, :, first[1]] = np.nan
        if first[1] == p:  # the query's own key: the other may sit anywhere else
            pass
        second = pick(rest, not first_largest)
        high, low = (first, second) if first_largest else (second, first)
        value = scores[high[2], high[0], high[1]] - scores[low[2], low[0], low[1]]
        options.append((high, low, float(value) * parts.scaling))
    return max(options, key=lambda option: option[2])
