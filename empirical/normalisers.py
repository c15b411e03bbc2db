"""Attention normalisers: softmax and the variants that try to stay sharp.

Every normaliser maps logits of shape ``(members, batch, n)`` (``members`` independent
models trained side by side) to attention weights of the same shape, and says which
logits it finally exponentiated and with what inverse temperature, so that claim T1
can be checked on exactly what was computed.

``softmax``
    ``softmax(e)``, the fixed-temperature baseline.
``adaptive_temperature``
    ``softmax(β(H) e)``, the paper's rule (T11); applied at inference to a softmax model.
``adaptive_refit``
    The same rule with its polynomial refitted on the model's own heads.
``ssmax``
    ``softmax(s log(n) e)`` with ``s`` learned.
``logn``
    ``softmax(log(n) e)``.
``entmax15``, ``sparsemax``
    1.5-entmax and sparsemax from the ``entmax`` package (sparse: exact zeros).
``softcap<C>`` (e.g. ``softcap2``)
    ``softmax`` of soft-capped logits ``C tanh(e/C)``, as Gemma 2 caps attention logits:
    every logit lies in ``(−C, C)``, so the spread is below ``2C`` by construction.
``qknorm<C>`` (e.g. ``qknorm3``)
    ``softmax`` of ``g q̂·k̂``: unit query and keys (QK-norm, Henry et al. 2020) times a
    learned scale ``g = C·sigmoid(ρ)`` below the cap ``C``; the spread is below ``2C``.

The last two are the *bounded heads*: their normaliser also computes the attention logits
(:meth:`Normaliser.attention_logits`); every other one scores ``q·k/√d``.

Rows may be padded with ``−inf`` logits (training pads each member's sets to one length):
such entries get weight 0, and length scaling counts the finite logits of its row.
"""

from __future__ import annotations

import math
import re
from functools import cache
from typing import NamedTuple

import sympy as sp
import torch
from torch import nn

from softmax_dispersion.empirical._torch_formulas import torch_function
from softmax_dispersion.theory.adaptive_temperature import (
    ENTROPY_OFFSET,
    adaptive_inverse_temperature,
    adaptive_polynomial,
)
from softmax_dispersion.theory.formulas import Formula

__all__ = [
    "BOUNDED_FAMILIES",
    "NORMALISERS",
    "AdaptiveRefit",
    "AdaptiveTemperature",
    "Entmax15",
    "LogN",
    "Normalised",
    "Normaliser",
    "QKNormed",
    "ScalableSoftmax",
    "SoftCapped",
    "Softmax",
    "Sparsemax",
    "describe_normalisers",
    "make_normaliser",
    "normaliser_class",
    "row_lengths",
    "rule_entropy",
]


class Normalised(NamedTuple):
    """Attention weights and how they were made."""

    weights: torch.Tensor
    """``(members, batch, n)``: the attention weights, each row summing to 1."""
    exponentiated: torch.Tensor | None
    """The logits the final softmax exponentiated, ``β e`` up to a shift (``β(e − max e)``,
    the same spread); ``None`` for entmax."""
    beta: torch.Tensor
    """``(members, batch)``: the effective inverse temperature (1 for entmax)."""


def row_lengths(logits: torch.Tensor) -> torch.Tensor:
    """The number of items of each row: its logits that are not ``−inf`` padding."""
    return (logits > -math.inf).sum(dim=-1)


def _log_lengths(logits: torch.Tensor) -> torch.Tensor:
    """``log n`` of each row, in the logits' dtype.

    The count is taken to float32 or wider first: a 16-bit float holds no count above
    65504 (float16 turns 128,256 into inf, and β = s·log n with it).
    """
    wide = torch.promote_types(logits.dtype, torch.float32)
    return row_lengths(logits).to(wide).log().to(logits.dtype)


class Normaliser(nn.Module):
    """Base class: subclasses implement :meth:`forward`."""

    name: str = ""
    display_name: str = ""
    """How reports, tables and figures name it (the one place each name is spelled)."""
    softmax_family: bool = True
    """Whether the weights are ``softmax(β e)`` for some per-row ``β`` (so T1 applies)."""
    train_with: str = ""
    """The normaliser the model is trained with (``name`` unless inference-only)."""
    length_scaled: bool = False
    """Whether ``β`` grows with the set size (``s log n``): T10's escape regime."""
    logit_bound: float | None = None
    """A bound ``B`` with ``|e| < B`` for every logit by construction (bounded heads)."""

    def __init__(self, members: int) -> None:
        super().__init__()
        self.members = members

    def forward(self, logits: torch.Tensor) -> Normalised:  # pragma: no cover - abstract
        raise NotImplementedError

    def attention_logits(self, keys: torch.Tensor, query: torch.Tensor) -> torch.Tensor:
        """The logits ``q·k_i/√d`` ``(members, batch, n)`` of keys ``(members, batch, n, d)``
        against one query per member ``(members, d)``."""
        width = keys.shape[-1]
        return torch.einsum("mbnd,md->mbn", keys, query) / math.sqrt(width)

    def describe(self) -> dict[str, object]:
        """What a report needs to know about this normaliser, as JSON-ready data."""
        return {
            "display_name": self.display_name or self.name,
            "softmax_family": self.softmax_family,
            "train_with": self.train_with or self.name,
            "length_scaled": self.length_scaled,
            "logit_bound": self.logit_bound,
        }

    @staticmethod
    def _softmax(logits: torch.Tensor, beta: torch.Tensor) -> Normalised:
        # Shift before scaling: β e can overflow where β (e − max e) cannot, and the shift
        # changes neither the weights nor the spread T1 is checked with.  Padding (−inf)
        # stays −inf without ever multiplying β by it: its gradient would be 0·∞ = NaN.
        shifted = logits - logits.detach().amax(-1, keepdim=True)
        real = logits > -math.inf
        scaled = beta[..., None] * torch.where(real, shifted, torch.zeros_like(shifted))
        scaled = torch.where(real, scaled, torch.full_like(scaled, -math.inf))
        return Normalised(torch.softmax(scaled, dim=-1), scaled, beta)


class Softmax(Normaliser):
    """``softmax(e)``: the fixed-temperature baseline (θ = 1)."""

    name = "softmax"
    display_name = "softmax"

    def forward(self, logits: torch.Tensor) -> Normalised:
        beta = torch.ones(logits.shape[:-1], dtype=logits.dtype, device=logits.device)
        return Normalised(torch.softmax(logits, dim=-1), logits, beta)


def rule_entropy(weights: torch.Tensor) -> torch.Tensor:
    """The adaptive rule's entropy ``Σ −p_i log(p_i + 10⁻⁹)`` over the last axis (nats).

    Examples
    --------
    >>> import torch
    >>> round(float(rule_entropy(torch.full((4,), 0.25, dtype=torch.float64))), 6)
    1.386294
    """
    return -torch.xlogy(weights, weights + float(ENTROPY_OFFSET)).sum(dim=-1)


class AdaptiveTemperature(Normaliser):
    """The paper's adaptive temperature, applied to a softmax-trained head.

    Notes
    -----
    With ``p = softmax(e)`` and ``H = Σ −p_i log(p_i + 10⁻⁹)``, the weights are
    ``softmax(β e)`` with ``β = max(P(H), 1)`` for ``H > 1/2`` (else 1),
    ``P(H) = −0.037H⁴ + 0.481H³ − 2.3H² + 4.917H − 1.791``: the theory's
    :data:`~softmax_dispersion.theory.adaptive_temperature.adaptive_inverse_temperature`,
    lambdified to torch.  ``β`` is computed without gradient, as a post-hoc rule.

    Examples
    --------
    >>> import torch
    >>> out = AdaptiveTemperature(1)(torch.tensor([[[2.0, 0.0, 0.0, 0.0]]]))
    >>> round(float(out.beta), 4), round(float(out.weights[0, 0, 0]), 4)
    (1.1309, 0.7619)
    """

    name = "adaptive_temperature"
    display_name = "adaptive θ"
    train_with = "softmax"

    def forward(self, logits: torch.Tensor) -> Normalised:
        with torch.no_grad():
            entropy = rule_entropy(torch.softmax(logits, dim=-1))
            beta = torch_function(adaptive_inverse_temperature)(entropy).to(logits.dtype)
        return self._softmax(logits, beta)


_COEFFICIENTS = sp.symbols("a4 a3 a2 a1 a0", real=True)


@cache
def _rule_with_coefficients() -> Formula:
    """The theory's adaptive rule with its polynomial's coefficients as arguments."""
    entropy = adaptive_polynomial.args[0]
    generic = sum(a * entropy ** (4 - k) for k, a in enumerate(_COEFFICIENTS))
    expr = adaptive_inverse_temperature.expr.xreplace({adaptive_polynomial.expr: generic})
    if expr == adaptive_inverse_temperature.expr:
        raise AssertionError("the adaptive rule no longer contains its polynomial verbatim")
    return Formula("adaptive_rule_refit", expr, (entropy, *_COEFFICIENTS), "refit rule")


class AdaptiveRefit(AdaptiveTemperature):
    """Adaptive temperature with the polynomial refitted on this model's own heads.

    Notes
    -----
    The rule is the paper's (``β = max(P(H), 1)`` for ``H > 1/2``, else 1, the theory's
    expression with its coefficients replaced); the degree-4 polynomial ``P`` is fitted
    per member by :func:`~softmax_dispersion.empirical.refit.refit_polynomials` and set
    with :meth:`set_coefficients`.  Until then it holds the paper's coefficients.

    Examples
    --------
    >>> import torch
    >>> head = AdaptiveRefit(1)
    >>> head.set_coefficients([[0.0, 0.0, 0.0, 0.0, 2.0]])  # β = 2 wherever H > 1/2
    >>> out = head(torch.zeros(1, 1, 4))
    >>> float(out.beta[0, 0])
    2.0
    """

    name = "adaptive_refit"
    display_name = "adaptive θ (refit here)"
    train_with = "softmax"

    def __init__(self, members: int) -> None:
        super().__init__(members)
        paper = [float(c) for c in sp.Poly(adaptive_polynomial.expr).all_coeffs()]
        self.register_buffer("coefficients", torch.tensor([paper] * members, dtype=torch.float64))

    def set_coefficients(self, coefficients: list[list[float]]) -> None:
        """One row ``[a₄, a₃, a₂, a₁, a₀]`` (highest degree first) per member."""
        values = torch.tensor(coefficients, dtype=torch.float64)
        if values.shape != (self.members, 5):
            raise ValueError(
                f"need {self.members} rows of 5 coefficients, got {tuple(values.shape)}"
            )
        self.coefficients = values

    def forward(self, logits: torch.Tensor) -> Normalised:
        with torch.no_grad():
            entropy = rule_entropy(torch.softmax(logits.double(), dim=-1))
            shape = (-1, *[1] * (entropy.dim() - 1))
            columns = [self.coefficients[:, k].view(shape) for k in range(5)]
            beta = torch_function(_rule_with_coefficients())(entropy, *columns)
            beta = beta.expand(entropy.shape).to(logits.dtype)
        return self._softmax(logits, beta)


class ScalableSoftmax(Normaliser):
    """SSMax: ``softmax(s log(n) e)`` with one learned ``s`` per member.

    Notes
    -----
    ``β = s log n`` grows with the set size, so T1's bound ``e^{βδ}/n`` no longer
    forces dispersion: on a top logit ahead of the rest by ``Δ``, the top weight tends
    to 1 when ``sΔ > 1`` (claim T10).

    Examples
    --------
    >>> import torch
    >>> out = ScalableSoftmax(1, s=1.0)(torch.tensor([[[1.0, 0.0]]]))
    >>> round(float(out.beta.detach()), 6) == round(math.log(2), 6)
    True
    """

    name = "ssmax"
    display_name = "SSMax (learned s)"
    length_scaled = True

    def __init__(self, members: int, s: float = 1.0) -> None:
        super().__init__(members)
        self.s = nn.Parameter(torch.full((members,), float(s)))

    def forward(self, logits: torch.Tensor) -> Normalised:
        log_n = _log_lengths(logits)
        beta = self.s.to(logits.dtype).view(-1, *[1] * (logits.dim() - 2)) * log_n
        return self._softmax(logits, beta)


class LogN(Normaliser):
    """``softmax(log(n) e)``: length scaling with the scale fixed (``s = 1``)."""

    name = "logn"
    display_name = "log-n scaling"
    length_scaled = True

    def forward(self, logits: torch.Tensor) -> Normalised:
        return self._softmax(logits, _log_lengths(logits))


class _Entmax(Normaliser):
    softmax_family = False

    def _weights(self, logits: torch.Tensor) -> torch.Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    def forward(self, logits: torch.Tensor) -> Normalised:
        beta = torch.ones(logits.shape[:-1], dtype=logits.dtype, device=logits.device)
        return Normalised(self._weights(logits), None, beta)


class Entmax15(_Entmax):
    """1.5-entmax (sparse: exact zeros, possibly one-hot), from the ``entmax`` package."""

    name = "entmax15"
    display_name = "1.5-entmax"

    def _weights(self, logits: torch.Tensor) -> torch.Tensor:
        from entmax import entmax15

        return entmax15(logits, dim=-1)  # type: ignore[no-any-return]


class Sparsemax(_Entmax):
    """Sparsemax: the Euclidean projection onto the simplex, from the ``entmax`` package."""

    name = "sparsemax"
    display_name = "sparsemax"

    def _weights(self, logits: torch.Tensor) -> torch.Tensor:
        from entmax import sparsemax

        return sparsemax(logits, dim=-1)  # type: ignore[no-any-return]


def _cap_name(value: float) -> str:
    return format(value, "g")


class SoftCapped(Softmax):
    """Softmax of soft-capped logits ``C tanh(q·k/(√d C))``: a bounded head.

    Notes
    -----
    Every logit lies in ``(−C, C)``, so T1 holds with a spread below ``2C`` whatever the
    weights learn, and T4 forces the top weight below ½ by ``n = 1 + e^{2C}`` at the latest.
    Gemma 2 caps attention logits this way (at ``C = 50``); here ``C`` is small enough for
    that size to be testable.

    Examples
    --------
    >>> import torch
    >>> head = SoftCapped(1, cap=2.0)
    >>> keys, query = torch.full((1, 1, 3, 4), 10.0), torch.ones(1, 4)
    >>> round(float(head.attention_logits(keys, query).max()), 6)
    2.0
    >>> head.name, head.logit_bound
    ('softcap2', 2.0)
    """

    family = "softcap"

    def __init__(self, members: int, cap: float = 2.0) -> None:
        super().__init__(members)
        if not cap > 0 or not math.isfinite(cap):
            raise ValueError(f"the soft cap must be a finite number > 0, got {cap}")
        self.cap = float(cap)
        self.name = self.train_with = f"softcap{_cap_name(cap)}"
        self.display_name = f"soft-cap {_cap_name(cap)}"
        self.logit_bound = self.cap

    def attention_logits(self, keys: torch.Tensor, query: torch.Tensor) -> torch.Tensor:
        return self.cap * torch.tanh(super().attention_logits(keys, query) / self.cap)


class QKNormed(Softmax):
    """Softmax of ``g q̂·k̂``: unit query and keys times a learned scale below a cap.

    Notes
    -----
    QK-norm (Henry et al., 2020) normalises the query and every key to unit length and
    multiplies their cosine by a learned scale ``g``; here ``g = C·sigmoid(ρ)`` with
    ``ρ`` learned (starting at 0, ``g = C/2``), so every logit lies in ``[−C, C]``.

    Examples
    --------
    >>> import torch
    >>> head = QKNormed(1, cap=4.0)
    >>> keys, query = torch.tensor([[[[3.0, 0.0], [-1.0, 0.0]]]]), torch.tensor([[2.0, 0.0]])
    >>> head.attention_logits(keys, query).tolist()
    [[[2.0, -2.0]]]
    """

    family = "qknorm"

    def __init__(self, members: int, cap: float = 4.0) -> None:
        super().__init__(members)
        if not cap > 0 or not math.isfinite(cap):
            raise ValueError(f"the QK-norm scale cap must be a finite number > 0, got {cap}")
        self.cap = float(cap)
        self.name = self.train_with = f"qknorm{_cap_name(cap)}"
        self.display_name = f"QK-norm, scale ≤ {_cap_name(cap)}"
        self.logit_bound = self.cap
        self.scale_logit = nn.Parameter(torch.zeros(members))

    def scale(self) -> torch.Tensor:
        """The learned scale ``g = C·sigmoid(ρ)`` per member."""
        return self.cap * torch.sigmoid(self.scale_logit)

    def attention_logits(self, keys: torch.Tensor, query: torch.Tensor) -> torch.Tensor:
        unit_keys = torch.nn.functional.normalize(keys, dim=-1)
        unit_query = torch.nn.functional.normalize(query, dim=-1)
        cosine = torch.einsum("mbnd,md->mbn", unit_keys, unit_query)
        return self.scale().to(cosine.dtype)[:, None, None] * cosine


NORMALISERS: dict[str, type[Normaliser]] = {
    cls.name: cls
    for cls in (
        Softmax,
        AdaptiveTemperature,
        AdaptiveRefit,
        ScalableSoftmax,
        LogN,
        Entmax15,
        Sparsemax,
    )
}
"""Every normaliser without a parameter, by name."""

BOUNDED_FAMILIES: dict[str, type[SoftCapped] | type[QKNormed]] = {
    cls.family: cls for cls in (SoftCapped, QKNormed)
}
"""The bounded heads, named ``FAMILY<cap>`` (``softcap2``, ``qknorm3.5``)."""

for _cls in NORMALISERS.values():
    _cls.train_with = _cls.train_with or _cls.name

_BOUNDED_NAME = re.compile(r"^(?P<family>[a-z]+)(?P<cap>[0-9]+(?:\.[0-9]+)?)$")


def _known() -> str:
    return ", ".join([*NORMALISERS, *(f"{family}<cap>" for family in BOUNDED_FAMILIES)])


def normaliser_class(name: str) -> tuple[type[Normaliser], float | None]:
    """The class a normaliser name stands for, and its cap (``None`` without one).

    Raises
    ------
    ValueError
        For a name that is neither registered nor ``FAMILY<cap>`` with a cap > 0.

    Examples
    --------
    >>> cls, cap = normaliser_class("softcap2.5")
    >>> cls.__name__, cap
    ('SoftCapped', 2.5)
    """
    if name in NORMALISERS:
        return NORMALISERS[name], None
    match = _BOUNDED_NAME.match(name)
    if match and match["family"] in BOUNDED_FAMILIES and float(match["cap"]) > 0:
        cap = float(match["cap"])
        if _cap_name(cap) == match["cap"]:
            return BOUNDED_FAMILIES[match["family"]], cap
        raise ValueError(f"write the cap of {name!r} as {match['family']}{_cap_name(cap)}")
    raise ValueError(f"unknown normaliser {name!r}; expected one of {_known()}")


def make_normaliser(name: str, members: int) -> Normaliser:
    """A fresh normaliser called ``name`` for ``members`` models.

    Raises
    ------
    ValueError
        If ``name`` is not one of :data:`NORMALISERS` nor a bounded head ``FAMILY<cap>``.
    """
    cls, cap = normaliser_class(name)
    if cap is None:
        return cls(members)
    return cls(members, cap=cap)  # type: ignore[call-arg]


def describe_normalisers(names: list[str] | tuple[str, ...]) -> dict[str, dict[str, object]]:
    """:meth:`Normaliser.describe` of each name: what a run folder records for reports.

    Examples
    --------
    >>> describe_normalisers(["adaptive_temperature"])["adaptive_temperature"]["train_with"]
    'softmax'
    """
    return {name: make_normaliser(name, 1).describe() for name in names}
