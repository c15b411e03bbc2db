"""Layer 0's finite input set: every token × position × token type, through the LayerNorm.

A BERT-style model's first attention layer reads ``x = LN(w_t + p_p + y_s)`` for a token
``t``, a position ``p`` and a token type ``s`` — a finite set (30,522 × 512 × 2 inputs for
all-MiniLM-L6-v2), not the whole sphere that :mod:`.spread_bounds` bounds.  With
``P = I − 11ᵀ/d`` and ``v = w_t + p_p + y_s``, the LayerNorm output is
``x = γ ⊙ z + β`` with

    ``z = P v · inv``,  ``inv = 1/sqrt(|P v|²/d + ε)``,  ``P v = A_t + B_p + C_s``

(``A, B, C`` the centred word, position and type embeddings).  A head's key and query
are then ``k = W_k Γ z + const`` and ``q = W_q Γ z + q₀`` with ``q₀ = W_q β + b_q``; the
key's constant shifts a whole row of logits and drops out of its spread.  So, with
``M = W Γ``,

    ``κ(t, p, s) = inv(t, p, s) · (U_t + W_p + Y_s)``,  ``U_t = M A_t``, ``W_p = M B_p``,
    ``Y_s = M C_s``,

is the part of the key a row's spread sees, and the query is ``inv · (U'_t + W'_p +
Y'_s) + q₀`` likewise.  Everything is separable except ``inv``, whose square's reciprocal
``|A_t|² + |B_p + C_s|² + 2 A_t·(B_p + C_s)`` (over ``d``, plus ``ε``) is one
``T × (P·S)`` matrix product.

:class:`EmbeddingDomain` holds that structure with rigorous enclosures
(:mod:`.enclosures`): ``inv`` is enclosed for every input, and the inputs are grouped by
position (a few singled-out positions whose embeddings are far from the rest, then
blocks of consecutive positions) so that ``inv`` varies little within a group.
:class:`KeySupport` bounds ``max_k q·κ`` and ``min_k q·κ`` over **every** key of the
domain for many query vectors at once, and evaluates single queries exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from softmax_dispersion.empirical.pretrained.enclosures import (
    U32,
    U64,
    Enclosure,
    _widen,
    down,
    gamma,
    matmul,
    up,
)
from softmax_dispersion.empirical.pretrained.spread_bounds import HeadWeights

__all__ = [
    "EmbeddingDomain",
    "EmbeddingTables",
    "HeadParts",
    "KeySupport",
    "PositionGroup",
    "head_parts",
]


@dataclass(frozen=True)
class EmbeddingTables:
    """The raw weights layer 0's inputs are built from (float64 copies of the model's floats)."""

    words: np.ndarray
    """``[T, d]`` word embeddings."""
    positions: np.ndarray
    """``[P, d]`` position embeddings."""
    types: np.ndarray
    """``[S, d]`` token-type embeddings."""
    gamma: np.ndarray
    beta: np.ndarray
    eps: float
    """The embedding LayerNorm's weight, bias and ε."""

    def __post_init__(self) -> None:
        d = self.gamma.shape[0]
        for name in ("words", "positions", "types"):
            array = getattr(self, name)
            if array.ndim != 2 or array.shape[1] != d:
                raise ValueError(f"{name} must have shape [count, {d}], got {array.shape}")
        if not self.eps > 0:
            raise ValueError(f"eps must be positive, got {self.eps}")

    def layer_norm(self, token: int, position: int, kind: int) -> np.ndarray:
        """The LayerNorm output of one input, in float64 (an estimate, for checks)."""
        v = self.words[token] + self.positions[position] + self.types[kind]
        centred = v - v.mean()
        scale = np.sqrt((centred**2).mean() + self.eps)
        return np.asarray(centred / scale * self.gamma + self.beta)


@dataclass(frozen=True)
class PositionGroup:
    """Some positions and token types whose inputs are bounded together."""

    positions: np.ndarray
    types: np.ndarray


def _float32_down(x: np.ndarray) -> np.ndarray:
    y = x.astype(np.float32)
    return np.where(y.astype(np.float64) > x, np.nextafter(y, np.float32(-np.inf)), y)


def _float32_up(x: np.ndarray) -> np.ndarray:
    y = x.astype(np.float32)
    return np.where(y.astype(np.float64) < x, np.nextafter(y, np.float32(np.inf)), y)


def _centred(x: np.ndarray) -> Enclosure:
    """``x − mean(x)`` per row: the float result and a radius bounding its error."""
    d = x.shape[1]
    mean = x.sum(axis=1, keepdims=True) / d
    mid = x - mean
    # |fl(Σx) − Σx| <= γ_d Σ|x|; the division and the subtraction round once each.
    mean_error = (gamma(d) * np.abs(x).sum(axis=1, keepdims=True) / d) * (1 + 4 * U64)
    rad = mean_error + 2 * U64 * (np.abs(mean) + np.abs(mid))
    return Enclosure(mid, _widen(rad, 4))


class EmbeddingDomain:
    """Every layer-0 input ``LN(w_t + p_p + y_s)``, with ``inv`` enclosed for each.

    Parameters
    ----------
    tables
        The embeddings and the LayerNorm's parameters.
    special_positions
        How many positions, those whose centred embedding (with either type) has the
        largest norm, get groups of their own (``inv`` differs most there).
    block
        The other positions are grouped in runs of this many consecutive positions.

    Notes
    -----
    ``inv`` is stored as float32 lower and upper bounds ``[S, T, P]`` (rounded outwards).
    ``|P v|² = |A_t|² + |B_p + C_s|² + 2 A_t·(B_p + C_s)`` is bounded below and above from
    enclosures of its three terms, then ``|P v|²/d + ε``, its square root and reciprocal,
    each step moved outwards past its rounding.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> tables = EmbeddingTables(rng.normal(size=(5, 8)), rng.normal(size=(4, 8)),
    ...                          rng.normal(size=(2, 8)), np.ones(8), np.zeros(8), 1e-12)
    >>> domain = EmbeddingDomain(tables, special_positions=1, block=2)
    >>> z = tables.layer_norm(3, 2, 1)          # γ = 1, β = 0: z itself
    >>> v = tables.words[3] + tables.positions[2] + tables.types[1]
    >>> inv = float(np.linalg.norm(z) / np.linalg.norm(v - v.mean()))
    >>> bool(domain.inv_lo[1, 3, 2] <= inv <= domain.inv_hi[1, 3, 2])
    True
    """

    def __init__(
        self, tables: EmbeddingTables, *, special_positions: int = 4, block: int = 16
    ) -> None:
        self.tables = tables
        self.dim = tables.gamma.shape[0]
        self.words = _centred(tables.words)
        self.positions = _centred(tables.positions)
        self.types = _centred(tables.types)
        self.tokens = tables.words.shape[0]
        self.position_count = tables.positions.shape[0]
        self.type_count = tables.types.shape[0]
        self.inv_lo, self.inv_hi = self._inverse_scale()
        self.split, self.coarse, self.fine = self._groups(special_positions, block)
        self._scales: dict[Any, tuple[np.ndarray, np.ndarray]] = {}
        self._levels: dict[str, _Level] = {}

    @property
    def size(self) -> int:
        """The number of inputs: tokens × positions × types."""
        return int(self.tokens * self.position_count * self.type_count)

    def _position_type_sums(self) -> Enclosure:
        """``B_p + C_s`` for every (s, p), as a ``[S·P, d]`` enclosure (row ``s·P + p``)."""
        rows = [self.positions + self._broadcast_type(s) for s in range(self.type_count)]
        return Enclosure(
            np.concatenate([r.mid for r in rows]),
            np.concatenate([np.broadcast_to(r.rad, r.mid.shape) for r in rows]),
        )

    def _broadcast_type(self, s: int) -> Enclosure:
        shape = self.positions.mid.shape
        row = self.types[s : s + 1]
        return Enclosure(
            np.broadcast_to(row.mid, shape).copy(), np.broadcast_to(row.rad, shape).copy()
        )

    def _inverse_scale(self) -> tuple[np.ndarray, np.ndarray]:
        sums = self._position_type_sums()
        sums_t = Enclosure(sums.mid.T.copy(), np.broadcast_to(sums.rad, sums.mid.shape).T.copy())
        norm_sums = sums.row_norms_squared()
        norm_words = self.words.row_norms_squared()
        d, eps = float(self.dim), float(self.tables.eps)
        shape = (self.type_count, self.tokens, self.position_count)
        inv_lo = np.empty(shape, dtype=np.float32)
        inv_hi = np.empty(shape, dtype=np.float32)
        chunk = max(1, 2**22 // max(1, sums.mid.shape[0]))
        for start in range(0, self.tokens, chunk):
            part = slice(start, start + chunk)
            cross = matmul(self.words[part], sums_t)  # [t, S·P]
            low = down(norm_words.lo[part, None] + norm_sums.lo[None, :])
            low = np.maximum(down(low + 2 * cross.lo), 0.0)
            high = up(up(norm_words.hi[part, None] + norm_sums.hi[None, :]) + 2 * cross.hi)
            scale_lo = down(np.sqrt(down(down(low / d) + eps)))
            scale_hi = up(np.sqrt(up(up(high / d) + eps)))
            lo = down(1.0 / scale_hi).reshape(-1, self.type_count, self.position_count)
            hi = up(1.0 / scale_lo).reshape(-1, self.type_count, self.position_count)
            inv_lo[:, part, :] = _float32_down(lo.transpose(1, 0, 2))
            inv_hi[:, part, :] = _float32_up(hi.transpose(1, 0, 2))
        return inv_lo, inv_hi

    def _groups(
        self, special_positions: int, block: int
    ) -> tuple[list[PositionGroup], list[PositionGroup], list[PositionGroup]]:
        sums = self._position_type_sums()
        norms = sums.mid.reshape(self.type_count, self.position_count, -1)
        largest = np.linalg.norm(norms, axis=-1).max(axis=0)
        count = min(max(special_positions, 1), self.position_count - 1)
        ranked = np.argsort(-largest, kind="stable")
        special = np.sort(ranked[:count])
        rest = np.setdiff1d(np.arange(self.position_count), special)
        types = np.arange(self.type_count)
        split = [
            PositionGroup(ranked[:1], types),
            PositionGroup(np.setdiff1d(np.arange(self.position_count), ranked[:1]), types),
        ]
        coarse = [PositionGroup(np.array([p]), types) for p in special]
        coarse.append(PositionGroup(rest, types))
        fine = [PositionGroup(np.array([p]), np.array([s])) for p in special for s in types]
        for start in range(0, rest.size, block):
            for s in types:
                fine.append(PositionGroup(rest[start : start + block], np.array([s])))
        return split, coarse, fine

    def level_scales(self, groups: Sequence[PositionGroup]) -> tuple[np.ndarray, np.ndarray]:
        """Per group and token (``[G, T]``), the smallest ``inv`` lower bound and the
        largest upper bound over the group's positions and types (cached per level)."""
        key = tuple((tuple(g.positions.tolist()), tuple(g.types.tolist())) for g in groups)
        if key not in self._scales:
            lows, highs = [], []
            for g in groups:
                lo = self.inv_lo[g.types][:, :, g.positions]
                hi = self.inv_hi[g.types][:, :, g.positions]
                lows.append(lo.min(axis=(0, 2)).astype(np.float64))
                highs.append(hi.max(axis=(0, 2)).astype(np.float64))
            self._scales[key] = (np.stack(lows), np.stack(highs))
        return self._scales[key]

    def level(self, name: str) -> _Level:
        """The ``"split"``, ``"coarse"`` or ``"fine"`` groups with their data (cached)."""
        if name not in self._levels:
            self._levels[name] = _Level(
                self, {"split": self.split, "coarse": self.coarse, "fine": self.fine}[name]
            )
        return self._levels[name]


@dataclass(frozen=True)
class HeadParts:
    """A head's keys and queries on the domain: ``κ = inv·(U_t + W_p + Y_s)`` and
    ``q = inv·(U'_t + W'_p + Y'_s) + q₀``, each part an enclosure."""

    key_token: Enclosure
    key_position: Enclosure
    key_type: Enclosure
    query_token: Enclosure
    query_position: Enclosure
    query_type: Enclosure
    query_offset: Enclosure
    scaling: float

    def queries(
        self, domain: EmbeddingDomain, token: np.ndarray, position: np.ndarray, kind: np.ndarray
    ) -> Enclosure:
        """The query vectors of the given inputs, enclosed (``inv`` as an interval)."""
        inv_lo = domain.inv_lo[kind, token, position].astype(np.float64)[:, None]
        inv_hi = domain.inv_hi[kind, token, position].astype(np.float64)[:, None]
        inv = Enclosure((inv_lo + inv_hi) / 2, up((inv_hi - inv_lo) / 2))
        core = self.query_token[token] + self.query_position[position] + self.query_type[kind]
        return inv.times(core) + Enclosure(
            np.broadcast_to(self.query_offset.mid, core.mid.shape),
            np.broadcast_to(self.query_offset.rad, core.mid.shape),
        )

    def keys(
        self, domain: EmbeddingDomain, token: np.ndarray, position: np.ndarray, kind: np.ndarray
    ) -> Enclosure:
        """The key parts ``κ`` of the given inputs, enclosed."""
        inv_lo = domain.inv_lo[kind, token, position].astype(np.float64)[:, None]
        inv_hi = domain.inv_hi[kind, token, position].astype(np.float64)[:, None]
        inv = Enclosure((inv_lo + inv_hi) / 2, up((inv_hi - inv_lo) / 2))
        return inv.times(self.key_token[token] + self.key_position[position] + self.key_type[kind])


def _transposed(e: Enclosure) -> Enclosure:
    return Enclosure(e.mid.T.copy(), np.broadcast_to(e.rad, e.mid.shape).T.copy())


def head_parts(domain: EmbeddingDomain, weights: HeadWeights) -> HeadParts:
    """The enclosed key and query parts of one head over ``domain``.

    ``weights`` must be the head's rows over the same LayerNorm the domain was built with.
    """
    if not (
        np.array_equal(weights.gamma, domain.tables.gamma)
        and np.array_equal(weights.beta, domain.tables.beta)
    ):
        raise ValueError("the head's LayerNorm parameters are not the domain's")
    key_map = Enclosure.exact(weights.wk * weights.gamma)  # float32·float32: exact in float64
    query_map = Enclosure.exact(weights.wq * weights.gamma)
    key_t, query_t = _transposed(key_map), _transposed(query_map)
    offset = matmul(Enclosure.exact(weights.wq), Enclosure.exact(weights.beta[:, None]))
    offset = Enclosure(offset.mid[:, 0], offset.rad[:, 0]) + Enclosure.exact(weights.bq)
    return HeadParts(
        key_token=matmul(domain.words, key_t),
        key_position=matmul(domain.positions, key_t),
        key_type=matmul(domain.types, key_t),
        query_token=matmul(domain.words, query_t),
        query_position=matmul(domain.positions, query_t),
        query_type=matmul(domain.types, query_t),
        query_offset=offset,
        scaling=float(weights.scaling),
    )


def _norms_up(e: Enclosure) -> tuple[np.ndarray, np.ndarray]:
    """Per row, upper bounds on ``‖mid‖₂`` and ``‖rad‖₂``."""
    rad = np.broadcast_to(e.rad, e.mid.shape)
    n = e.mid.shape[-1]
    mid = up(np.sqrt(_widen(np.einsum("...i,...i->...", e.mid, e.mid), n)))
    radius = up(np.sqrt(_widen(np.einsum("...i,...i->...", rad, rad), n)))
    return mid, radius


class _Level:
    """Groups of one granularity (a partition of the positions, each part with some token
    types), their ``inv`` ranges per token and their layout."""

    def __init__(self, domain: EmbeddingDomain, groups: Sequence[PositionGroup]) -> None:
        self.groups = list(groups)
        sets: dict[tuple[int, ...], int] = {}
        for g in self.groups:
            sets.setdefault(tuple(int(p) for p in g.positions), len(sets))
        order = sorted(sets, key=lambda positions: positions[0])
        self.perm = np.concatenate([np.array(positions) for positions in order])
        if sorted(self.perm.tolist()) != list(range(domain.position_count)):
            raise ValueError("a level's position sets must partition the positions")
        sizes = np.array([len(positions) for positions in order])
        self.starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        index = {positions: i for i, positions in enumerate(order)}
        self.set_of_group = np.array(
            [index[tuple(int(p) for p in g.positions)] for g in self.groups]
        )
        self.type_mask = np.zeros((len(self.groups), domain.type_count), dtype=bool)
        for i, g in enumerate(self.groups):
            self.type_mask[i, g.types] = True
        self.scale_lo, self.scale_hi = domain.level_scales(self.groups)  # [G, T] each
        width = max(g.positions.size * g.types.size for g in self.groups)
        self.positions = np.zeros((len(self.groups), width), dtype=np.int64)
        self.kinds = np.zeros((len(self.groups), width), dtype=np.int64)
        self.valid = np.zeros((len(self.groups), width), dtype=bool)
        for i, g in enumerate(self.groups):
            s, p = np.meshgrid(g.types, g.positions, indexing="ij")
            self.positions[i, : s.size] = p.ravel()
            self.kinds[i, : s.size] = s.ravel()
            self.valid[i, : s.size] = True

    def offsets(
        self, b_lo: np.ndarray, b_hi: np.ndarray, e_lo: np.ndarray, e_hi: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Per row and group: an upper bound on ``max (W_p + Y_s)·q`` over the group's
        positions and types, and a lower bound on the minimum (``b``, ``e``: ``[rows, ·]``).

        The group is a product of positions and types, so the maximum of the sum is the
        sum of the maxima (one rounding)."""
        b_high = np.maximum.reduceat(b_hi[:, self.perm], self.starts, axis=1)[:, self.set_of_group]
        b_low = np.minimum.reduceat(b_lo[:, self.perm], self.starts, axis=1)[:, self.set_of_group]
        mask = self.type_mask[None]
        e_high = np.where(mask, e_hi[:, None, :], -np.inf).max(axis=-1)
        e_low = np.where(mask, e_lo[:, None, :], np.inf).min(axis=-1)
        return up(b_high + e_high), down(b_low + e_low)


@dataclass(frozen=True)
class KeyScore:
    """One query's exact evaluation over every key: bounds and the extreme keys found."""

    upper: float
    """Certified upper bound on ``max_k q·κ``."""
    upper_found: float
    """A certified lower bound on the same maximum: the score of :attr:`argmax` (lower end)."""
    argmax: tuple[int, int, int]
    """The key ``(token, position, type)`` attaining ``upper_found``."""
    lower: float
    """Certified lower bound on ``min_k q·κ``."""
    lower_found: float
    argmin: tuple[int, int, int]
    enumerated: int
    """How many keys were evaluated one by one."""


class KeySupport:
    """Bounds on ``max_k q·κ`` and ``min_k q·κ`` over every key of one head's domain.

    Parameters
    ----------
    domain, parts
        The domain and the head's parts on it.

    Notes
    -----
    Keys are grouped by position and token type (the domain's ``split``, ``coarse`` and
    ``fine`` groups).  Within a group every key of token ``t`` scores
    ``inv·(q·U_t + o)``, with ``o`` the position and type part and ``inv`` in the token's
    range ``[inv_lo, inv_hi]`` over the group; so the score is at most
    ``max(inv_hi·n, inv_lo·n)`` for any upper bound ``n`` of the numerator, and at least
    ``min(inv_hi·n, inv_lo·n)`` for a lower bound.
    """

    def __init__(self, domain: EmbeddingDomain, parts: HeadParts) -> None:
        self.domain = domain
        self.parts = parts
        self.levels = {name: domain.level(name) for name in ("split", "coarse", "fine")}
        self._matrices: dict[str, Any] = {}
        self._token_mid_norm, self._token_rad_norm = _norms_up(parts.key_token)
        self._key_token_t = _transposed(parts.key_token)
        self._key_position_t = _transposed(parts.key_position)
        self._key_type_t = _transposed(parts.key_type)

    def _parts(self, rows: Enclosure) -> tuple[Enclosure, Enclosure]:
        return matmul(rows, self._key_position_t), matmul(rows, self._key_type_t)

    # -- many queries: float32 matrix products with a Cauchy–Schwarz error bound -----------

    def _augmented(self, level: _Level, g: int, which: str) -> tuple[Any, float, float, float]:
        """``[scale·U_t, scale]`` (``scale`` the group's ``inv`` bound ``which``) as a float32
        ``[k + 1, T]`` tensor, with the largest row norm and the two radius terms."""
        name = f"{id(level)}:{g}:{which}"
        if name not in self._matrices:
            import torch

            scale = (level.scale_hi if which == "hi" else level.scale_lo)[g]
            block = np.concatenate(
                [self.parts.key_token.mid * scale[:, None], scale[:, None]], axis=1
            )
            k = block.shape[1]
            largest = float(up(np.sqrt(_widen(np.einsum("ij,ij->i", block, block).max(), k))))
            with_rad = float(up((scale * self._token_rad_norm).max()))
            with_mid = float(up((scale * (self._token_mid_norm + self._token_rad_norm)).max()))
            self._matrices[name] = (
                torch.from_numpy(block.astype(np.float32)).T.contiguous(),
                largest,
                with_rad,
                with_mid,
            )
        return self._matrices[name]  # type: ignore[no-any-return]

    def _extreme(
        self,
        rows: Enclosure,
        offset: np.ndarray,
        level: _Level,
        g: int,
        which: str,
        side: str,
        chunk: int = 2048,
    ) -> np.ndarray:
        """Per row, ``max_t`` (``side == "max"``) or ``min_t`` of ``scale_t·(q·U_t + offset)``
        over every token ``t``, moved outwards past every error.

        Notes
        -----
        One float32 product ``[q, offset]·[scale·U_t, scale]``.  Its error, per term
        ``|x_i y_i|``, is within ``γ_{k+1}`` (the sum) plus the roundings of both factors
        to float32 and of ``scale·U_t`` in float64; ``Σ|x_i y_i| <= ‖x‖‖y‖`` turns that into
        ``γ_{k+8}‖x‖ max_t‖y_t‖``.  The radii of ``q`` and ``U_t`` add
        ``scale·(‖q.mid‖‖U.rad‖ + ‖q.rad‖(‖U.mid‖ + ‖U.rad‖))``.
        """
        import torch

        matrix, largest, with_rad, with_mid = self._augmented(level, g, which)
        k = rows.mid.shape[1]
        augmented = np.concatenate([rows.mid, offset[:, None]], axis=1)
        mid_norm, rad_norm = _norms_up(rows)
        aug_norm = up(np.sqrt(_widen(np.einsum("ij,ij->i", augmented, augmented), k + 1)))
        error = up(
            up(gamma(k + 8, U32) * aug_norm * largest)
            + up(mid_norm * with_rad)
            + up(rad_norm * with_mid)
        )
        values = np.empty(len(augmented))
        source = torch.from_numpy(augmented.astype(np.float32))
        for start in range(0, len(augmented), chunk):
            product = torch.mm(source[start : start + chunk], matrix)
            found = product.amax(dim=1) if side == "max" else product.amin(dim=1)
            values[start : start + chunk] = found.double().numpy()
        return up(values + error) if side == "max" else down(values - error)

    def bounds(self, rows: Enclosure, level: str = "coarse") -> tuple[np.ndarray, np.ndarray]:
        """Certified ``(upper of max_k q·κ, lower of min_k q·κ)`` for each query row.

        Parameters
        ----------
        rows
            ``[count, k]`` query vectors (enclosed).
        level
            Which groups of keys: ``"split"`` (two), ``"coarse"`` or ``"fine"``.

        Notes
        -----
        Where a numerator is positive the score is at most ``inv_hi·numerator``; where it
        is negative the score is negative.  So once ``max_t inv_hi·(q·U_t + o_max) >= 0``
        for some group it bounds the maximum over every group, and only the rows where it
        does not are bounded again with ``inv_lo`` (symmetrically for the minimum).
        """
        groups = self.levels[level]
        b, e = self._parts(rows)
        high, low = groups.offsets(b.lo, b.hi, e.lo, e.hi)
        upper = np.full(len(rows.mid), -np.inf)
        lower = np.full(len(rows.mid), np.inf)
        for g in range(len(groups.groups)):
            upper = np.maximum(upper, self._extreme(rows, high[:, g], groups, g, "hi", "max"))
            lower = np.minimum(lower, self._extreme(rows, low[:, g], groups, g, "hi", "min"))
        for side, redo in (("max", np.flatnonzero(upper < 0)), ("min", np.flatnonzero(lower > 0))):
            if redo.size == 0:
                continue
            sub = rows[redo]
            for g in range(len(groups.groups)):
                if side == "max":
                    value = self._extreme(sub, high[redo, g], groups, g, "lo", side)
                    upper[redo] = np.maximum(upper[redo], value)
                else:
                    value = self._extreme(sub, low[redo, g], groups, g, "lo", side)
                    lower[redo] = np.minimum(lower[redo], value)
        return upper, lower

    def spread_upper(self, rows: Enclosure, level: str = "coarse") -> np.ndarray:
        """Certified upper bounds on ``max_k q·κ − min_k q·κ`` (not yet scaled)."""
        upper, lower = self.bounds(rows, level)
        return up(upper - lower)

    # -- one query: exact over every key, by branch and bound -------------------------------

    def exact(self, row: Enclosure, chunk: int = 4096) -> KeyScore:
        """Every key's score for one query, bounded: the maximum and minimum within float error.

        Tokens are bounded over the coarse groups, the promising ones over the fine groups,
        and the promising fine groups are enumerated key by key (best bound first) until
        no group left can beat the best key found.
        """
        single = Enclosure(
            np.atleast_2d(row.mid), np.atleast_2d(np.broadcast_to(row.rad, row.mid.shape))
        )
        a = matmul(single, self._key_token_t)
        b, e = self._parts(single)
        parts = (a.lo[0], a.hi[0], b.lo[0], b.hi[0], e.lo[0], e.hi[0])
        upper, found_hi, arg_hi, n_hi = self._exact_side("max", parts, chunk)
        lower, found_lo, arg_lo, n_lo = self._exact_side("min", parts, chunk)
        return KeyScore(upper, found_hi, arg_hi, lower, found_lo, arg_lo, n_hi + n_lo)

    def _oriented(
        self, level: _Level, tokens: np.ndarray, side: str, parts: tuple[np.ndarray, ...]
    ) -> np.ndarray:
        """``[groups, tokens]`` upper bounds of ``sign·score`` over each group's keys of each
        token (``sign`` = +1 for the maximum, −1 for the minimum)."""
        a_lo, a_hi, b_lo, b_hi, e_lo, e_hi = parts
        high, low = level.offsets(b_lo[None], b_hi[None], e_lo[None], e_hi[None])
        lo_scale, hi_scale = level.scale_lo[:, tokens], level.scale_hi[:, tokens]
        if side == "max":
            numerator = up(a_hi[None, tokens] + high[0][:, None])
            return up(np.maximum(numerator * hi_scale, numerator * lo_scale))
        numerator = down(a_lo[None, tokens] + low[0][:, None])
        return -down(np.minimum(numerator * hi_scale, numerator * lo_scale))

    def _exact_side(
        self, side: str, parts: tuple[np.ndarray, ...], chunk: int
    ) -> tuple[float, float, tuple[int, int, int], int]:
        fine = self.levels["fine"]
        every = np.arange(self.domain.tokens)
        coarse = self._oriented(self.levels["coarse"], every, side, parts).max(axis=0)
        # The best few tokens' keys first, for a good lower bound to prune with.
        first = np.argsort(-coarse, kind="stable")[:4]
        pairs_g, pairs_t = np.nonzero(np.ones((len(fine.groups), first.size), dtype=bool))
        upper, lower, keys = self._enumerate(side, first[pairs_t], pairs_g, parts)
        best_upper = float(upper.max())
        top = int(np.argmax(lower))
        best, best_key = float(lower[top]), keys[top]
        enumerated = int(fine.valid[pairs_g].sum())
        tokens = np.setdiff1d(np.flatnonzero(coarse > best), first)
        if tokens.size:
            bounds = self._oriented(fine, tokens, side, parts)
            groups, which = np.nonzero(bounds > best)
            values = bounds[groups, which]
            order = np.argsort(-values, kind="stable")
            groups, which, values = groups[order], tokens[which[order]], values[order]
            while groups.size:
                upper, lower, keys = self._enumerate(side, which[:chunk], groups[:chunk], parts)
                enumerated += int(fine.valid[groups[:chunk]].sum())
                best_upper = max(best_upper, float(upper.max()))
                top = int(np.argmax(lower))
                if lower[top] > best:
                    best, best_key = float(lower[top]), keys[top]
                keep = values[chunk:] > best
                groups, which = groups[chunk:][keep], which[chunk:][keep]
                values = values[chunk:][keep]
        # Every group not enumerated is bounded by ``best``, which ``best_upper`` is above.
        if side == "max":
            return float(up(best_upper)), best, best_key, enumerated
        return float(down(-best_upper)), -best, best_key, enumerated

    def _enumerate(
        self, side: str, tokens: np.ndarray, groups: np.ndarray, parts: tuple[np.ndarray, ...]
    ) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int, int]]]:
        """(token, fine group) pairs key by key: per pair, the upper bound of ``sign·score``
        over its keys, the largest certified lower bound of it and that key."""
        a_lo, a_hi, b_lo, b_hi, e_lo, e_hi = parts
        fine = self.levels["fine"]
        positions, kinds, valid = fine.positions[groups], fine.kinds[groups], fine.valid[groups]
        t = tokens[:, None]
        inv_lo = self.domain.inv_lo[kinds, t, positions].astype(np.float64)
        inv_hi = self.domain.inv_hi[kinds, t, positions].astype(np.float64)
        high = up(up(a_hi[t] + b_hi[positions]) + e_hi[kinds])
        low = down(down(a_lo[t] + b_lo[positions]) + e_lo[kinds])
        score_hi = up(np.maximum(high * inv_hi, high * inv_lo))
        score_lo = down(np.minimum(low * inv_hi, low * inv_lo))
        upper, lower = (score_hi, score_lo) if side == "max" else (-score_lo, -score_hi)
        upper = np.where(valid, upper, -np.inf).max(axis=1)
        lower = np.where(valid, lower, -np.inf)
        column = lower.argmax(axis=1)
        rows = np.arange(tokens.size)
        keys = [
            (int(tokens[i]), int(positions[i, c]), int(kinds[i, c]))
            for i, c in zip(rows, column, strict=True)
        ]
        return upper, lower[rows, column], keys
