"""Boxes around the hidden states tokens can reach, layer by layer, and the spreads they allow.

For layers after the first there is no finite set to enumerate: a position's hidden state
depends on the whole sequence.  This module propagates a **box** (an interval per
coordinate) that contains every reachable hidden state, by interval arithmetic with
every rounding bounded (:mod:`.enclosures`), through the network as T9's argument does
with radii:

* layer 0's input: the box of every ``LN(w_t + p_p + y_s)`` (its support over the finite
  domain in each coordinate direction, :class:`~.token_domain.KeySupport`);
* attention: every output of a head is a convex combination of its value vectors, so it
  lies in their box (for layer 0 the exact support of the finite set of values in each
  direction of the output projection, summed over heads; afterwards interval products);
* the output projection, the residual sums, the MLP (GELU's image of an interval from
  its monotone pieces, :func:`~softmax_dispersion.empirical.logit_function`'s certified
  minimiser) and each LayerNorm (the variance's minimum over the box, the mean-free
  numerator's interval, and ``|z_i| <= sqrt(d − 1)`` for any LayerNorm output).

A head of layer ``L`` then has queries and keys in interval images of the box, and its
spread is at most ``scaling · Σ_i max(|q_i|) · width(k_i)``.  :class:`BoxPropagation`
records, per layer, the box and the smallest standard deviation of the LayerNorm input
the box allows — the number that decides whether the box says anything: where it is 0
(the box holds a constant vector), LayerNorm's output box is its whole range
``β ± γ sqrt(d − 1)`` and every later box is as wide as a box can be.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from softmax_dispersion.empirical.pretrained.enclosures import Enclosure, down, matmul, up

__all__ = ["Box", "BoxPropagation", "LayerBox", "box_spread_bound", "domain_boxes"]


@dataclass(frozen=True)
class Box:
    """Every coordinate ``i`` of every enclosed vector lies in ``[lo[i], hi[i]]``."""

    lo: np.ndarray
    hi: np.ndarray

    def enclosure(self) -> Enclosure:
        mid = (self.lo + self.hi) / 2
        return Enclosure(mid, up(np.maximum(up(self.hi - mid), up(mid - self.lo))))

    @classmethod
    def of(cls, e: Enclosure) -> Box:
        return cls(e.lo, e.hi)

    def __add__(self, other: Box) -> Box:
        return Box(down(self.lo + other.lo), up(self.hi + other.hi))

    @property
    def width(self) -> np.ndarray:
        return up(self.hi - self.lo)


def _affine(box: Box, weight: np.ndarray, bias: np.ndarray) -> Box:
    """The box of ``W x + b`` for ``x`` in ``box`` (``weight`` ``[out, in]``)."""
    x = box.enclosure()
    image = matmul(Enclosure.exact(weight), Enclosure(x.mid[:, None], x.rad[:, None]))
    return Box.of(Enclosure(image.mid[:, 0], image.rad[:, 0]) + Enclosure.exact(bias))


def smallest_variance(box: Box) -> float:
    """A lower bound on the variance ``Σ_i (x_i − mean x)²/d`` of every vector in ``box``.

    The variance is ``min_c Σ_i (x_i − c)²/d``; two coordinates alone contribute at
    least ``g²/2`` for any ``c``, ``g`` the gap between the largest lower end and the
    smallest upper end.  So the bound is ``max(g, 0)²/(2d)``: 0 exactly when one
    constant vector fits in the box.
    """
    gap = float(down(box.lo.max() - box.hi.min()))
    if gap <= 0:
        return 0.0
    return float(down(down(gap * gap) / (2 * box.lo.size)))


def _layer_norm(box: Box, gamma: np.ndarray, beta: np.ndarray, eps: float) -> tuple[Box, float]:
    """The box of ``γ ⊙ (x − mean x)/sqrt(var x + ε) + β`` for ``x`` in ``box``, and the
    smallest variance the box allows.

    ``x_i − mean x = x_i (1 − 1/d) − (Σ_{j≠i} x_j)/d`` is linear, so its interval is exact
    up to rounding; dividing by the smallest ``sqrt(var + ε)`` bounds ``|z_i|`` from above,
    and any LayerNorm output has ``|z_i| <= sqrt(d − 1)`` (mean 0, ``|z|² <= d``).
    """
    d = box.lo.size
    variance = smallest_variance(box)
    scale = float(down(np.sqrt(down(variance + eps))))
    slack = d * 2.0**-52  # a d-term float sum is within γ_d Σ|x| of the exact sum
    sum_lo = float(down(box.lo.sum() - np.abs(box.lo).sum() * slack))
    sum_hi = float(up(box.hi.sum() + np.abs(box.hi).sum() * slack))
    rest_lo, rest_hi = down(sum_lo - box.hi), up(sum_hi - box.lo)
    fraction = 1 - 1 / d  # within 2u of 1 − 1/d: covered by the 4u|x| terms below
    u4 = 4 * 2.0**-53
    num_lo = down(down(box.lo * fraction - np.abs(box.lo) * u4) - up(rest_hi / d))
    num_hi = up(up(box.hi * fraction + np.abs(box.hi) * u4) - down(rest_lo / d))
    limit = float(up(np.sqrt(d - 1.0)))
    z_lo = np.where(num_lo < 0, np.maximum(down(num_lo / scale), -limit), 0.0)
    z_hi = np.where(num_hi > 0, np.minimum(up(num_hi / scale), limit), 0.0)
    z = Enclosure((z_lo + z_hi) / 2, up((z_hi - z_lo) / 2))
    out = z.times(Enclosure.exact(gamma)) + Enclosure.exact(beta)
    return Box.of(out), variance


def _gelu(box: Box) -> Box:
    """GELU's image of every interval, from its monotone pieces (certified endpoints)."""
    import flint

    from softmax_dispersion.empirical.logit_function import (
        GELU_BITS,
        _gelu_ball,
        _gelu_minimiser,
    )

    lo = np.empty_like(box.lo)
    hi = np.empty_like(box.hi)
    with flint.ctx.workprec(GELU_BITS):
        x0 = _gelu_minimiser(flint)
        minimum = _gelu_ball(flint, x0)
        x0_lo, x0_hi = float(x0.lower()), float(x0.upper())
        floor = float(minimum.lower())
        for i, (a, b) in enumerate(zip(box.lo, box.hi, strict=True)):
            ga = _gelu_ball(flint, flint.arb(float(a)))
            gb = _gelu_ball(flint, flint.arb(float(b)))
            top = max(float(ga.upper()), float(gb.upper()))
            if b <= x0_lo:
                lo[i], hi[i] = float(gb.lower()), float(ga.upper())
            elif a >= x0_hi:
                lo[i], hi[i] = float(ga.lower()), float(gb.upper())
            else:
                lo[i], hi[i] = floor, top
    return Box(down(lo), up(hi))


def box_spread_bound(box: Box, weights: Any) -> float:
    """``scaling · Σ_i max|q_i| · width(k_i)``: an upper bound on the head's spread when
    every query and key input lies in ``box`` (``weights``: a :class:`~.spread_bounds.HeadWeights`
    whose ``gamma``/``beta`` are ignored: ``box`` is the attention layer's input)."""
    q = _affine(box, weights.wq, weights.bq)
    k = _affine(box, weights.wk, weights.bk)
    q_abs = np.maximum(np.abs(q.lo), np.abs(q.hi))
    total = up(np.sum(up(q_abs * k.width)) * (1 + 2 * q_abs.size * 2.0**-53))
    return float(up(total * weights.scaling))


@dataclass(frozen=True)
class LayerBox:
    """The box of one attention layer's input, and how it came about."""

    layer: int
    box: Box
    smallest_variance: float
    """The smallest variance of the LayerNorm input the box allows (0: a constant vector
    fits in the box, so the LayerNorm output box is its whole range)."""


class BoxPropagation:
    """Boxes around every attention layer's input of a BERT model, from layer 0's domain.

    Parameters
    ----------
    loaded
        The model (:class:`~.model.LoadedModel`).
    first_input, first_values
        Layer 0's input box and, per head, the box of its value vectors after the
        output projection's block (``[heads]`` of ``Box`` over the output dimension),
        from the finite domain.
    """

    def __init__(self, loaded: Any, first_input: Box, first_output: Box) -> None:
        self.loaded = loaded
        self.layers: list[LayerBox] = [LayerBox(0, first_input, float("nan"))]
        self._first_output = first_output

    def run(self) -> list[LayerBox]:
        """Propagate to the input of every layer."""
        model = self.loaded.model
        layers = model.encoder.layer
        box = self.layers[0].box
        for index, layer in enumerate(layers[:-1]):
            attention = self._first_output if index == 0 else self._attention_output(layer, box)
            out_norm = layer.attention.output.LayerNorm
            middle, variance_a = _layer_norm(
                box + attention, _array(out_norm.weight), _array(out_norm.bias), float(out_norm.eps)
            )
            hidden = _gelu(
                _affine(
                    middle,
                    _array(layer.intermediate.dense.weight),
                    _array(layer.intermediate.dense.bias),
                )
            )
            mlp = _affine(
                hidden, _array(layer.output.dense.weight), _array(layer.output.dense.bias)
            )
            norm = layer.output.LayerNorm
            box, variance = _layer_norm(
                middle + mlp, _array(norm.weight), _array(norm.bias), float(norm.eps)
            )
            self.layers.append(LayerBox(index + 1, box, min(variance_a, variance)))
        return self.layers

    def _attention_output(self, layer: Any, box: Box) -> Box:
        """Values in their box (any convex combination stays there), then the output map."""
        attention = layer.attention
        values = _affine(
            box, _array(attention.self.value.weight), _array(attention.self.value.bias)
        )
        return _affine(
            values, _array(attention.output.dense.weight), _array(attention.output.dense.bias)
        )


def domain_boxes(domain: Any, loaded: Any) -> tuple[Box, Box]:
    """Layer 0's input box and the box of its attention block's output (before the
    residual), both from the finite domain.

    The input: ``z = inv·(A_t + B_p + C_s)`` has, in each coordinate direction, a support
    over the domain bounded by :meth:`~.token_domain.KeySupport.bounds`; ``x = γ ⊙ z + β``.
    The attention output's coordinate ``j`` is ``Σ_h W_o[j, h]·v_h + b_o[j]`` with each
    ``v_h`` a convex combination of head ``h``'s values ``W_v,h x + b_v,h``, so it lies
    between the sums over heads of the supports of the domain in the directions
    ``Γ W_v,hᵀ W_o[j, h]ᵀ`` (plus the constant parts).
    """
    from softmax_dispersion.empirical.pretrained.token_domain import HeadParts, KeySupport

    identity = HeadParts(
        domain.words,
        domain.positions,
        domain.types,
        domain.words,
        domain.positions,
        domain.types,
        Enclosure.exact(np.zeros(domain.dim)),
        1.0,
    )
    support = KeySupport(domain, identity)
    gamma, beta = domain.tables.gamma, domain.tables.beta
    upper, lower = support.bounds(Enclosure.exact(np.eye(domain.dim)), "split")
    z = Enclosure((upper + lower) / 2, up((upper - lower) / 2))
    first_input = Box.of(z.times(Enclosure.exact(gamma)) + Enclosure.exact(beta))
    layer = loaded.model.encoder.layer[0]
    heads, k = loaded.heads, loaded.head_dim
    w_v = _array(layer.attention.self.value.weight)
    b_v = _array(layer.attention.self.value.bias)
    w_o = _array(layer.attention.output.dense.weight)
    total_lo = np.zeros(domain.dim)
    total_hi = np.zeros(domain.dim)
    for h in range(heads):
        block = slice(h * k, (h + 1) * k)
        out_block = Enclosure.exact(w_o[:, block])  # [d_out, k]
        directions = matmul(out_block, Enclosure.exact(w_v[block] * gamma))  # [d_out, d]
        constant = matmul(
            out_block,
            matmul(Enclosure.exact(w_v[block]), Enclosure.exact(beta[:, None]))
            + Enclosure.exact(b_v[block, None]),
        )
        high, low = support.bounds(directions, "split")
        total_hi = up(total_hi + up(high + constant.hi[:, 0]))
        total_lo = down(total_lo + down(low + constant.lo[:, 0]))
    bias = _array(layer.attention.output.dense.bias)
    return first_input, Box(down(total_lo + bias), up(total_hi + bias))


def _array(tensor: Any) -> np.ndarray:
    return np.asarray(tensor.detach().cpu().double().numpy())
