"""T13: the top weight of a typical set, predicted from the logit map alone.

Run ``python -m softmax_dispersion.theory.typical_sets`` to check the proofs.

T1 bounds the top weight over *every* set; for trained heads with large spreads it is
vacuous at any testable size.  A typical set is drawn i.i.d. from the task's item
distribution, and its top weight ``p = 1/(1 + S)``, ``S = Σ_{j ≠ top} exp(e_j − e*)``, is
governed by the mean ``I`` of one term: ``S ≈ (n − 1)·I``.

T13 (typical sets)
    Condition on the top item (logit ``e*``): the other ``m = n − 1`` items are then i.i.d.
    (the distribution below the top item), so the terms ``Y_j = exp(e_j − e*)`` are i.i.d.
    with mean ``I``, variance at most ``σ²`` and values in ``[0, b]`` (``b = 1`` when the
    logit map is monotone in the priority, for then no other item's logit exceeds ``e*``).
    *Cited premise* (Bernstein's inequality, e.g. Boucheron, Lugosi & Massart 2013,
    Thm. 2.10 and its two-sided form): ``|S/m − I| <= r`` with probability at least
    ``1 − η``, where ``r = r(m, σ², b, η)`` solves ``m r² = L (2σ² + 2br/3)``,
    ``L = log(2/η)``.  *Proved here*: ``r`` is that root; and on the event
    ``I − r <= S/m <= I + r`` the top weight lies in the band
    ``1/(1 + m(I + r)) <= p <= 1/(1 + m·max(I − r, 0))``, which contains the mean-field
    value ``1/(1 + mI)``.

The formulas are exported for the empirical layer, which computes ``I``, ``σ²`` and ``b``
from each trained head's logit map and checks that at most a fraction ``η`` of measured
sets fall outside the band.
"""

from __future__ import annotations

import sympy as sp

from softmax_dispersion.theory.formulas import formula

__all__ = [
    "bernstein_radius",
    "typical_band_lower",
    "typical_band_upper",
    "typical_mean_field",
]

_n = sp.Symbol("n", positive=True, integer=True)
_mean = sp.Symbol("mean", nonnegative=True)
_variance = sp.Symbol("variance", nonnegative=True)
_bound = sp.Symbol("bound", positive=True)
_eta = sp.Symbol("eta", positive=True)
_radius = sp.Symbol("radius", nonnegative=True)

_level = sp.log(2 / _eta)
_others = _n - 1

typical_mean_field = formula(
    "typical_mean_field",
    1 / (1 + _others * _mean),
    (_n, _mean),
    "T13: the mean-field top weight 1/(1 + (n−1)I) of a typical set",
)
bernstein_radius = formula(
    "bernstein_radius",
    (_bound * _level / 3 + sp.sqrt((_bound * _level / 3) ** 2 + 2 * _others * _variance * _level))
    / _others,
    (_n, _variance, _bound, _eta),
    "T13: Bernstein's deviation r of the mean of n − 1 terms in [0, b] at level η",
)
typical_band_lower = formula(
    "typical_band_lower",
    1 / (1 + _others * (_mean + _radius)),
    (_n, _mean, _radius),
    "T13: the band's lower edge 1/(1 + (n−1)(I + r))",
)
typical_band_upper = formula(
    "typical_band_upper",
    1 / (1 + _others * sp.Max(_mean - _radius, 0)),
    (_n, _mean, _radius),
    "T13: the band's upper edge 1/(1 + (n−1)·max(I − r, 0))",
)
