"""Certified checks of the theory's bounds on concrete logit sequences.

Each check evaluates softmax with :func:`~softmax_dispersion.numerics.evaluate.
certified_softmax` (the engine under test) and the bound with :func:`~softmax_dispersion.
numerics.ball_formulas.ball_value` on the theory layer's own exported formula, both as exact
enclosures, and decides from the enclosures alone:

* **violated** only when the enclosures prove it (the coefficient lies entirely on the
  wrong side of the bound);
* **holds** when they prove the bound strictly;
* **attained** when the two enclosures overlap and both are tight (relative width at
  most ``2**−64``), as for the spike on T1's upper bound: equal to within the
  enclosures;
* **undecided** when they overlap but one is wide.

An undecided comparison sends the engine up a precision ladder (doubling, to a cap),
and the first rung already carries the bits that the size of ``δ/θ`` demands (see
:func:`resolution_bits`), so that "attained" is not an artefact of coefficients
crowding near 1 or near ``1/n``.  Results are small frozen dataclasses whose
``to_dict()`` renders every enclosure as decimal strings of 40 significant digits,
rounded outward.
"""

from __future__ import annotations

from softmax_dispersion.numerics.checks._common import (
    DEFAULT_SIZES,
    DISPERSION_BOUNDS,
    Bound,
    Verdict,
    compare_to_bound,
    enclosure_dict,
    exact_spike,
    resolution_bits,
)
from softmax_dispersion.numerics.checks.adaptive import (
    AdaptiveSpikeReport,
    AdaptiveSpikeRow,
    adaptive_on_spike,
)
from softmax_dispersion.numerics.checks.dispersion import (
    BoundCheck,
    DispersionCheck,
    check_dispersion,
)
from softmax_dispersion.numerics.checks.dispersion_size import (
    DispersionSizeCheck,
    check_dispersion_size,
)
from softmax_dispersion.numerics.checks.length_scaling import (
    LengthScalingReport,
    LengthScalingRow,
    length_scaling_regimes,
)

__all__ = [
    "DEFAULT_SIZES",
    "DISPERSION_BOUNDS",
    "AdaptiveSpikeReport",
    "AdaptiveSpikeRow",
    "Bound",
    "BoundCheck",
    "DispersionCheck",
    "DispersionSizeCheck",
    "LengthScalingReport",
    "LengthScalingRow",
    "Verdict",
    "adaptive_on_spike",
    "check_dispersion",
    "check_dispersion_size",
    "compare_to_bound",
    "enclosure_dict",
    "exact_spike",
    "length_scaling_regimes",
    "resolution_bits",
]
