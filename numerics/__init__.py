"""The numerics layer: certified softmax on logit sequences of any length.

Logit sequences are run-length encoded (:class:`LogitSequence`), so a spike of
``10**18`` logits costs two terms.  :func:`certified_softmax` returns, per run, an
enclosure that provably contains the exact coefficient (python-flint ``arb`` balls when
installed, mpmath intervals otherwise) and its correctly rounded value in float16,
bfloat16, float32 or float64, certified when both ends of the enclosure round alike.

Examples
--------
>>> from softmax_dispersion.numerics import LogitSequence, certified_softmax
>>> spike = LogitSequence.from_runs([(5.0, 1), (0.0, 10**18 - 1)])
>>> certified_softmax(spike).value_of(5.0).enclosure.rounded
1.4841315910257658e-16
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

# Every name loads on first use, so that importing the package (or a light module of
# it, such as the family registry that builds the command line's help) costs no numpy,
# mpmath or sympy.
_LAZY = {
    "flint_available": "_backends",
    "DEFAULT_MAX_PRECISION": "evaluate",
    "Enclosure": "evaluate",
    "Evaluation": "evaluate",
    "PrecisionError": "evaluate",
    "RunValue": "evaluate",
    "certified_entropy": "evaluate",
    "certified_logsumexp": "evaluate",
    "certified_softmax": "evaluate",
    "FORMATS": "rounding",
    "FloatFormat": "rounding",
    "float_format": "rounding",
    "round_dyadic": "rounding",
    "round_enclosure": "rounding",
    "LogitSequence": "sequence",
    "FAMILIES": "families",
    "Family": "families",
    "dip": "families",
    "spike": "families",
    "check_dispersion": "checks",
    "check_dispersion_size": "checks",
    "length_scaling_regimes": "checks",
    "adaptive_on_spike": "checks",
    "adversarial_search": "search",
    "ball_value": "ball_formulas",
    "certified_softmax_dense": "dense",
    "DenseEvaluation": "dense",
}

if TYPE_CHECKING:
    from softmax_dispersion.numerics._backends import flint_available
    from softmax_dispersion.numerics.ball_formulas import ball_value
    from softmax_dispersion.numerics.checks import (
        adaptive_on_spike,
        check_dispersion,
        check_dispersion_size,
        length_scaling_regimes,
    )
    from softmax_dispersion.numerics.dense import DenseEvaluation, certified_softmax_dense
    from softmax_dispersion.numerics.evaluate import (
        DEFAULT_MAX_PRECISION,
        Enclosure,
        Evaluation,
        PrecisionError,
        RunValue,
        certified_entropy,
        certified_logsumexp,
        certified_softmax,
    )
    from softmax_dispersion.numerics.families import FAMILIES, Family, dip, spike
    from softmax_dispersion.numerics.rounding import (
        FORMATS,
        FloatFormat,
        float_format,
        round_dyadic,
        round_enclosure,
    )
    from softmax_dispersion.numerics.search import adversarial_search
    from softmax_dispersion.numerics.sequence import LogitSequence


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(f"softmax_dispersion.numerics.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'softmax_dispersion.numerics' has no attribute {name!r}")


__all__ = [
    "DEFAULT_MAX_PRECISION",
    "FAMILIES",
    "FORMATS",
    "DenseEvaluation",
    "Enclosure",
    "Evaluation",
    "Family",
    "FloatFormat",
    "LogitSequence",
    "PrecisionError",
    "RunValue",
    "adaptive_on_spike",
    "adversarial_search",
    "ball_value",
    "certified_entropy",
    "certified_logsumexp",
    "certified_softmax",
    "certified_softmax_dense",
    "check_dispersion",
    "check_dispersion_size",
    "dip",
    "flint_available",
    "float_format",
    "length_scaling_regimes",
    "round_dyadic",
    "round_enclosure",
    "spike",
]
