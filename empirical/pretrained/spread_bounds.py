"""Certified logit spreads of post-LayerNorm attention heads, for every possible input.

In a post-LayerNorm transformer (BERT) every attention layer reads a LayerNorm output
``x = γ ⊙ z + β`` with ``z = (v − mean v)/sqrt(Var v + ε)``: ``z`` has mean zero and
``‖z‖² = d·Var/(Var + ε) <= d``, **whatever** the text, the embeddings or the earlier
layers did.  A head's logits over keys ``x_i`` for a query ``x_y`` are
``e_i = (W_q x_y + b_q)ᵀ(W_k x_i + b_k)·scaling``.  Everything that does not depend on
the key — ``b_k`` and ``W_k β`` — adds the same number to every logit of the row, and a
row's spread ``δ = max e − min e`` does not see it.  What is left is

    ``e_i = const + scaling · q̃ᵀ z_i``,  ``q̃ = A z_y + c``,
    ``A = P Γ W_kᵀ W_q Γ P``,  ``c = P Γ W_kᵀ (W_q β + b_q)``,

with ``Γ = diag(γ)`` and ``P = I − 11ᵀ/d`` (``z = Pz``).  Two certified bounds follow
from the theory's formulas, evaluated in ball arithmetic (never retyped):

**product** (the query–key product folded through γ, β)
    T9's LayerNorm rule with unit gain bounds ``‖z‖ <= r₀ = sqrt(d)``
    (:data:`~softmax_dispersion.theory.composition.layer_norm_radius`); T9's linear
    rule bounds ``‖q̃‖ <= σ_max(A) r₀ + ‖c‖``
    (:data:`~softmax_dispersion.theory.composition.linear_radius`); T8 with ``Q = K = I``
    bounds ``δ <= 2 ‖q̃‖ r₀ / s``
    (:data:`~softmax_dispersion.theory.weight_norms.logit_spread_bound`, ``s = 1/scaling``).
**factored** (T9's radius recursion, layer by layer)
    ``‖x‖ <= r = sqrt(d) max|γ_i| + ‖β‖``; the query ``W_q x + b_q`` has norm at most
    ``σ_max(W_q) r + ‖b_q‖``; T8 with ``K = W_k`` bounds ``δ`` by
    ``2 σ_max(W_k) (σ_max(W_q) r + ‖b_q‖) r / s``.

``σ_max(A)`` is certified through the ``k × k`` Gram matrices of ``A = L R``
(``L = PΓW_kᵀ``, ``R = W_qΓP``): ``LᵀL = W_kΓPΓW_kᵀ``, ``RRᵀ = W_qΓPΓW_qᵀ``
(:func:`~softmax_dispersion.numerics.operator_norm.certified_largest_eigenvalue`), and
``‖c‖² = bᵀ(LᵀL)b`` with ``b = W_q β + b_q``, all in ``arb`` balls.  The head's
certified spread ``δ*`` is the smaller bound, and T4's
:data:`~softmax_dispersion.theory.dispersion_size.dispersion_size` at ``ε = ½``,
``θ = 1`` gives the size ``n*(½) = 1 + e^{δ*}`` from which no input whatsoever lets the
head put half its weight on one position.

The product bound is attained on the LayerNorm outputs up to a factor close to 1:
:func:`witness_spread` builds three admissible LayerNorm outputs (a query along ``A``'s
top singular direction, keys ``±r₀ q̃/‖q̃‖``) and measures the head's spread on them from
the live weights.  A certificate that a head's weights no longer satisfy (a weight
changed after certification) is caught there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from softmax_dispersion.numerics._backends import backend
from softmax_dispersion.numerics._dyadic import decimal_string
from softmax_dispersion.numerics.ball_formulas import ball_value
from softmax_dispersion.numerics.operator_norm import (
    arb_gram,
    arb_matrix,
    certified_largest_eigenvalue,
    single_threaded_blas,
)
from softmax_dispersion.theory.composition import layer_norm_radius, linear_radius
from softmax_dispersion.theory.dispersion_size import dispersion_size
from softmax_dispersion.theory.weight_norms import logit_spread_bound

__all__ = [
    "HeadCertificate",
    "HeadWeights",
    "certify_head",
    "witness_spread",
]

_PRECISION = 128
#: How far inside the sphere ‖z‖ = sqrt(d) the witness stays (LayerNorm's ε > 0 keeps
#: ‖z‖ strictly below sqrt(d); every smaller norm is attained exactly).
_WITNESS_SHRINK = 1 - 2.0**-30


@dataclass(frozen=True)
class HeadWeights:
    """What a head's logits depend on: its LayerNorm's γ, β and its query and key maps.

    Arrays are float64 copies of the model's float32 parameters (exactly the same
    numbers); ``wq``/``wk`` are the head's ``k × d`` rows of the query and key weights.
    """

    gamma: np.ndarray
    beta: np.ndarray
    wq: np.ndarray
    bq: np.ndarray
    wk: np.ndarray
    bk: np.ndarray
    scaling: float
    """The factor the logits are multiplied by (``1/sqrt(k)`` as a float)."""

    def __post_init__(self) -> None:
        d = self.gamma.shape[0]
        k = self.wq.shape[0]
        shapes = {
            "beta": (self.beta.shape, (d,)),
            "wq": (self.wq.shape, (k, d)),
            "bq": (self.bq.shape, (k,)),
            "wk": (self.wk.shape, (k, d)),
            "bk": (self.bk.shape, (k,)),
        }
        for name, (shape, expected) in shapes.items():
            if shape != expected:
                raise ValueError(f"{name} must have shape {expected}, got {shape}")
        if not self.scaling > 0:
            raise ValueError(f"scaling must be positive, got {self.scaling}")


@dataclass(frozen=True)
class HeadCertificate:
    """A head's certified logit spread ``δ*`` and dispersion size ``n*(½)``.

    Every number is an upper bound, exact (a dyadic rational) or rounded upwards.
    """

    sigma_product: Fraction
    """``σ_max(PΓW_kᵀW_qΓP)`` upper bound."""
    query_offset: Fraction
    """``‖PΓW_kᵀ(W_q β + b_q)‖`` upper bound."""
    delta_product: Fraction
    """The product route's spread bound."""
    sigma_q: Fraction
    sigma_k: Fraction
    """``σ_max(W_q)``, ``σ_max(W_k)`` upper bounds (the factored route)."""
    input_radius: Fraction
    """``sqrt(d) max|γ| + ‖β‖`` upper bound (T9's LayerNorm radius)."""
    delta_factored: Fraction
    """The factored route's spread bound."""
    log10_n_star_half: float
    """An upper bound on ``log10 n*(½)`` (rounded up)."""
    n_star_half: str
    """``n*(½) = 1 + e^{δ*}`` as a decimal string rounded up (6 digits)."""

    @property
    def delta_star(self) -> Fraction:
        """The certified spread: the smaller of the two bounds."""
        return min(self.delta_product, self.delta_factored)

    @property
    def route(self) -> str:
        """Which bound is ``delta_star``: ``"product"`` or ``"factored"``."""
        return "product" if self.delta_product <= self.delta_factored else "factored"

    def decimal(self, value: Fraction | None = None, digits: int = 8) -> str:
        """``value`` (``delta_star`` by default) as a decimal string rounded up."""
        value = self.delta_star if value is None else value
        return _decimal_up(value, digits)


def _decimal_up(value: Fraction, digits: int) -> str:
    if value == 0:
        return "0"
    # A fraction as a dyadic is not always possible: round up to a dyadic first.
    exponent = value.numerator.bit_length() - value.denominator.bit_length() - 80
    mantissa = math.ceil(value / Fraction(2) ** exponent)
    return decimal_string((mantissa, exponent), digits, "up")


def _upper(bk: Any, ball: Any) -> Fraction:
    mantissa, exponent = bk.endpoints(ball)[1]
    if exponent >= 0:
        return Fraction(mantissa << exponent)
    return Fraction(mantissa, 1 << -exponent)


def _ball(value: Fraction) -> Any:
    import flint

    return flint.arb(value.numerator) / value.denominator


def _vector_norm_upper(values: np.ndarray) -> Any:
    import flint

    total = flint.arb(0)
    for x in values:
        total += flint.arb(float(x)) ** 2
    return total.sqrt()


def certify_head(weights: HeadWeights) -> HeadCertificate:
    """Certify an upper bound on the head's logit spread over every LayerNorm output.

    Parameters
    ----------
    weights : HeadWeights
        The head's LayerNorm parameters and query/key rows.

    Returns
    -------
    HeadCertificate
        Both routes' bounds, ``δ*`` (the smaller) and ``n*(½)``.

    Notes
    -----
    Product route: ``δ <= 2 (σ_max(A) r₀ + ‖c‖) r₀ / s`` with ``r₀ = sqrt(d)``
    (T9's LayerNorm and linear rules, T8 with identity maps).  Factored route:
    ``δ <= 2 σ_max(W_k) (σ_max(W_q) r + ‖b_q‖) r / s``, ``r = sqrt(d) max|γ| + ‖β‖``.
    Each formula is the theory's sympy expression evaluated on ``arb`` balls by
    :func:`~softmax_dispersion.numerics.ball_formulas.ball_value`; the operator norms come
    from certified Gram-matrix bounds.  ``n*(½)`` is T4's
    ``1 + e^{δ*}(1 − ε)/ε`` at ``ε = ½``, ``θ = 1`` (the scale is in the logits).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> d, k = 8, 2
    >>> head = HeadWeights(np.ones(d), np.zeros(d), rng.normal(size=(k, d)), np.zeros(k),
    ...                    rng.normal(size=(k, d)), np.zeros(k), scaling=k**-0.5)
    >>> certificate = certify_head(head)
    >>> certificate.route, witness_spread(head) <= certificate.delta_star
    ('product', True)
    """
    import flint

    bk = backend("arb")
    d = weights.gamma.shape[0]
    with flint.ctx.workprec(_PRECISION), single_threaded_blas():
        scale = Fraction(1) / Fraction(weights.scaling)
        gq = weights.wq * weights.gamma  # W_q Γ: products of two float32 are exact in float64
        gk = weights.wk * weights.gamma
        key_gram = arb_gram(gk, centre_columns=True)  # LᵀL = W_k Γ P Γ W_kᵀ
        query_gram = arb_gram(gq, centre_columns=True)  # R Rᵀ = W_q Γ P Γ W_qᵀ
        sigma_product = certified_largest_eigenvalue(key_gram, query_gram).sqrt_upper
        # b = W_q β + b_q and ‖c‖² = bᵀ (LᵀL) b, in balls.
        wq, beta = arb_matrix(weights.wq), arb_matrix(weights.beta[:, None])
        b = wq * beta + arb_matrix(weights.bq[:, None])
        offset_ball = ((b.transpose() * key_gram * b)[0, 0]).sqrt()
        query_offset = _upper(bk, offset_ball)
        unit_radius = ball_value(layer_norm_radius, bk, dim=d, gain=1, beta_norm=0)
        query_radius = ball_value(
            linear_radius, bk, sigma=_ball(sigma_product), bias_norm=offset_ball, r=unit_radius
        )
        delta_product = _upper(
            bk,
            ball_value(
                logit_spread_bound,
                bk,
                sigma_q=1,
                sigma_k=1,
                y_norm=query_radius,
                x_radius=unit_radius,
                scale=scale,
            ),
        )

        sigma_q = certified_largest_eigenvalue(arb_gram(weights.wq)).sqrt_upper
        sigma_k = certified_largest_eigenvalue(arb_gram(weights.wk)).sqrt_upper
        gain = float(np.abs(weights.gamma).max())
        radius = ball_value(
            layer_norm_radius, bk, dim=d, gain=gain, beta_norm=_vector_norm_upper(weights.beta)
        )
        factored_query = ball_value(
            linear_radius,
            bk,
            sigma=_ball(sigma_q),
            bias_norm=_vector_norm_upper(weights.bq),
            r=radius,
        )
        delta_factored = _upper(
            bk,
            ball_value(
                logit_spread_bound,
                bk,
                sigma_q=1,
                sigma_k=_ball(sigma_k),
                y_norm=factored_query,
                x_radius=radius,
                scale=scale,
            ),
        )
        delta_star = min(delta_product, delta_factored)
        n_star = ball_value(dispersion_size, bk, epsilon=Fraction(1, 2), delta=delta_star, theta=1)
        log10 = _upper(bk, n_star.log() / flint.arb(10).log())
        n_star_text = decimal_string(bk.endpoints(n_star)[1], 6, "up")
    return HeadCertificate(
        sigma_product=sigma_product,
        query_offset=query_offset,
        delta_product=delta_product,
        sigma_q=sigma_q,
        sigma_k=sigma_k,
        input_radius=_upper(bk, radius),
        delta_factored=delta_factored,
        log10_n_star_half=math.nextafter(float(log10), math.inf),
        n_star_half=n_star_text,
    )


def _head_logits(weights: HeadWeights, query: np.ndarray, keys: np.ndarray) -> np.ndarray:
    q = weights.wq @ query + weights.bq
    return np.asarray((keys @ weights.wk.T + weights.bk) @ q * weights.scaling)


def witness_spread(weights: HeadWeights) -> float:
    """The head's spread on three admissible LayerNorm outputs built to nearly attain ``δ*``.

    Parameters
    ----------
    weights : HeadWeights
        The head as it is now (for example, read from a live model again).

    Returns
    -------
    float
        ``max e − min e`` over two keys for one query, evaluated in float64.

    Notes
    -----
    ``z_y = ±r v`` along the top right singular vector ``v`` of
    ``A = PΓW_kᵀW_qΓP`` (the sign that makes ``‖A z_y + c‖`` larger), keys
    ``z_± = ±r q̃/‖q̃‖`` with ``q̃ = A z_y + c``, ``r`` just below ``sqrt(d)``; each is
    mean-free with ``‖z‖ < sqrt(d)``, so ``γ ⊙ z + β`` is an output of the head's
    LayerNorm (for the input ``t z`` with ``t = sqrt(ε/(1 − ‖z‖²/d))``).  The logits
    are computed from ``weights`` directly, so a weight changed after certification
    shows up here.
    """
    with single_threaded_blas():
        return _witness(weights, weights.gamma.shape[0])


def _witness(weights: HeadWeights, d: int) -> float:
    def centre(v: np.ndarray) -> np.ndarray:
        return np.asarray(v - v.mean())

    gq, gk = weights.wq * weights.gamma, weights.wk * weights.gamma
    # A = L R with L = PΓW_kᵀ (d × k), R = W_qΓP (k × d): its top right singular vector
    # from two thin QR factorisations and the k × k core, not a d × d SVD.
    left = gk.T - gk.T.mean(axis=0)
    right = gq - gq.mean(axis=1, keepdims=True)
    _, left_r = np.linalg.qr(left)
    right_q, right_r = np.linalg.qr(right.T)
    top = right_q @ np.linalg.svd(left_r @ right_r.T)[2][0]
    c = centre(gk.T @ (weights.wq @ weights.beta + weights.bq))
    radius = math.sqrt(d) * _WITNESS_SHRINK
    best = 0.0
    for sign in (1.0, -1.0):
        z_query = centre(sign * top)
        z_query *= radius / np.linalg.norm(z_query)
        direction = left @ (right @ z_query) + c
        if not np.linalg.norm(direction) > 0:
            continue
        z_key = centre(direction)
        z_key *= radius / np.linalg.norm(z_key)
        x_query = weights.gamma * z_query + weights.beta
        keys = np.stack(
            [weights.gamma * z_key + weights.beta, -weights.gamma * z_key + weights.beta]
        )
        logits = _head_logits(weights, x_query, keys)
        best = max(best, float(logits.max() - logits.min()))
    return best
