"""T9: bounded inputs through norm-bounded layers give bounded logits in every head.

Run ``python -m softmax_dispersion.theory.composition`` to check the proof.

T9 (the paper's Theorem 2.2, made quantitative)
    If every input token has norm at most ``r``, then each layer kind below maps tokens
    of norm at most ``r`` to tokens of norm at most a radius computed from ``r`` and the
    layer's norms, and an attention layer's logits spread by at most
    ``δ <= 2 σ_max(Q) σ_max(K) r² / s`` (T8 with query and keys from the same ball).
    Applying one rule per layer — induction over the stack — bounds the input of every
    layer, hence the logits of every head, hence T1 applies in every head with
    ``c = exp(δ_ℓ/θ)`` and the head disperses once ``n >= n*(ε)`` (T4).

==============================  ====================================================
layer                           radius of the output, given input radius ``r``
==============================  ====================================================
:class:`Linear` ``Wx + b``      ``σ_max(W) r + ‖b‖``
:class:`Lipschitz` ``f``        ``L r + ‖f(0)‖`` (an activation or a whole MLP block)
:class:`Residual` ``x + g(x)``  ``r + ρ_g(r)`` where ``ρ_g`` is the inner stack's radius
:class:`LayerNorm`              ``sqrt(d) max_i|γ_i| + ‖β‖`` (whatever ``r``)
:class:`Bounded`                a given radius (``tanh`` on ``d`` units: ``sqrt(d)``)
:class:`Attention`              ``σ_max(V) r``; logit spread ``2 σ_max(Q) σ_max(K) r² / s``
==============================  ====================================================

:func:`layer_bounds` applies these rules to a stack, symbolically or exactly.

The proof works on real symbols for the norms; the linear-algebra facts it uses are
assumptions, each instantiated once and named where it is stated: the operator norm
``‖Wx‖ <= σ_max(W)‖x‖``, the triangle inequality, the Lipschitz bound
``‖f(x) − f(0)‖ <= L‖x‖``, ``‖γ ⊙ z‖ <= max|γ_i| ‖z‖``, the definition of LayerNorm's
normalisation (``Σ z_i² = d·Var/(Var + ε_LN)``), and ``‖Σ p_t v_t‖ <= Σ p_t ‖v_t‖`` for
the attention output.  That the attention weights ``p_t >= 0`` add up to one is what
makes the output a convex combination: the rule :class:`ConvexCombination` bounds it by
the bound on a generic value.  A :class:`Bounded` layer's rule is its hypothesis.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TypeAlias

import sympy as sp

from softmax_dispersion.theory.dispersion_size import dispersion_size
from softmax_dispersion.theory.formulas import formula
from softmax_dispersion.theory.kernel import (
    Cite,
    Claim,
    ConvexCombination,
    Family,
    Implied,
    Induction,
    Step,
    SumOver,
)
from softmax_dispersion.theory.symbols import delta, eps, theta
from softmax_dispersion.theory.weight_norms import (
    T8,
    logit_spread_bound,
    scale,
    sigma_k,
    sigma_q,
    x_radius,
    y_norm,
)

__all__ = [
    "CLAIMS",
    "T9",
    "Attention",
    "Bounded",
    "Layer",
    "LayerBound",
    "LayerNorm",
    "Linear",
    "Lipschitz",
    "RealLike",
    "Residual",
    "attention_radius",
    "attention_spread",
    "layer_bounds",
    "layer_norm_radius",
    "linear_radius",
    "lipschitz_radius",
    "residual_radius",
]

# --------------------------------------------------------------------------------------
# The rules, each defined once
# --------------------------------------------------------------------------------------

r = sp.Symbol("r", real=True)
"""The radius of a layer's input: every input token has norm at most r."""
sigma = sp.Symbol("sigma", real=True)
"""σ_max(W) of a linear map."""
bias_norm = sp.Symbol("bias_norm", real=True)
"""‖b‖ of a linear map's bias."""
lipschitz = sp.Symbol("lipschitz", real=True)
"""A Lipschitz constant L."""
offset = sp.Symbol("offset", real=True)
"""‖f(0)‖ of a Lipschitz map."""
inner_radius = sp.Symbol("inner_radius", real=True)
"""The radius of a residual branch's output for inputs of radius r."""
dim = sp.Symbol("dim", real=True)
"""The number d of features LayerNorm normalises over."""
gain = sp.Symbol("gain", real=True)
"""max_i |γ_i| of LayerNorm's gain."""
beta_norm = sp.Symbol("beta_norm", real=True)
"""‖β‖ of LayerNorm's bias."""
sigma_v = sp.Symbol("sigma_v", real=True)
"""σ_max(V) of the value map (times σ_max of an output map, if any)."""

linear_radius = formula(
    "linear_radius",
    sigma * r + bias_norm,
    (sigma, bias_norm, r),
    "T9: ‖Wx + b‖ <= σ_max(W) r + ‖b‖ for ‖x‖ <= r",
)
lipschitz_radius = formula(
    "lipschitz_radius",
    lipschitz * r + offset,
    (lipschitz, offset, r),
    "T9: ‖f(x)‖ <= L r + ‖f(0)‖ for an L-Lipschitz f and ‖x‖ <= r",
)
residual_radius = formula(
    "residual_radius",
    r + inner_radius,
    (r, inner_radius),
    "T9: ‖x + g(x)‖ <= r + ρ for ‖x‖ <= r and ‖g(x)‖ <= ρ",
)
layer_norm_radius = formula(
    "layer_norm_radius",
    sp.sqrt(dim) * gain + beta_norm,
    (dim, gain, beta_norm),
    "T9: ‖LayerNorm(x)‖ <= sqrt(d) max|γ_i| + ‖β‖",
)
attention_spread = formula(
    "attention_spread",
    logit_spread_bound.expr.xreplace({y_norm: r, x_radius: r}),
    (sigma_q, sigma_k, r, scale),
    "T9: logit spread 2 σ_max(Q) σ_max(K) r² / s of a head whose tokens have norm <= r (T8)",
)
attention_radius = formula(
    "attention_radius",
    sigma_v * r,
    (sigma_v, r),
    "T9: an attention output, a convex combination of values Vx_t, has norm <= σ_max(V) r",
)


_ZERO, _ONE = sp.Integer(0), sp.Integer(1)

RealLike: TypeAlias = sp.Expr | int | float | Fraction
"""A number (stored exactly) or a real sympy expression."""


def _rule(rule: sp.Expr, values: dict[sp.Symbol, sp.Expr]) -> sp.Expr:
    """Instantiate a rule; ``xreplace`` substitutes simultaneously, then evaluates."""
    return rule.xreplace(values)


# --------------------------------------------------------------------------------------
# Checking inputs
# --------------------------------------------------------------------------------------


def _as_expr(value: object, name: str) -> sp.Expr:
    """A finite real sympy expression; Python and numpy numbers become exact rationals."""
    if isinstance(value, sp.Basic):
        if not isinstance(value, sp.Expr):
            raise TypeError(f"{name} must be a number or a sympy expression, got {value!r}")
        expr = sp.Rational(value) if isinstance(value, sp.Float) and value.is_finite else value
    elif isinstance(value, (bool, str)) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{name} must be a number or a sympy expression, not {type(value).__name__}"
        )
    elif isinstance(value, numbers.Rational):
        expr = sp.Rational(int(value.numerator), int(value.denominator))
    else:
        number = float(value)
        if not math.isfinite(number):
            raise ValueError(f"{name} must be finite, got {value!r}")
        expr = sp.Rational(number)  # the float's exact binary value: bounds stay exact
    if expr.has(sp.nan, sp.zoo, sp.oo, -sp.oo) or expr.is_finite is False:
        raise ValueError(f"{name} must be finite, got {expr}")
    if expr.is_real is False:
        raise ValueError(f"{name} must be real, got {expr}")
    return expr


def _norm(value: object, name: str) -> sp.Expr:
    """A norm (or a bound on one): a real expression that is not known to be negative."""
    expr = _as_expr(value, name)
    if expr.is_extended_negative:
        raise ValueError(f"{name} must be a non-negative norm, got {expr}")
    return expr


def _positive(value: object, name: str) -> sp.Expr:
    expr = _as_expr(value, name)
    if expr.is_extended_nonpositive:
        raise ValueError(f"{name} must be positive, got {expr}")
    return expr


def _set(instance: object, name: str, value: object) -> None:
    object.__setattr__(instance, name, value)  # normalising a frozen dataclass's field


# --------------------------------------------------------------------------------------
# Layers
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Linear:
    """An affine map ``x ↦ Wx + b`` described by ``σ_max(W)`` and ``‖b‖``.

    Parameters
    ----------
    sigma : number or sympy expression
        The largest singular value of ``W`` (``numpy.linalg.norm(W, 2)``), ``>= 0``.
    bias : number or sympy expression, optional
        The norm of the bias ``b``, ``>= 0``; ``0`` (the default) for no bias.

    Notes
    -----
    By the operator norm and the triangle inequality,
    ``‖Wx + b‖ <= σ_max(W)‖x‖ + ‖b‖ <= σ_max(W) r + ‖b‖`` for ``‖x‖ <= r``
    (:data:`linear_radius`, proven in T9).  Numbers are stored as exact rationals
    (a float by its exact binary value).

    Examples
    --------
    >>> from softmax_dispersion.theory.composition import Linear
    >>> Linear(2, bias=0.5).radius(3)
    13/2
    >>> Linear(-1)
    Traceback (most recent call last):
    ...
    ValueError: sigma must be a non-negative norm, got -1
    """

    sigma: sp.Expr
    bias: sp.Expr = _ZERO

    def __post_init__(self) -> None:
        _set(self, "sigma", _norm(self.sigma, "sigma"))
        _set(self, "bias", _norm(self.bias, "bias"))

    def radius(self, input_radius: RealLike) -> sp.Expr:
        """The radius of the outputs for inputs of norm at most ``input_radius``."""
        input_radius = _norm(input_radius, "input_radius")
        return _rule(linear_radius.expr, {sigma: self.sigma, bias_norm: self.bias, r: input_radius})


@dataclass(frozen=True)
class Lipschitz:
    """A map ``f`` with ``‖f(x) − f(x')‖ <= L‖x − x'‖``: an activation or an MLP block.

    Parameters
    ----------
    lipschitz : number or sympy expression
        The Lipschitz constant ``L >= 0`` (1 for ReLU, GELU is about 1.13, tanh 1; an MLP
        block: the product of its layers' constants and ``σ_max`` of its matrices).
    offset : number or sympy expression, optional
        ``‖f(0)‖ >= 0``; ``0`` (the default) for ReLU and tanh.

    Notes
    -----
    ``‖f(x)‖ <= ‖f(x) − f(0)‖ + ‖f(0)‖ <= L r + ‖f(0)‖`` for ``‖x‖ <= r``
    (:data:`lipschitz_radius`, proven in T9).

    Examples
    --------
    >>> import sympy as sp
    >>> from softmax_dispersion.theory.composition import Lipschitz
    >>> L, r = sp.symbols("L r", real=True)
    >>> Lipschitz(L, offset=1).radius(r)
    L*r + 1
    """

    lipschitz: sp.Expr
    offset: sp.Expr = _ZERO

    def __post_init__(self) -> None:
        _set(self, "lipschitz", _norm(self.lipschitz, "lipschitz"))
        _set(self, "offset", _norm(self.offset, "offset"))

    def radius(self, input_radius: RealLike) -> sp.Expr:
        """The radius of the outputs for inputs of norm at most ``input_radius``."""
        input_radius = _norm(input_radius, "input_radius")
        return _rule(
            lipschitz_radius.expr,
            {lipschitz: self.lipschitz, offset: self.offset, r: input_radius},
        )


@dataclass(frozen=True)
class LayerNorm:
    """LayerNorm over ``dim`` features with gain ``γ`` and bias ``β``.

    Parameters
    ----------
    dim : int or sympy expression
        The number ``d >= 1`` of normalised features.
    gain : number or sympy expression, optional
        ``max_i |γ_i| >= 0``; 1 (the default) for an untrained LayerNorm.
    bias : number or sympy expression, optional
        ``‖β‖ >= 0``; 0 by default.

    Notes
    -----
    The normalised vector ``z = (x − μ)/sqrt(Var + ε_LN)`` has
    ``Σ z_i² = d·Var/(Var + ε_LN) <= d``, so for every input, whatever its norm,
    ``‖γ ⊙ z + β‖ <= sqrt(d) max_i|γ_i| + ‖β‖`` (:data:`layer_norm_radius`, proven in
    T9).  This is why a pre-LN block's attention logits stay bounded however large the
    residual stream grows.

    Examples
    --------
    >>> from softmax_dispersion.theory.composition import LayerNorm
    >>> LayerNorm(16, gain=2, bias=1).radius(10**6)
    9
    """

    dim: sp.Expr
    gain: sp.Expr = _ONE
    bias: sp.Expr = _ZERO

    def __post_init__(self) -> None:
        size = _positive(self.dim, "dim")
        if size.is_number and not (size.is_integer and size >= 1):
            raise ValueError(f"dim must be a positive integer, got {size}")
        _set(self, "dim", size)
        _set(self, "gain", _norm(self.gain, "gain"))
        _set(self, "bias", _norm(self.bias, "bias"))

    def radius(self, input_radius: RealLike) -> sp.Expr:
        """The radius of the outputs; it does not depend on ``input_radius``."""
        _norm(input_radius, "input_radius")
        return _rule(layer_norm_radius.expr, {dim: self.dim, gain: self.gain, beta_norm: self.bias})


@dataclass(frozen=True)
class Bounded:
    """A layer whose outputs have norm at most ``bound``, whatever its input.

    Parameters
    ----------
    bound : number or sympy expression
        The output radius, ``>= 0``: ``sqrt(d)`` for ``tanh`` or a sigmoid on ``d``
        units, the largest embedding norm for an embedding table, a clipping threshold.

    Notes
    -----
    Its radius rule is its hypothesis: ``‖f(x)‖ <= bound``.

    Examples
    --------
    >>> import sympy as sp
    >>> from softmax_dispersion.theory.composition import Bounded
    >>> Bounded(sp.sqrt(8)).radius(100)
    2*sqrt(2)
    """

    bound: sp.Expr

    def __post_init__(self) -> None:
        _set(self, "bound", _norm(self.bound, "bound"))

    def radius(self, input_radius: RealLike) -> sp.Expr:
        """The radius of the outputs: ``bound``."""
        _norm(input_radius, "input_radius")
        return self.bound


@dataclass(frozen=True)
class Attention:
    """A dot-product attention head with logits ``(Qy)ᵀ(Kx_t)/s`` and values ``Vx_t``.

    Parameters
    ----------
    sigma_q, sigma_k, sigma_v : number or sympy expression
        ``σ_max`` of the query, key and value maps, ``>= 0`` (fold an output projection
        into ``sigma_v`` as ``σ_max(O) σ_max(V)``).
    scale : number or sympy expression, optional
        The logit scale ``s > 0`` (``sqrt(d_k)`` in scaled dot-product attention);
        1 by default.

    Notes
    -----
    With query and keys from tokens of norm at most ``r``, T8 bounds every row's logit
    spread by ``δ <= 2 σ_max(Q) σ_max(K) r² / s`` (:data:`attention_spread`).  The
    output ``Σ_t p_t Vx_t`` is a convex combination (``p_t >= 0``, ``Σ p_t = 1``), so
    its norm is at most ``σ_max(V) r`` (:data:`attention_radius`).  Both hold for any
    mask, since a masked row is still a convex combination of the visible values.

    Examples
    --------
    >>> from softmax_dispersion.theory.composition import Attention
    >>> head = Attention(sigma_q=1, sigma_k=2, sigma_v=3, scale=8)
    >>> head.spread(2), head.radius(2)
    (2, 6)
    """

    sigma_q: sp.Expr
    sigma_k: sp.Expr
    sigma_v: sp.Expr
    scale: sp.Expr = _ONE

    def __post_init__(self) -> None:
        for name in ("sigma_q", "sigma_k", "sigma_v"):
            _set(self, name, _norm(getattr(self, name), name))
        _set(self, "scale", _positive(self.scale, "scale"))

    def spread(self, input_radius: RealLike) -> sp.Expr:
        """The bound on every row's logit spread for tokens of norm at most ``input_radius``."""
        input_radius = _norm(input_radius, "input_radius")
        return _rule(
            attention_spread.expr,
            {sigma_q: self.sigma_q, sigma_k: self.sigma_k, r: input_radius, scale: self.scale},
        )

    def radius(self, input_radius: RealLike) -> sp.Expr:
        """The radius of the outputs for tokens of norm at most ``input_radius``."""
        input_radius = _norm(input_radius, "input_radius")
        return _rule(attention_radius.expr, {sigma_v: self.sigma_v, r: input_radius})


@dataclass(frozen=True, init=False)
class Residual:
    """A residual block ``x ↦ x + g(x)`` whose branch ``g`` is a stack of layers.

    Parameters
    ----------
    *inner : Layer or sequence of Layer
        The branch, applied in order (``Residual(LayerNorm(d), Attention(...))`` is a
        pre-LN attention block); a single sequence is accepted too.

    Notes
    -----
    ``‖x + g(x)‖ <= r + ρ_g(r)``, where ``ρ_g(r)`` is the branch's output radius for
    inputs of radius ``r`` (:data:`residual_radius`, proven in T9).

    Examples
    --------
    >>> from softmax_dispersion.theory.composition import Linear, Lipschitz, Residual
    >>> block = Residual(Linear(2, bias=1), Lipschitz(1))
    >>> block.radius(3)
    10
    >>> Residual()
    Traceback (most recent call last):
    ...
    ValueError: inner must contain at least one layer
    """

    inner: tuple[Layer, ...]

    def __init__(self, *inner: Layer | Sequence[Layer]) -> None:
        if len(inner) == 1 and isinstance(inner[0], Sequence):
            layers: tuple[object, ...] = tuple(inner[0])
        else:
            layers = tuple(inner)
        _set(self, "inner", _check_layers(layers, "inner"))

    def radius(self, input_radius: RealLike) -> sp.Expr:
        """The radius of the outputs for inputs of norm at most ``input_radius``."""
        branch = input_radius = _norm(input_radius, "input_radius")
        for layer in self.inner:
            branch = layer.radius(branch)
        return _rule(residual_radius.expr, {r: input_radius, inner_radius: branch})


Layer: TypeAlias = Linear | Lipschitz | LayerNorm | Bounded | Attention | Residual
"""Any layer description that :func:`layer_bounds` understands."""

_LAYER_TYPES = (Linear, Lipschitz, LayerNorm, Bounded, Attention, Residual)


def _check_layers(layers: Sequence[object], name: str) -> tuple[Layer, ...]:
    if isinstance(layers, (str, bytes)) or not isinstance(layers, Sequence):
        raise TypeError(f"{name} must be a sequence of layers, not {type(layers).__name__}")
    if not layers:
        raise ValueError(f"{name} must contain at least one layer")
    checked: list[Layer] = []
    for position, layer in enumerate(layers):
        if not isinstance(layer, _LAYER_TYPES):
            kinds = ", ".join(kind.__name__ for kind in _LAYER_TYPES)
            raise TypeError(
                f"{name}[{position}] must be a layer ({kinds}), not {type(layer).__name__}"
            )
        checked.append(layer)
    return tuple(checked)


# --------------------------------------------------------------------------------------
# The radius recursion
# --------------------------------------------------------------------------------------


def _dispersion_size(epsilon: sp.Expr, spread: sp.Expr, temperature: sp.Expr) -> sp.Expr:
    """T4's n*(ε) for a head, by exact substitution into T4's own formula."""
    return dispersion_size.expr.xreplace({eps: epsilon, delta: spread, theta: temperature})


@dataclass(frozen=True)
class LayerBound:
    """What :func:`layer_bounds` proves about one layer of a stack.

    Attributes
    ----------
    layer : Layer
        The layer described.
    input_radius : sympy expression
        A bound on the norm of every token entering the layer.
    radius : sympy expression
        A bound on the norm of every token leaving it.
    spread : sympy expression or None
        For an attention head, the bound ``δ_ℓ`` on every row's logit spread (T8);
        ``None`` otherwise.
    dispersion_size : sympy expression or None
        For an attention head, ``n*(ε) = 1 + exp(δ_ℓ/θ)(1 − ε)/ε`` (T4): with at least
        that many keys, every attention weight of the head is at most ``ε``.
    inner : tuple of LayerBound
        For a :class:`Residual` block, the bounds of its branch's layers.

    Examples
    --------
    >>> from softmax_dispersion.theory.composition import Attention, Residual, layer_bounds
    >>> (block,) = layer_bounds([Residual(Attention(1, 1, 1))], input_radius=1)
    >>> [(b.layer.__class__.__name__, b.radius) for b in block.walk()]
    [('Residual', 2), ('Attention', 1)]
    """

    layer: Layer
    input_radius: sp.Expr
    radius: sp.Expr
    spread: sp.Expr | None = None
    dispersion_size: sp.Expr | None = None
    inner: tuple[LayerBound, ...] = field(default=())

    def walk(self) -> Iterator[LayerBound]:
        """This bound, then those of a residual branch's layers, depth first."""
        yield self
        for bound in self.inner:
            yield from bound.walk()


def _bound_stack(
    layers: Sequence[Layer], radius: sp.Expr, epsilon: sp.Expr, theta: sp.Expr
) -> tuple[LayerBound, ...]:
    bounds: list[LayerBound] = []
    for layer in layers:
        if isinstance(layer, Residual):
            inner = _bound_stack(layer.inner, radius, epsilon, theta)
            out = _rule(residual_radius.expr, {r: radius, inner_radius: inner[-1].radius})
            bounds.append(LayerBound(layer, radius, out, inner=inner))
        elif isinstance(layer, Attention):
            spread = layer.spread(radius)
            size = _dispersion_size(epsilon, spread, theta)
            bounds.append(LayerBound(layer, radius, layer.radius(radius), spread, size))
        else:
            bounds.append(LayerBound(layer, radius, layer.radius(radius)))
        radius = bounds[-1].radius
    return tuple(bounds)


def layer_bounds(
    layers: Sequence[Layer],
    input_radius: RealLike,
    *,
    epsilon: RealLike = eps,
    theta: RealLike = 1,
) -> tuple[LayerBound, ...]:
    """Bound every layer's outputs and every head's logit spread, from the input radius.

    Parameters
    ----------
    layers : sequence of Layer
        The stack, in order: :class:`Linear`, :class:`Lipschitz`, :class:`LayerNorm`,
        :class:`Bounded`, :class:`Attention`, :class:`Residual`.
    input_radius : number or sympy expression
        A bound ``r_0 >= 0`` on the norm of every input token (for a finite vocabulary,
        the largest embedding norm).
    epsilon : number or sympy expression, optional
        The tolerance ``ε`` of each head's dispersion size; the symbol ``ε`` by default.
        A number must lie in ``(0, 1)``.
    theta : number or sympy expression, optional
        The softmax temperature ``θ > 0`` of every head; 1 by default (the ``1/s``
        scale is already in the logits).

    Returns
    -------
    tuple of LayerBound
        One per layer: its input and output radius and, for a head, its spread bound
        ``δ_ℓ`` and dispersion size ``n*(ε)``.  Numbers give exact numbers, symbols
        give sympy expressions.

    Raises
    ------
    ValueError
        For an empty stack, a negative radius, ``θ <= 0`` or ``ε`` outside ``(0, 1)``.
    TypeError
        For something that is not a layer or not a number.

    Notes
    -----
    One rule of T9 per layer: ``r_{ℓ+1} = ρ_ℓ(r_ℓ)`` with ``ρ_ℓ`` the layer's radius
    rule, and for a head ``δ_ℓ = 2 σ_max(Q_ℓ) σ_max(K_ℓ) r_ℓ² / s_ℓ`` (T8).  By T1 every
    attention weight of head ``ℓ`` over ``n`` keys then lies in
    ``[1/(1+(n−1)c_ℓ), c_ℓ/(c_ℓ+n−1)]`` with ``c_ℓ = exp(δ_ℓ/θ)``, and by T4 all are at
    most ``ε`` once ``n >= n*(ε) = 1 + c_ℓ(1 − ε)/ε``.

    Examples
    --------
    >>> import sympy as sp
    >>> from softmax_dispersion.theory.composition import (
    ...     Attention, Linear, Lipschitz, Residual, layer_bounds)
    >>> stack = [Linear(2, bias=1), Residual(Lipschitz(1)), Attention(1, 1, 1, scale=4)]
    >>> bounds = layer_bounds(stack, input_radius=1, epsilon=sp.Rational(1, 2))
    >>> [b.radius for b in bounds]
    [3, 6, 6]
    >>> bounds[2].spread, bounds[2].dispersion_size
    (18, 1 + exp(18))
    >>> r = sp.Symbol("r", real=True)
    >>> layer_bounds([Linear(2), Attention(1, 1, 1)], r)[1].spread
    8*r**2
    >>> layer_bounds([], 1)
    Traceback (most recent call last):
    ...
    ValueError: layers must contain at least one layer
    """
    checked = _check_layers(layers, "layers")
    radius = _norm(input_radius, "input_radius")
    temperature = _positive(theta, "theta")
    tolerance = _as_expr(epsilon, "epsilon")
    if tolerance.is_number and not (0 < tolerance < 1):
        raise ValueError(f"epsilon must lie in (0, 1), got {tolerance}")
    return _bound_stack(checked, radius, tolerance, temperature)


# --------------------------------------------------------------------------------------
# The claim
# --------------------------------------------------------------------------------------


def _norms(*names: str) -> tuple[sp.Symbol, ...]:
    return tuple(sp.Symbol(name, real=True) for name in names)


(x_norm,) = _norms("norm_x")  # the input token of a generic layer: ‖x‖ <= r
linear_map, linear_out = _norms("norm_Wx", "norm_linear_out")
lipschitz_change, lipschitz_out = _norms("norm_fx_minus_f0", "norm_lipschitz_out")
branch_out, residual_out = _norms("norm_gx", "norm_residual_out")
variance, ln_eps, z_norm, scaled_z, ln_out = _norms(
    "variance", "ln_eps", "norm_z", "norm_gain_z", "norm_layer_norm_out"
)
weight, token_norm, value_norm, value_sum, weights_total, attention_out, keys = _norms(
    "p_t",
    "norm_x_t",
    "norm_Vx_t",
    "weighted_value_norms",
    "weights_total",
    "norm_attention_out",
    "keys",
)

#: The keys a head attends to: weight p_t >= 0, token norm ‖x_t‖ <= r, value ‖Vx_t‖.
attended_keys = Family(
    "keys",
    (weight, token_norm, value_norm),
    keys,
    (
        sp.Ge(weight, 0),
        sp.Ge(token_norm, 0),
        sp.Le(token_norm, r),
        sp.Le(value_norm, sigma_v * token_norm),
    ),
    "the keys: weight p_t >= 0, ‖x_t‖ <= r and ‖Vx_t‖ <= σ_max(V)‖x_t‖",
)
#: Σ_t p_t ‖Vx_t‖, and the weights' total Σ_t p_t (one, for softmax weights).
value_norms = SumOver(value_sum, weight * value_norm, attended_keys, "Σ_t p_t ‖Vx_t‖ over the keys")
weight_sum = SumOver(weights_total, weight, attended_keys, "Σ_t p_t, the weights' total")

_linear_rule = sp.Le(linear_out, linear_radius.expr)
_lipschitz_rule = sp.Le(lipschitz_out, lipschitz_radius.expr)
_residual_rule = sp.Le(residual_out, residual_radius.expr)
_layer_norm_rule = sp.Le(ln_out, layer_norm_radius.expr)
_spread_rule = sp.Le(delta, attention_spread.expr)
_attention_rule = sp.Le(attention_out, attention_radius.expr)

# The stack, layer by layer: layer ℓ (a natural number) maps every token of norm at most
# N(ℓ) to tokens of norm at most a(ℓ)·N(ℓ) + b(ℓ) — every rule above is of this affine
# form, with a(ℓ), b(ℓ) >= 0 — and R is the radius recursion layer_bounds computes.
layer = sp.Symbol("l", real=True)
"""The layer index ℓ, a natural number."""
stack_norm = sp.Function("N", real=True)
"""``N(ℓ)``: the largest norm of a token entering layer ℓ."""
stack_radius = sp.Function("R", real=True)
"""``R(ℓ)``: the radius recursion, ``R(ℓ+1) = a(ℓ) R(ℓ) + b(ℓ)``."""
slope = sp.Function("a", real=True)
"""``a(ℓ)``: the factor of layer ℓ's radius rule (``σ_max(W)``, ``L``, 0 for LayerNorm)."""
offset_of = sp.Function("b", real=True)
"""``b(ℓ)``: the constant of layer ℓ's radius rule (``‖b‖``, ``‖f(0)‖``, ...)."""
head_spread = sp.Function("D", real=True)
"""``D(ℓ)``: the logit spread of layer ℓ's head."""
head_q, head_k, head_scale = (sp.Function(name, real=True) for name in ("Q", "K", "s_head"))
"""``σ_max(Q_ℓ)``, ``σ_max(K_ℓ)`` and the logit scale of layer ℓ's head."""

_stack_assumptions: list[sp.Basic] = [
    sp.Ge(slope(layer), 0),
    sp.Ge(offset_of(layer), 0),
    sp.Ge(stack_norm(layer), 0),
    sp.Le(stack_norm(0), stack_radius(0)),  # the inputs have norm at most R(0) = r_0
    # layer ℓ obeys its radius rule (the table above, proved in this claim)
    sp.Le(stack_norm(layer + 1), slope(layer) * stack_norm(layer) + offset_of(layer)),
    sp.Eq(stack_radius(layer + 1), slope(layer) * stack_radius(layer) + offset_of(layer)),
    # layer ℓ's head obeys the spread rule for tokens of norm at most N(ℓ)
    sp.Ge(head_q(layer), 0),
    sp.Ge(head_k(layer), 0),
    sp.Gt(head_scale(layer), 0),
    sp.Le(
        head_spread(layer),
        2 * head_q(layer) * head_k(layer) * stack_norm(layer) ** 2 / head_scale(layer),
    ),
]
_bounded_inputs = sp.Le(stack_norm(layer), stack_radius(layer))
_bounded_spread = sp.Le(
    head_spread(layer),
    2 * head_q(layer) * head_k(layer) * stack_radius(layer) ** 2 / head_scale(layer),
)

_assumptions: list[sp.Basic] = [
    # a generic layer input
    sp.Ge(r, 0),
    sp.Ge(x_norm, 0),
    sp.Le(x_norm, r),
    # Linear: ‖Wx‖ <= σ_max(W)‖x‖ (operator norm); ‖Wx + b‖ <= ‖Wx‖ + ‖b‖ (triangle)
    sp.Ge(sigma, 0),
    sp.Ge(bias_norm, 0),
    sp.Le(linear_map, sigma * x_norm),
    sp.Le(linear_out, linear_map + bias_norm),
    # Lipschitz: ‖f(x) − f(0)‖ <= L‖x‖; ‖f(x)‖ <= ‖f(x) − f(0)‖ + ‖f(0)‖ (triangle)
    sp.Ge(lipschitz, 0),
    sp.Ge(offset, 0),
    sp.Le(lipschitz_change, lipschitz * x_norm),
    sp.Le(lipschitz_out, lipschitz_change + offset),
    # Residual: ‖g(x)‖ <= ρ (the branch's rule); ‖x + g(x)‖ <= ‖x‖ + ‖g(x)‖ (triangle)
    sp.Le(branch_out, inner_radius),
    sp.Le(residual_out, x_norm + branch_out),
    # LayerNorm: Σ z_i² = d·Var/(Var + ε_LN) (definition); ‖γ ⊙ z‖ <= max|γ_i|‖z‖;
    # ‖γ ⊙ z + β‖ <= ‖γ ⊙ z‖ + ‖β‖ (triangle)
    sp.Ge(dim, 1),
    sp.Ge(gain, 0),
    sp.Ge(beta_norm, 0),
    sp.Ge(variance, 0),
    sp.Ge(ln_eps, 0),
    sp.Gt(variance + ln_eps, 0),
    sp.Eq(z_norm**2, dim * variance / (variance + ln_eps)),
    sp.Le(scaled_z, gain * z_norm),
    sp.Le(ln_out, scaled_z + beta_norm),
    # Attention: T8's hypotheses, with query and keys from the layer input
    *T8.assumptions,
    sp.Le(y_norm, r),
    sp.Le(x_radius, r),
    # the values: ‖Vx_t‖ <= σ_max(V)‖x_t‖ (the keys' family); the softmax weights add up
    # to one; ‖Σ p_t Vx_t‖ <= Σ p_t ‖Vx_t‖ (triangle inequality, p_t >= 0)
    sp.Ge(sigma_v, 0),
    sp.Eq(weights_total, 1),
    sp.Le(attention_out, value_sum),
    # the stack
    *_stack_assumptions,
]


def _t9_witness() -> dict[object, object]:
    """Every norm 0, scales and dimensions 1, one key of weight 1, every layer map 0."""
    zero = sp.Lambda(layer, 0)
    defined = {value_sum, weights_total}  # they take the values of their definitions
    free = {s for a in _assumptions for s in a.free_symbols} - {layer} - defined
    values: dict[object, object] = {symbol: 0 for symbol in sorted(free, key=str)}
    values.update({scale: 1, dim: 1, ln_eps: 1, keys: 1, weight: 1, token_norm: 0, value_norm: 0})
    for function in (stack_norm, stack_radius, slope, offset_of, head_spread, head_q, head_k):
        values[function] = zero
    values[head_scale] = sp.Lambda(layer, 1)
    return values


def _t9_proof() -> list[Step]:
    return [
        Implied(_linear_rule, "Linear: ‖Wx + b‖ <= σ‖x‖ + ‖b‖ <= σ r + ‖b‖"),
        Implied(_lipschitz_rule, "Lipschitz: ‖f(x)‖ <= L‖x‖ + ‖f(0)‖ <= L r + ‖f(0)‖"),
        Implied(_residual_rule, "Residual: ‖x + g(x)‖ <= ‖x‖ + ‖g(x)‖ <= r + ρ"),
        Implied(sp.Le(z_norm**2, dim), "LayerNorm: Σ z_i² = d·Var/(Var + ε_LN) <= d"),
        Implied(sp.Gt(dim, 0), "LayerNorm: d >= 1 > 0, so sqrt(d) is the real root"),
        Implied(sp.Le(z_norm, sp.sqrt(dim)), "LayerNorm: ‖z‖² <= d gives ‖z‖ <= sqrt(d)"),
        Implied(_layer_norm_rule, "LayerNorm: ‖γ ⊙ z + β‖ <= max|γ_i| sqrt(d) + ‖β‖"),
        Cite(T8, "Attention: T8's spread bound, its hypotheses being ours"),
        Implied(_spread_rule, "Attention: T8 with ‖y‖ <= r and max‖x_i‖ <= r"),
        ConvexCombination(
            value_norms,
            weight_sum,
            value_norm,
            None,
            sigma_v * r,
            "Attention: each ‖Vx_t‖ <= σ_max(V)‖x_t‖ <= σ_max(V) r; weights >= 0 adding to 1",
        ),
        Implied(_attention_rule, "Attention: ‖Σ p_t Vx_t‖ <= Σ p_t ‖Vx_t‖ <= σ_max(V) r"),
        Induction(
            layer,
            _bounded_inputs,
            "the stack: N(0) <= R(0), and N(ℓ) <= R(ℓ) gives N(ℓ+1) <= a N(ℓ) + b <= R(ℓ+1)",
        ),
        Implied(_bounded_spread, "every head: its spread rule at N(ℓ) <= R(ℓ)"),
        Implied(T9.statement, "every layer kind's rule, and their iteration over the stack"),
    ]


T9 = Claim(
    id="T9",
    title="layer composition: every layer's radius and every head's logit spread are bounded",
    statement=sp.And(
        _linear_rule,
        _lipschitz_rule,
        _residual_rule,
        _layer_norm_rule,
        _spread_rule,
        _attention_rule,
        _bounded_inputs,
        _bounded_spread,
    ),
    assumptions=_assumptions,
    source=(
        "paper, Theorem 2.2 (§2), made quantitative; operator-norm, triangle, Lipschitz "
        "and convex-combination norm bounds are assumptions on the norms"
    ),
    proof=_t9_proof,
    cites=(T8,),
    formulas=(
        "linear_radius",
        "lipschitz_radius",
        "residual_radius",
        "layer_norm_radius",
        "attention_spread",
        "attention_radius",
    ),
    definitions=(value_norms, weight_sum),
    witness=_t9_witness(),
    naturals=(layer,),
)

CLAIMS = (T9,)

if __name__ == "__main__":
    from softmax_dispersion.theory._result_text import run_claims

    raise SystemExit(run_claims(CLAIMS))
