"""Every head's certificate over what tokens can reach, and the set each one covers.

* **layer 0**: :func:`~.token_certificate.certify_tokens` over the finite set of every
  token × position × token type (:class:`~.token_domain.EmbeddingDomain`);
* **later layers**: :class:`~.propagation.BoxPropagation` bounds every reachable hidden
  state by a box; a head's certificate over tokens is the smaller of the box's bound and
  the LayerNorm-set certificate (which holds for any hidden state, so for these too).

:func:`token_certificates` runs both for a loaded model and returns one
:class:`HeadTokenBound` per head, with the best triple of layer 0 made into a sequence
of tokens (:func:`triple_sequence`) for the model to run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from softmax_dispersion.empirical.pretrained.propagation import (
    BoxPropagation,
    box_spread_bound,
    domain_boxes,
)
from softmax_dispersion.empirical.pretrained.token_certificate import (
    TokenCertificate,
    certify_tokens,
    realisable_triple,
)
from softmax_dispersion.empirical.pretrained.token_domain import (
    EmbeddingDomain,
    EmbeddingTables,
    head_parts,
)

__all__ = [
    "SETS",
    "HeadTokenBound",
    "TokenBounds",
    "embedding_tables",
    "token_certificates",
    "triple_sequence",
]

SETS: dict[str, str] = {
    "layernorm": (
        "every LayerNorm output γ ⊙ z + β (z mean-free, |z|² ≤ d) as query and as keys: "
        "any hidden state whatever the input"
    ),
    "tokens": (
        "every input of layer 0 — each of the vocabulary's tokens at each position with "
        "each token type, after the embedding LayerNorm — as query and as keys, chosen "
        "independently: every row of every sequence (any position ids and token types)"
    ),
    "box": (
        "every hidden state inside the box propagated from layer 0's inputs (interval "
        "arithmetic through attention, MLP and LayerNorm), intersected with the "
        "LayerNorm set"
    ),
}
"""What each kind of certificate covers, by the name the run records."""


@dataclass(frozen=True)
class HeadTokenBound:
    """One head's certificate over tokens."""

    layer: int
    head: int
    upper: float
    """Certified upper bound on the head's spread over the set :attr:`kind` names."""
    kind: str
    """A key of :data:`SETS`."""
    box_bound: float | None
    """The box propagation's bound (layers after the first), whether or not it is smaller."""
    certificate: TokenCertificate | None
    """Layer 0's enumeration, with its best triple."""
    triple_estimate: float | None
    """Layer 0: the spread of the best realisable triple (float64 estimate, not certified)."""
    sequence: np.ndarray | None
    token_types: np.ndarray | None
    """Layer 0: a sequence of tokens realising the triple, and its token types."""
    rows: tuple[int, int, int] | None
    """Layer 0: the query position and the positions of the high and low keys in it."""


@dataclass(frozen=True)
class TokenBounds:
    """Every head's bound and the propagation's record."""

    heads: list[HeadTokenBound]
    smallest_variance: list[float]
    """Per layer after the first, the smallest variance of a LayerNorm input the boxes allow."""
    first_box_gap: float
    """Largest lower end minus smallest upper end of layer 0's input box (a constant
    vector fits in the box when it is not positive)."""
    seconds: dict[str, float]


def embedding_tables(loaded: Any) -> EmbeddingTables:
    """The embedding weights and LayerNorm of a loaded BERT model, as float64 copies."""
    embeddings = loaded.model.embeddings

    def array(tensor: Any) -> np.ndarray:
        return np.asarray(tensor.detach().cpu().double().numpy())

    return EmbeddingTables(
        words=array(embeddings.word_embeddings.weight),
        positions=array(embeddings.position_embeddings.weight),
        types=array(embeddings.token_type_embeddings.weight),
        gamma=array(embeddings.LayerNorm.weight),
        beta=array(embeddings.LayerNorm.bias),
        eps=float(embeddings.LayerNorm.eps),
    )


def triple_sequence(
    query: tuple[int, int, int], high: tuple[int, int, int], low: tuple[int, int, int]
) -> tuple[np.ndarray, np.ndarray]:
    """A sequence of tokens with the three inputs at their positions (the other positions
    hold the query's token, type 0): its row at the query's position has the triple's
    keys among its keys.

    Examples
    --------
    >>> ids, types = triple_sequence((7, 3, 1), (5, 0, 0), (9, 1, 1))
    >>> ids.tolist(), types.tolist()
    ([5, 9, 7, 7], [0, 1, 0, 1])
    """
    inputs = (query, high, low)
    n = max(p for _, p, _ in inputs) + 1
    ids = np.full(n, query[0], dtype=np.int64)
    types = np.zeros(n, dtype=np.int64)
    for token, position, kind in inputs:
        ids[position], types[position] = token, kind
    return ids, types


def token_certificates(
    loaded: Any,
    ln_bounds: Sequence[Sequence[float]],
    *,
    tolerance: float = 0.1,
    log: Callable[[str], None] = lambda line: None,
    domain: EmbeddingDomain | None = None,
) -> TokenBounds:
    """Certify every head of ``loaded`` over what tokens can reach.

    Parameters
    ----------
    loaded
        A :class:`~.model.LoadedModel`.
    ln_bounds
        ``[layers][heads]``: the LayerNorm-set certificates (upper bounds), used where
        smaller than the box bound.
    tolerance
        Layer 0's refinement stops within this relative margin of the best triple.
    log
        Called with a line per stage.
    domain
        Layer 0's domain, when already built (tests).
    """
    seconds: dict[str, float] = {}
    clock = time.perf_counter()
    domain = domain or EmbeddingDomain(embedding_tables(loaded))
    seconds["domain"] = time.perf_counter() - clock
    log(f"layer 0's domain: {domain.size:,} inputs ({seconds['domain']:.1f} s)")
    heads: list[HeadTokenBound] = []
    clock = time.perf_counter()
    for h in range(loaded.heads):
        parts = head_parts(domain, loaded.head_weights(0, h))
        certificate = certify_tokens(domain, parts, tolerance=tolerance)
        high, low, estimate = realisable_triple(domain, parts, certificate.query)
        ids, types = triple_sequence(certificate.query, high, low)
        kind = "tokens"
        upper = certificate.spread_upper
        if ln_bounds[0][h] < upper:  # never here, but the smaller certificate is the one
            upper, kind = float(ln_bounds[0][h]), "layernorm"
        heads.append(
            HeadTokenBound(
                0,
                h,
                upper,
                kind,
                None,
                certificate,
                estimate,
                ids,
                types,
                (certificate.query[1], high[1], low[1]),
            )
        )
        log(
            f"layer 0 head {h}: certified {certificate.spread_upper:.2f} over tokens, best "
            f"triple {certificate.found:.2f} ({certificate.seconds:.0f} s)"
        )
    seconds["layer 0"] = time.perf_counter() - clock
    clock = time.perf_counter()
    first_input, first_output = domain_boxes(domain, loaded)
    layers = BoxPropagation(loaded, first_input, first_output).run()
    for box in layers[1:]:
        for h in range(loaded.heads):
            bound = box_spread_bound(box.box, loaded.head_weights(box.layer, h))
            ln = float(ln_bounds[box.layer][h])
            kind, upper = ("box", bound) if bound < ln else ("layernorm", ln)
            heads.append(
                HeadTokenBound(box.layer, h, upper, kind, bound, None, None, None, None, None)
            )
    seconds["later layers"] = time.perf_counter() - clock
    log(f"later layers: boxes propagated ({seconds['later layers']:.1f} s)")
    return TokenBounds(
        heads=heads,
        smallest_variance=[b.smallest_variance for b in layers[1:]],
        first_box_gap=float(first_input.lo.max() - first_input.hi.min()),
        seconds=seconds,
    )
