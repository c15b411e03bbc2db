"""A trained head's logit as a function of one item: ``e(priority, class)``.

The attention logit of an item depends on that item alone (the query is learned, not
computed from the set), so a head is summed up by the map from the item domain
``[0, 1] × {0, …, classes − 1}`` to logits.  :class:`LogitFunction` holds one member's
weights, exactly as trained (float32 values, read as exact binary fractions), and
evaluates that map two ways:

* in float64 (:meth:`LogitFunction.__call__`), for sampling and quadrature;
* over a whole interval of priorities in certified ball arithmetic
  (:meth:`LogitFunction.enclosure`, python-flint ``arb``), for the branch-and-bound
  certificates of :mod:`~softmax_dispersion.empirical.logit_ranges`.

:func:`load_logit_function` rebuilds it from a run folder's checkpoint, so anyone can hold
a published certificate against the model it certifies.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    import torch

    from softmax_dispersion.empirical.model import MaxRetrievalModel

__all__ = ["GELU_BITS", "LogitFunction", "load_logit_function", "logit_function"]

GELU_BITS = 80
"""Working precision (bits) of the ball evaluations; the weights are exact at any."""

Array = npt.NDArray[np.float64]


def _exact(values: Any) -> Array:
    """float32 parameters as float64 arrays: every float32 is a float64 exactly."""
    return np.asarray(values.detach().cpu().double().numpy(), dtype=np.float64)


@dataclass(frozen=True)
class LogitFunction:
    """One trained head's item → logit map.

    Attributes
    ----------
    normaliser, seed
        Which head: the normaliser it was trained with and the seed of the member.
    classes
        The number of classes (the item is ``[priority, one-hot class]``).
    first_weight, first_bias, second_weight, second_bias
        The item MLP ``h = W₂ᵀ GELU(W₁ᵀ x + b₁) + b₂`` (weights stored ``(fan_in, fan_out)``).
    key_weight, key_bias, query
        The key map ``k = W_kᵀ h + b_k`` and the learned query ``q``.
    kind
        ``"dot"`` (``q·k/√d``), ``"softcap"`` (``C tanh(q·k/(√d C))``) or ``"qknorm"``
        (``g q̂·k̂`` with ``g = C·sigmoid(ρ)``).
    cap, scale_logit
        ``C`` for the bounded kinds; ``ρ`` for QK-norm.
    """

    normaliser: str
    seed: int
    classes: int
    first_weight: Array = field(repr=False)
    first_bias: Array = field(repr=False)
    second_weight: Array = field(repr=False)
    second_bias: Array = field(repr=False)
    key_weight: Array = field(repr=False)
    key_bias: Array = field(repr=False)
    query: Array = field(repr=False)
    kind: str = "dot"
    cap: float | None = None
    scale_logit: float | None = None

    @property
    def width(self) -> int:
        """The hidden width ``d``."""
        return int(self.query.shape[0])

    # --- float64 -------------------------------------------------------------------------

    def items(self, priority: npt.ArrayLike, label: npt.ArrayLike) -> Array:
        """The model's input rows ``[priority, one-hot class]`` for arrays of items."""
        p, c = np.broadcast_arrays(np.asarray(priority, np.float64), np.asarray(label, np.int64))
        p, c = p.reshape(-1), c.reshape(-1)
        rows = np.zeros((p.size, 1 + self.classes))
        rows[:, 0] = p
        rows[np.arange(p.size), 1 + c] = 1.0
        return rows

    def __call__(self, priority: npt.ArrayLike, label: npt.ArrayLike) -> Array:
        """The logits of items ``(priority, label)`` in float64 (arrays broadcast).

        Examples
        --------
        >>> import numpy as np
        >>> fn = LogitFunction.random(width=4, seed=0)
        >>> fn(np.array([0.0, 0.5, 1.0]), 3).shape
        (3,)
        """
        import torch

        p, c = np.broadcast_arrays(np.asarray(priority, np.float64), np.asarray(label, np.int64))
        shape = p.shape
        rows = torch.from_numpy(self.items(p.reshape(-1), c.reshape(-1)))
        w = {k: torch.from_numpy(v) for k, v in self._tensors.items()}
        hidden = torch.nn.functional.gelu(rows @ w["first_weight"] + w["first_bias"])
        keys = (hidden @ w["second_weight"] + w["second_bias"]) @ w["key_weight"] + w["key_bias"]
        query = w["query"]
        if self.kind == "qknorm":
            cosine = (keys @ query) / (keys.norm(dim=-1) * query.norm())
            logits = self.scale * cosine
        else:
            logits = (keys @ query) / math.sqrt(self.width)
            if self.kind == "softcap":
                assert self.cap is not None
                logits = self.cap * torch.tanh(logits / self.cap)
        return np.asarray(logits.numpy(), dtype=np.float64).reshape(shape)

    @property
    def scale(self) -> float:
        """QK-norm's learned scale ``g = C·sigmoid(ρ)`` (float64)."""
        if self.kind != "qknorm" or self.cap is None or self.scale_logit is None:
            raise ValueError("only a QK-norm head has a learned scale")
        return self.cap / (1 + math.exp(-self.scale_logit))

    @cached_property
    def _tensors(self) -> dict[str, Array]:
        return {
            "first_weight": self.first_weight,
            "first_bias": self.first_bias,
            "second_weight": self.second_weight,
            "second_bias": self.second_bias,
            "key_weight": self.key_weight,
            "key_bias": self.key_bias,
            "query": self.query,
        }

    # --- certified -----------------------------------------------------------------------

    @cached_property
    def _balls(self) -> _BallWeights:
        return _BallWeights(self)

    def enclosure(self, low: float, high: float, label: int) -> tuple[Any, Any]:
        """Certified bounds ``(lo, hi)`` (``arb`` points) with ``lo <= e(p, label) <= hi``
        for every priority ``p`` in ``[low, high]``.

        Notes
        -----
        The pre-activations ``z_j = W₁[0, j] p + W₁[1 + c, j] + b₁_j`` are linear in ``p``,
        so over the interval each lies between its values at the ends.  GELU is decreasing
        below its minimiser ``x₀ ≈ −0.7518`` and increasing above; ``x₀`` is enclosed once,
        certifiably, so each ``GELU(z_j)`` is bounded by its values at the ends, or by
        the certified minimum ``GELU(x₀)`` and the larger end value when ``[z_lo, z_hi]``
        may contain ``x₀``.  The logit is affine in the hidden vector (``q·k = uᵀ h + u₀``
        with ``u = W₂ W_k q``, computed in balls once per head), so its bounds follow from
        the signs of ``u``.  QK-norm divides by ``‖k‖`` (bounded below from the ball vector
        ``k``) and is clipped to ``[−g, g]``; soft-capping is monotone.  Every operation is
        an ``arb`` ball operation (outward rounded) at :data:`GELU_BITS` bits.

        Examples
        --------
        >>> fn = LogitFunction.random(width=4, seed=0)
        >>> lo, hi = fn.enclosure(0.25, 0.5, 2)
        >>> values = fn(np.linspace(0.25, 0.5, 101), 2)
        >>> bool(lo <= values.min()) and bool(values.max() <= hi)
        True
        """
        return self._balls.enclosure(low, high, label)

    def point(self, priority: float, label: int) -> Any:
        """The exact logit of one item as a certified ``arb`` ball."""
        return self._balls.point(priority, label)

    # --- construction --------------------------------------------------------------------

    @classmethod
    def random(cls, *, width: int = 8, classes: int = 10, seed: int = 0) -> LogitFunction:
        """A head with random weights (tests and examples)."""
        rng = np.random.default_rng(seed)
        scale = 1 / math.sqrt(width)

        def draw(*shape: int) -> Array:
            # float32 values, as a trained head stores them
            return rng.uniform(-1, 1, shape).astype(np.float32).astype(np.float64)

        return cls(
            normaliser="softmax",
            seed=seed,
            classes=classes,
            first_weight=draw(1 + classes, width),
            first_bias=draw(width),
            second_weight=draw(width, width) * scale,
            second_bias=draw(width) * scale,
            key_weight=draw(width, width) * scale,
            key_bias=draw(width) * scale,
            query=draw(width),
        )


class _BallWeights:
    """A head's weights as ``arb`` balls, and the interval evaluation built on them."""

    def __init__(self, fn: LogitFunction) -> None:
        import flint

        self.flint = flint
        self.fn = fn
        with flint.ctx.workprec(GELU_BITS):
            arb = flint.arb
            self.first = [[arb(float(v)) for v in row] for row in fn.first_weight]
            self.first_bias = [arb(float(v)) for v in fn.first_bias]
            self.second = flint.arb_mat([[float(v) for v in row] for row in fn.second_weight])
            key = flint.arb_mat([[float(v) for v in row] for row in fn.key_weight])
            query = flint.arb_mat([[float(v)] for v in fn.query])
            second_bias = flint.arb_mat([[float(v) for v in fn.second_bias]])
            key_bias = flint.arb_mat([[float(v) for v in fn.key_bias]])
            # q·k = h·(W₂ W_k q) + (b₂ W_k + b_k)·q, and k = h·(W₂ W_k) + (b₂ W_k + b_k)
            self.key_map = self.second * key
            self.key_offset = second_bias * key + key_bias
            self.score = self.key_map * query
            self.score_u = [self.score[j, 0] for j in range(fn.width)]
            self.score_offset = (self.key_offset * query)[0, 0]
            self.query_norm = sum((_square(query[j, 0]) for j in range(fn.width)), arb(0)).sqrt()
            self.sqrt_width = arb(fn.width).sqrt()
            self.minimiser = _gelu_minimiser(flint)
            self.minimum = _gelu_ball(flint, self.minimiser)
            if fn.kind == "qknorm":
                assert fn.cap is not None and fn.scale_logit is not None
                self.scale = arb(fn.cap) / (1 + (-arb(fn.scale_logit)).exp())
            if fn.kind == "softcap":
                assert fn.cap is not None
                self.cap = arb(fn.cap)
        self._points: dict[tuple[float, int], list[Any]] = {}

    def _pre_activations(self, priority: float, label: int) -> list[Any]:
        arb = self.flint.arb
        p = arb(priority)
        first, onehot = self.first[0], self.first[1 + label]
        return [first[j] * p + onehot[j] + self.first_bias[j] for j in range(self.fn.width)]

    def _hidden_at(self, priority: float, label: int) -> list[Any]:
        key = (priority, label)
        if key not in self._points:
            self._points[key] = [
                _gelu_ball(self.flint, z) for z in self._pre_activations(priority, label)
            ]
        return self._points[key]

    def _logit(
        self, lows: list[Any], highs: list[Any], hidden: list[Any] | None
    ) -> tuple[Any, Any]:
        # Bounds of the logit for hidden values h_j in [lows_j, highs_j] (arb points).
        arb = self.flint.arb
        width = self.fn.width
        score_lo, score_hi = self.score_offset, self.score_offset
        for j in range(width):
            u = self.score_u[j]
            a, b = u * lows[j], u * highs[j]
            score_lo += _lower(a, b)
            score_hi += _upper(a, b)
        score_lo, score_hi = score_lo.lower(), score_hi.upper()
        if self.fn.kind == "qknorm":
            if hidden is not None:
                h = self.flint.arb_mat([hidden])
            else:
                h = self.flint.arb_mat([[arb.union(lows[j], highs[j]) for j in range(width)]])
            k = h * self.key_map + self.key_offset
            norm_lo = sum((_square(k[0, j].abs_lower()) for j in range(width)), arb(0))
            norm_hi = sum((_square(k[0, j].abs_upper()) for j in range(width)), arb(0))
            norm_lo, norm_hi = norm_lo.sqrt().lower(), norm_hi.sqrt().upper()
            if not norm_lo > 0:
                return -self.scale.upper(), self.scale.upper()
            q = self.query_norm
            # cos = score/(‖k‖‖q‖): bound each sign case by the extreme norms.
            low = score_lo / (q * (norm_hi if score_lo >= 0 else norm_lo))
            high = score_hi / (q * (norm_lo if score_hi >= 0 else norm_hi))
            low = arb(-1) if low.lower() < -1 else low
            high = arb(1) if high.upper() > 1 else high
            return (self.scale * low).lower(), (self.scale * high).upper()
        low, high = score_lo / self.sqrt_width, score_hi / self.sqrt_width
        if self.fn.kind == "softcap":
            low = self.cap * (low / self.cap).tanh()
            high = self.cap * (high / self.cap).tanh()
        return low.lower(), high.upper()

    def point(self, priority: float, label: int) -> Any:
        with self.flint.ctx.workprec(GELU_BITS):
            hidden = self._hidden_at(priority, label)
            lows = [h.lower() for h in hidden]
            highs = [h.upper() for h in hidden]
            low, high = self._logit(lows, highs, hidden)
            return self.flint.arb.union(low, high)

    def enclosure(self, low: float, high: float, label: int) -> tuple[Any, Any]:
        if not low <= high:
            raise ValueError(f"need low <= high, got [{low}, {high}]")
        with self.flint.ctx.workprec(GELU_BITS):
            ends = (self._hidden_at(low, label), self._hidden_at(high, label))
            z_low = self._pre_activations(low, label)
            z_high = self._pre_activations(high, label)
            lows, highs = [], []
            x0 = self.minimiser
            for j in range(self.fn.width):
                g_low, g_high = ends[0][j], ends[1][j]
                z_min = _lower(z_low[j], z_high[j])
                z_max = _upper(z_low[j], z_high[j])
                top = _upper(g_low, g_high)
                if z_min >= x0.upper() or z_max <= x0.lower():
                    lows.append(_lower(g_low, g_high))  # monotone on the whole interval
                else:
                    lows.append(_lower(self.minimum, _lower(g_low, g_high)))
                highs.append(top)
            return self._logit(lows, highs, None)


def _lower(a: Any, b: Any) -> Any:
    """The lower end of the hull of two balls (an exact ``arb`` point)."""
    return a.lower() if a.lower() < b.lower() else b.lower()


def _upper(a: Any, b: Any) -> Any:
    return a.upper() if a.upper() > b.upper() else b.upper()


def _square(x: Any) -> Any:
    # arb's x**2 is a real power (NaN for a ball around 0); a product is what is meant.
    return x * x


def _gelu_ball(flint: Any, x: Any) -> Any:
    # GELU(x) = x Φ(x) = x (1 + erf(x/√2))/2, exactly as torch's default GELU.
    return x * (1 + (x / flint.arb(2).sqrt()).erf()) / 2


def _gelu_slope(flint: Any, x: Any) -> Any:
    # GELU'(x) = Φ(x) + x φ(x)
    phi = (-(x * x) / 2).exp() / (2 * flint.arb.pi()).sqrt()
    return (1 + (x / flint.arb(2).sqrt()).erf()) / 2 + x * phi


def _gelu_minimiser(flint: Any) -> Any:
    """A certified ball around GELU's minimiser ``x₀`` (where ``Φ(x) + xφ(x) = 0``).

    GELU'' = φ(x)(2 − x²) > 0 on (−√2, √2), so the slope increases there and has one
    root; below −√2 the slope is negative (it decreases towards its limit 0 from below)
    and above 0 it is positive.  So GELU decreases on (−∞, x₀] and increases on [x₀, ∞),
    and bisecting on the slope's certified sign over [−1, −1/2] encloses x₀.
    """
    low, high = flint.arb(-1), flint.arb("-0.5")
    if not (_gelu_slope(flint, low) < 0 and _gelu_slope(flint, high) > 0):
        raise ArithmeticError("GELU's slope does not change sign on [-1, -0.5]")
    for _ in range(60):  # the slope is increasing near x₀: bisect on its certified sign
        middle = (low + high) / 2
        slope = _gelu_slope(flint, middle)
        if slope < 0:
            low = middle
        elif slope > 0:
            high = middle
        else:
            break
    return flint.arb.union(low, high)


def logit_function(model: MaxRetrievalModel, member: int, seed: int) -> LogitFunction:
    """The item → logit map of one member of a trained ensemble.

    Examples
    --------
    >>> import torch
    >>> from softmax_dispersion.empirical.config import preset
    >>> from softmax_dispersion.empirical.training import build_model
    >>> model = build_model(preset("quick", width=8), "softmax", [0], torch.device("cpu"))
    >>> fn = logit_function(model, 0, 0)
    >>> items = torch.tensor(fn.items([0.3], 4), dtype=torch.float32)[None, None]
    >>> logit = float(model.attention_logits(items)[0][0, 0, 0].detach())
    >>> abs(logit - float(fn(0.3, 4))) < 1e-5
    True
    """
    state = model.state_dict()
    return _from_state(
        {key: value[member] for key, value in state.items()},
        model.normaliser.name,
        seed,
        int(state["predictor.2.weight"].shape[-1]),
    )


def _from_state(
    state: dict[str, torch.Tensor], normaliser: str, seed: int, classes: int
) -> LogitFunction:
    from softmax_dispersion.empirical.normalisers import (
        QKNormed,
        SoftCapped,
        normaliser_class,
    )

    cls, cap = normaliser_class(normaliser)
    kind = "softcap" if cls is SoftCapped else "qknorm" if cls is QKNormed else "dot"
    scale_logit = float(state["normaliser.scale_logit"]) if kind == "qknorm" else None
    return LogitFunction(
        normaliser=normaliser,
        seed=seed,
        classes=classes,
        first_weight=_exact(state["encoder.0.weight"]),
        first_bias=_exact(state["encoder.0.bias"]).reshape(-1),
        second_weight=_exact(state["encoder.2.weight"]),
        second_bias=_exact(state["encoder.2.bias"]).reshape(-1),
        key_weight=_exact(state["key.weight"]),
        key_bias=_exact(state["key.bias"]).reshape(-1),
        query=_exact(state["query"]).reshape(-1),
        kind=kind,
        cap=cap,
        scale_logit=scale_logit,
    )


def load_logit_function(run_dir: Path | str, normaliser: str, seed: int) -> LogitFunction:
    """The trained item → logit map of one head of a run folder, from its checkpoint.

    Parameters
    ----------
    run_dir
        A max-retrieval run folder (``experiment max-retrieval --out``).
    normaliser
        The normaliser the head was trained with (``softmax``, ``ssmax``, ``softcap2``…;
        adaptive temperature uses the softmax heads).
    seed
        The member's seed.

    Returns
    -------
    LogitFunction
        ``fn(priority, label)`` in float64 and ``fn.enclosure(low, high, label)`` in
        certified ball arithmetic, from the checkpoint's exact float32 weights.

    Raises
    ------
    FileNotFoundError
        When the run folder has no such checkpoint.

    Examples
    --------
    A head trained for a few steps and checkpointed as a run folder holds it; the map
    gives the model's own logit for an item:

    >>> import tempfile
    >>> import torch
    >>> from softmax_dispersion.empirical.config import preset
    >>> from softmax_dispersion.empirical.experiment import save_checkpoints
    >>> from softmax_dispersion.empirical.training import train
    >>> config = preset("quick", normalisers=("softcap2",), steps=5, width=8)
    >>> run = train(config, "softcap2", [3])
    >>> run_dir = Path(tempfile.mkdtemp())
    >>> save_checkpoints(run_dir, config, run)
    >>> fn = load_logit_function(run_dir, "softcap2", 3)
    >>> items = torch.tensor(fn.items([0.3], 4), dtype=torch.float32)[None, None]
    >>> logit = float(run.model.attention_logits(items)[0][0, 0, 0].detach())
    >>> abs(logit - float(fn(0.3, 4))) < 1e-5
    True

    Against a real run's certificate (``certificates.json``, same folder)::

        fn = load_logit_function("run1", "softmax", 0)
        head = json.load(open("run1/certificates.json"))["heads"]["softmax"]["0"]
        fn(head["argmax"]["priority"], head["argmax"]["class"])  # in head["logit_max"]
    """
    import torch

    run_dir = Path(run_dir)
    path = run_dir / "checkpoints" / f"{normaliser}-seed{seed}.pt"
    if not path.is_file():
        raise FileNotFoundError(f"no checkpoint {path}")
    payload = torch.load(path, map_location="cpu", weights_only=True)
    state = payload["state"]
    return _from_state(state, normaliser, seed, int(state["predictor.2.weight"].shape[-1]))
