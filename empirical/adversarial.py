"""T1's worst sets run through the trained models, against each head's certificate.

T1 is tight: its bound ``e^{βδ}/(e^{βδ} + n − 1)`` on the top weight is attained by one
logit at the maximum and ``n − 1`` at the minimum.  For a trained head the certificate
(:mod:`~softmax_dispersion.empirical.logit_ranges`) names the items that attain its
certified extremes, so the worst set *over every possible input* is that argmax item
plus ``n − 1`` copies of the argmin item.  Run through the real model, its top weight
must equal T1's bound at the certified ``δ*`` to within the certificate's gap (and the
float tolerance), and never exceed it.  This fails when the certificate is loose or
wrong, or when the model's weights are not the softmax of its logits at its ``β``.

Where the certified dispersion size ``n*(½)`` lies inside the tested range the size at
which the model's top weight falls below ½ is located by bisection and compared with it;
and the run-length engine of :mod:`softmax_dispersion.numerics` evaluates the worst set
exactly at ``n*(½)`` and ``n*(1/100)``, however large they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import numpy as np
import torch

from softmax_dispersion.empirical._torch_formulas import torch_function
from softmax_dispersion.empirical.bound_check import t1_tolerance
from softmax_dispersion.empirical.logit_function import LogitFunction
from softmax_dispersion.empirical.logit_ranges import DISPERSION_LEVELS, LogitRange
from softmax_dispersion.empirical.model import MaxRetrievalModel
from softmax_dispersion.empirical.normalisers import Normaliser
from softmax_dispersion.theory.dispersion import dispersion_upper

__all__ = [
    "POOLED_SIZES",
    "adversarial_items",
    "adversarial_rows",
    "crossing_size",
    "item_logits",
    "run_length_check",
    "worst_set_logits",
]

POOLED_SIZES = 2**17
"""Up to this size the worst set is also pooled and classified (accuracy); beyond it only
the attention is computed (the values of 10⁶ items per member would not fit)."""

_CHUNK = 2**16


def adversarial_items(
    fn: LogitFunction, found: LogitRange, device: torch.device
) -> tuple[torch.Tensor, torch.Tensor]:
    """The argmax and argmin items of a certificate as float32 model inputs ``(features,)``."""
    rows = fn.items([found.argmax[0], found.argmin[0]], [found.argmax[1], found.argmin[1]])
    both = torch.tensor(rows, dtype=torch.float32, device=device)
    return both[0], both[1]


def _stacked_items(
    fns: list[LogitFunction], ranges: list[LogitRange], device: torch.device
) -> tuple[torch.Tensor, torch.Tensor]:
    pairs = [adversarial_items(fn, found, device) for fn, found in zip(fns, ranges, strict=True)]
    return torch.stack([top for top, _ in pairs]), torch.stack([bottom for _, bottom in pairs])


@torch.no_grad()
def item_logits(
    model: MaxRetrievalModel, fns: list[LogitFunction], ranges: list[LogitRange]
) -> list[tuple[float, float]]:
    """Per member, the model's float32 logits of its argmax and argmin items."""
    device = next(model.parameters()).device
    tops, bottoms = _stacked_items(fns, ranges, device)
    logits = worst_set_logits(model, tops, bottoms, 2)[:, 0].double().cpu()
    return [(float(row[0]), float(row[1])) for row in logits]


def _worst_sets(
    tops: torch.Tensor, bottoms: torch.Tensor, n: int, start: int, stop: int
) -> torch.Tensor:
    """Items ``start:stop`` of each member's worst set: position 0 is the top item."""
    members = tops.shape[0]
    chunk = bottoms[:, None, None, :].expand(members, 1, stop - start, -1).clone()
    if start == 0:
        chunk[:, 0, 0] = tops
    return chunk


@torch.no_grad()
def worst_set_logits(
    model: MaxRetrievalModel, tops: torch.Tensor, bottoms: torch.Tensor, n: int
) -> torch.Tensor:
    """The model's logits ``(members, 1, n)`` on each member's worst set of size ``n``,
    every item computed by the model (in chunks of at most 2^16 items)."""
    parts = []
    for start in range(0, n, _CHUNK):
        items = _worst_sets(tops, bottoms, n, start, min(n, start + _CHUNK))
        keys = model.key(model.encoder(items))
        parts.append(model.normaliser.attention_logits(keys, model.query))
    return torch.cat(parts, dim=-1)


@torch.no_grad()
def _pooled_prediction(
    model: MaxRetrievalModel, tops: torch.Tensor, bottoms: torch.Tensor, weights: torch.Tensor
) -> torch.Tensor:
    n = weights.shape[-1]
    pooled = torch.zeros(weights.shape[0], 1, model.width, device=weights.device)
    for start in range(0, n, _CHUNK):
        stop = min(n, start + _CHUNK)
        values = model.value(model.encoder(_worst_sets(tops, bottoms, n, start, stop)))
        pooled += torch.einsum("mbn,mbnd->mbd", weights[..., start:stop], values)
    predicted: torch.Tensor = model.predictor(pooled).argmax(-1)[:, 0]
    return predicted


def _t1(n: int, spread: float) -> float:
    return float(
        torch_function(dispersion_upper)(
            n, torch.tensor(min(spread, 700.0), dtype=torch.float64), 1.0
        )
    )


def _exact_logit_error(fn: LogitFunction, found: LogitRange, logits: torch.Tensor) -> float:
    """How far the model's float32 logits of the two items are from their exact values."""
    errors = []
    for item, value in ((found.argmax, float(logits[0])), (found.argmin, float(logits[1]))):
        exact = fn.point(*item)
        errors.append(float(abs(exact - value).upper()))
    return max(errors)


@torch.no_grad()
def adversarial_rows(
    model: MaxRetrievalModel,
    normalisers: Mapping[str, Normaliser],
    fns: list[LogitFunction],
    ranges: list[LogitRange],
    sizes: tuple[int, ...],
    *,
    decoys: list[tuple[float, int]] | None = None,
    beta_bound: Mapping[str, float] | None = None,
) -> dict[str, list[list[dict[str, Any]]]]:
    """Run each member's worst sets through the model at every size, for each normaliser.

    Parameters
    ----------
    model
        A trained ensemble; member ``k`` has the logit map ``fns[k]`` and the certified
        range ``ranges[k]``.
    normalisers
        The softmax-family normalisers to measure (the trained one, and inference-only
        ones applied to its logits), by name.
    fns, ranges
        Per member: the logit map and its certificate.
    sizes
        The worst sets' sizes.
    decoys
        Per member, the lowest-logit item of a class other than the argmax item's
        (certified like the rest); the accuracy is measured on the argmax item plus
        ``n − 1`` decoys, so that a dispersed head visibly predicts the decoys' class.
        Without it the argmin item is the decoy.
    beta_bound
        Per normaliser, a proved bound on its ``β`` to check (adaptive θ: T11's ``β_max``).

    Returns
    -------
    dict
        Per normaliser, per member, one row per size: the top weight (``p_max``), the
        effective ``β``, T1's bound at ``β δ*`` (``bound``: the certificate's upper end;
        ``bound_low``: its lower end), their ratio, the float tolerance, whether the top
        weight exceeds the bound (``exceeds``) or falls short of the lower end
        (``short``), the accuracy where pooled (the argmax item's class is the target),
        ``decoy_p_max`` on the decoy set, and ``beta_exceeds`` where a ``β`` bound is
        given.

    Notes
    -----
    Both items' float32 logits are compared with their exact (ball) values; that error
    ``ε_e`` widens the spread to ``[δ*_lo − 2ε_e, δ*_hi + 2ε_e]`` before ``β`` and T1, and
    T12's tolerance for a softmax of that spread is applied on top.
    """
    device = next(model.parameters()).device
    tops, bottoms = _stacked_items(fns, ranges, device)
    targets = torch.tensor([found.argmax[1] for found in ranges], device=device)
    decoy_items = bottoms
    if decoys is not None:
        decoy_rows = [
            fn.items([item[0]], [item[1]])[0] for fn, item in zip(fns, decoys, strict=True)
        ]
        decoy_items = torch.tensor(np.stack(decoy_rows), dtype=torch.float32, device=device)
    first = worst_set_logits(model, tops, bottoms, 2)
    errors = [
        _exact_logit_error(fn, found, first[member, 0].double().cpu())
        for member, (fn, found) in enumerate(zip(fns, ranges, strict=True))
    ]
    out: dict[str, list[list[dict[str, Any]]]] = {name: [[] for _ in fns] for name in normalisers}
    for n in sizes:
        logits = worst_set_logits(model, tops, bottoms, n)
        decoy_logits = worst_set_logits(model, tops, decoy_items, n) if n <= POOLED_SIZES else None
        for name, normaliser in normalisers.items():
            attention = normaliser(logits)
            weights = attention.weights
            predicted, decoy_weights = None, None
            if decoy_logits is not None:
                decoy_weights = normaliser(decoy_logits).weights
                predicted = _pooled_prediction(model, tops, decoy_items, decoy_weights)
            for member, found in enumerate(ranges):
                beta = float(attention.beta[member, 0])
                p_max = float(weights[member, 0].amax())
                wide = float(found.spread_high) + 2 * errors[member]
                narrow = max(float(found.spread_low) - 2 * errors[member], 0.0)
                bound, bound_low = _t1(n, beta * wide), _t1(n, beta * narrow)
                tolerance = float(
                    t1_tolerance(
                        n, torch.tensor([beta * wide], dtype=torch.float64), weights.dtype
                    )[0]
                )
                row: dict[str, Any] = {
                    "n": n,
                    "p_max": p_max,
                    "beta": beta,
                    "bound": bound,
                    "bound_low": bound_low,
                    "ratio": p_max / bound,
                    "tolerance": tolerance,
                    "logit_error": errors[member],
                    "exceeds": p_max > bound * (1 + tolerance),
                    "short": p_max < bound_low * (1 - tolerance),
                    "accuracy": None
                    if predicted is None
                    else float(predicted[member] == targets[member]),
                    "decoy_p_max": None
                    if decoy_weights is None
                    else float(decoy_weights[member, 0].amax()),
                }
                if beta_bound is not None and name in beta_bound:
                    row["beta_exceeds"] = beta > beta_bound[name] * (1 + 1e-6)
                out[name][member].append(row)
    return out


@torch.no_grad()
def crossing_size(
    model: MaxRetrievalModel,
    normaliser: Normaliser,
    fns: list[LogitFunction],
    ranges: list[LogitRange],
    largest: int,
) -> list[int | None]:
    """Per member, the least ``n`` whose worst set gets a top weight below ½ from the
    model (``None`` when it is still ½ or more at ``largest``).

    The top weight of the worst set decreases with ``n``: doubling ``n`` brackets the
    crossing, bisection finds it, with about ``2 log₂ n`` model evaluations per member
    and no use of the certificate's prediction.
    """
    device = next(model.parameters()).device
    tops, bottoms = _stacked_items(fns, ranges, device)

    def below_half(n: int) -> list[bool]:
        weights = normaliser(worst_set_logits(model, tops, bottoms, n)).weights
        return [bool(weights[m, 0].amax() < 0.5) for m in range(len(fns))]

    answers: list[int | None] = []
    for member in range(len(fns)):
        # Doubling, then bisection: top weight >= ½ at low (n = 1: weight 1), < ½ at high.
        low, high = 1, 2
        while high <= largest and not below_half(high)[member]:
            low, high = high, 2 * high
        if high > largest:
            if not below_half(largest)[member]:
                answers.append(None)
                continue
            high = largest
        while high - low > 1:
            middle = (low + high) // 2
            if below_half(middle)[member]:
                high = middle
            else:
                low = middle
        answers.append(high)
    return answers


def run_length_check(
    top_logit: float,
    bottom_logit: float,
    least_sizes: Mapping[str, int],
    *,
    beta: float = 1.0,
    slack: float = 1e-6,
) -> dict[str, Any]:
    """The worst set at each certified dispersion size, evaluated by the run-length engine.

    Parameters
    ----------
    top_logit, bottom_logit
        The model's float32 logits of the argmax and argmin items.
    least_sizes
        Per level of :data:`~softmax_dispersion.empirical.logit_ranges.DISPERSION_LEVELS`,
        the least size ``⌈n*(ε)⌉`` of the certificate (any size: the engine's cost does
        not grow with ``n``).
    beta
        The head's fixed inverse temperature.
    slack
        The relative allowance above ``ε``: the float32 logits' spread may exceed the
        certified one by their rounding error (about twice that error, relatively).

    Returns
    -------
    dict
        Per level: the size, the certified top weight there (decimal enclosure) and
        whether it is at most ``ε`` (rounded up).

    Examples
    --------
    >>> result = run_length_check(2.0, 0.0, {"half": 9})  # n*(½) = 1 + e² ≈ 8.39
    >>> result["half"]["at_most_level"], result["half"]["p_max_upper"][:6]  # e²/(e² + 8)
    (True, '4.8015')
    """
    from softmax_dispersion.numerics import LogitSequence, certified_softmax
    from softmax_dispersion.numerics.checks import enclosure_dict

    out: dict[str, Any] = {}
    for name, size in least_sizes.items():
        level = Fraction(*DISPERSION_LEVELS[name])
        spike = LogitSequence.from_runs([(top_logit, 1), (bottom_logit, size - 1)])
        result = certified_softmax(spike, theta=1 / Fraction(beta), format=None)
        enclosure = result.value_of(top_logit).enclosure
        upper = enclosure_dict(enclosure)["upper"]
        out[name] = {
            "size": str(size),
            "p_max_lower": enclosure_dict(enclosure)["lower"],
            "p_max_upper": upper,
            "at_most_level": Fraction(upper) <= level * (1 + Fraction(slack)),
        }
    return out
