"""The free parameters the claims share, with the assumptions sympy may rely on.

All symbols are merely real (``real=True`` and nothing more; the kernel refuses any
other), so that sympy never silently decides a sign: what a proof may use (``θ > 0``,
``n >= 1``, ...) is stated explicitly in each claim's assumption list, which is what the
checkers see.

These are *free* symbols: each claim holds for all of their values that satisfy its
assumptions, so sharing them between claims shares no meaning.  What a claim defines
(a sum such as ``S``, an entropy ``H``) is declared in that claim's own definitions
(:mod:`softmax_dispersion.theory.definitions`), and a summation index such as
:data:`e_j` is bound inside each family that uses it.
"""

from __future__ import annotations

import sympy as sp

n = sp.Symbol("n", real=True)
"""Number of logits (treated as a real ``n >= 1``: a proof for all reals covers integers)."""
theta = sp.Symbol("theta", real=True)
"""Temperature θ > 0."""
beta = sp.Symbol("beta", real=True)
"""Inverse temperature β = 1/θ."""
delta = sp.Symbol("delta", real=True)
"""Logit spread δ = M − m ≥ 0."""
m = sp.Symbol("m", real=True)
"""Lower bound on the logits."""
M = sp.Symbol("M", real=True)
"""Upper bound on the logits."""
eps = sp.Symbol("epsilon", real=True)
"""A tolerance ε ∈ (0, 1)."""
s = sp.Symbol("s", real=True)
"""Length-scaling coefficient s > 0."""
e_k = sp.Symbol("e_k", real=True)
"""The logit whose coefficient is bounded."""
e_j = sp.Symbol("e_j", real=True)
"""A generic logit: the index symbol of the families of logits (bound in each sum)."""
H = sp.Symbol("H", real=True)
"""An entropy in nats (T11's polynomial variable; T6 and T7 define theirs)."""

c = sp.exp(delta / theta)
"""The dispersion constant c = exp(δ/θ) ≥ 1."""
