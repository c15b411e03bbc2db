"""T8: the logit spread of a dot-product head is bounded by its weight norms.

Run ``python -m softmax_dispersion.theory.weight_norms`` to check the proof.

T8 (the paper's Proposition 3.1, with a scale)
    For dot-product logits ``e_i = (Qy)ᵀ(K x_i)/s`` with a scale ``s > 0`` (say
    ``sqrt(d)``), every logit lies in ``[−B, B]`` with
    ``B = σ_max(Q) σ_max(K) ‖y‖ max_i‖x_i‖ / s``, so the spread satisfies
    ``δ = max_i e_i − min_i e_i <= 2 σ_max(Q) σ_max(K) ‖y‖ max_i‖x_i‖ / s``.
    A head stays sharp as the set grows only if ``δ`` grows like ``log n`` (T5), so
    only if its weights, its query or its keys grow with ``n``.

The kernel decides real arithmetic, not vectors: the norms are real symbols, and the
two linear-algebra facts the proof uses are stated as assumptions on them, instantiated
for the query and for two keys —

* Cauchy–Schwarz, ``|(Qy)ᵀ(Kx_i)| <= ‖Qy‖ ‖Kx_i‖`` (written as two inequalities);
* the operator norm, ``‖Qy‖ <= σ_max(Q) ‖y‖`` and ``‖Kx_i‖ <= σ_max(K) ‖x_i‖``.

The keys ``i`` and ``j`` are where the largest and the smallest logit, ``e_max`` and
``e_min``, are attained (the set is finite), so ``δ = e_max − e_min``; every fact used
about them holds for every key.
"""

from __future__ import annotations

import sympy as sp

from softmax_dispersion.theory.formulas import formula
from softmax_dispersion.theory.kernel import Claim, Implied, Step
from softmax_dispersion.theory.symbols import delta

__all__ = ["CLAIMS", "T8", "logit_spread_bound"]

sigma_q = sp.Symbol("sigma_q", real=True)
"""The largest singular value σ_max(Q) of the query matrix."""
sigma_k = sp.Symbol("sigma_k", real=True)
"""The largest singular value σ_max(K) of the key matrix."""
y_norm = sp.Symbol("y_norm", real=True)
"""The norm ‖y‖ of the query's input."""
x_radius = sp.Symbol("x_radius", real=True)
"""A radius ``R >= max_i ‖x_i‖`` of the keys' inputs."""
scale = sp.Symbol("scale", real=True)
"""The logit scale s > 0 (``sqrt(d)`` in scaled dot-product attention)."""

logit_spread_bound = formula(
    "logit_spread_bound",
    2 * sigma_q * sigma_k * y_norm * x_radius / scale,
    (sigma_q, sigma_k, y_norm, x_radius, scale),
    "T8: the spread of dot-product logits, δ <= 2 σ_max(Q) σ_max(K) ‖y‖ max‖x_i‖ / s",
)

#: The bound B on every logit's magnitude; the spread bound is 2B.
logit_bound = sigma_q * sigma_k * y_norm * x_radius / scale

e_max = sp.Symbol("e_max", real=True)
"""The largest logit (attained at key i): a free symbol of T8, not a summation index."""
e_min = sp.Symbol("e_min", real=True)
"""The smallest logit (attained at key j)."""
query_norm = sp.Symbol("norm_Qy", real=True)
"""‖Qy‖."""


def _key(name: str) -> tuple[sp.Symbol, sp.Symbol, sp.Symbol]:
    """The dot product (Qy)ᵀ(Kx), the norm ‖Kx‖ and the norm ‖x‖ for one key."""
    return (
        sp.Symbol(f"dot_{name}", real=True),
        sp.Symbol(f"norm_Kx_{name}", real=True),
        sp.Symbol(f"norm_x_{name}", real=True),
    )


dot_i, key_norm_i, x_norm_i = _key("i")
dot_j, key_norm_j, x_norm_j = _key("j")


def _key_assumptions(
    logit: sp.Symbol, dot: sp.Symbol, key_norm: sp.Symbol, x_norm: sp.Symbol
) -> list[sp.Basic]:
    return [
        sp.Eq(logit, dot / scale),  # the logit's definition
        sp.Ge(key_norm, 0),
        sp.Ge(x_norm, 0),
        sp.Le(-query_norm * key_norm, dot),  # Cauchy–Schwarz, lower side
        sp.Le(dot, query_norm * key_norm),  # Cauchy–Schwarz, upper side
        sp.Le(key_norm, sigma_k * x_norm),  # operator norm of K
        sp.Le(x_norm, x_radius),  # R bounds every key's norm
    ]


_assumptions = [
    sp.Gt(scale, 0),
    sp.Ge(sigma_q, 0),
    sp.Ge(sigma_k, 0),
    sp.Ge(y_norm, 0),
    sp.Ge(query_norm, 0),
    sp.Le(query_norm, sigma_q * y_norm),  # operator norm of Q
    *_key_assumptions(e_max, dot_i, key_norm_i, x_norm_i),
    *_key_assumptions(e_min, dot_j, key_norm_j, x_norm_j),
    sp.Eq(delta, e_max - e_min),  # i attains the largest logit, j the smallest
]
#: Every norm, dot product and logit 0 at the scale 1: T8's assumptions all hold there.
_free = sorted({symbol for a in _assumptions for symbol in a.free_symbols}, key=str)
witness = {symbol: 0 for symbol in _free} | {scale: 1}


def _logit_steps(logit: sp.Symbol, name: str, key_norm: sp.Symbol) -> list[Step]:
    return [
        Implied(
            sp.Le(key_norm, sigma_k * x_radius),
            f"‖Kx_{name}‖ <= σ_max(K)‖x_{name}‖ <= σ_max(K) R",
        ),
        Implied(
            sp.Le(query_norm * key_norm, sigma_q * y_norm * sigma_k * x_radius),
            f"‖Qy‖‖Kx_{name}‖ <= σ_max(Q)‖y‖ · σ_max(K) R (products of non-negative bounds)",
        ),
        Implied(
            sp.And(sp.Le(-logit_bound, logit), sp.Le(logit, logit_bound)),
            f"Cauchy–Schwarz and s > 0: |e_{name}| <= ‖Qy‖‖Kx_{name}‖/s <= B",
        ),
    ]


def _t8_proof() -> list[Step]:
    return [
        *_logit_steps(e_max, "i", key_norm_i),
        *_logit_steps(e_min, "j", key_norm_j),
        Implied(sp.Le(e_max - e_min, 2 * logit_bound), "any two logits differ by at most 2B"),
        Implied(T8.statement, "δ = e_max − e_min for the largest and smallest logit"),
    ]


T8 = Claim(
    id="T8",
    title="weight norms bound the logit spread: δ <= 2 σ(Q) σ(K) ‖y‖ max‖x_i‖ / s",
    statement=sp.Le(delta, logit_spread_bound.expr),
    assumptions=_assumptions,
    source=(
        "paper, Proposition 3.1 (§3), with a logit scale s; Cauchy–Schwarz and "
        "‖Ax‖ <= σ_max(A)‖x‖ are assumptions on the norms"
    ),
    proof=_t8_proof,
    formulas=("logit_spread_bound",),
    witness=witness,
)

CLAIMS = (T8,)

if __name__ == "__main__":
    from softmax_dispersion.theory._result_text import run_claims

    raise SystemExit(run_claims(CLAIMS))
