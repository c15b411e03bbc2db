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

from softmax_dispersion.numerics._backends import flint_available
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
from softmax_dispersion.numerics.rounding import (
    FORMATS,
    FloatFormat,
    float_format,
    round_dyadic,
    round_enclosure,
)
from softmax_dispersion.numerics.sequence import LogitSequence

__all__ = [
    "DEFAULT_MAX_PRECISION",
    "FORMATS",
    "Enclosure",
    "Evaluation",
    "FloatFormat",
    "LogitSequence",
    "PrecisionError",
    "RunValue",
    "certified_entropy",
    "certified_logsumexp",
    "certified_softmax",
    "flint_available",
    "float_format",
    "round_dyadic",
    "round_enclosure",
]
