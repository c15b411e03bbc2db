"""T9: the layer rules, proven; the radius recursion, checked against random networks."""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from softmax_dispersion.theory import composition
from softmax_dispersion.theory.composition import (
    CLAIMS,
    T9,
    Attention,
    Bounded,
    Layer,
    LayerBound,
    LayerNorm,
    Linear,
    Lipschitz,
    Residual,
    attention_radius,
    attention_spread,
    layer_bounds,
    layer_norm_radius,
    linear_radius,
    lipschitz_radius,
    residual_radius,
)
from softmax_dispersion.theory.dispersion import dispersion_lower, dispersion_upper
from softmax_dispersion.theory.formulas import FORMULAS
from softmax_dispersion.theory.kernel import (
    Claim,
    ConvexCombination,
    Implied,
    Induction,
    Step,
)
from softmax_dispersion.theory.symbols import delta, eps, theta
from softmax_dispersion.theory.weight_norms import T8, logit_spread_bound, x_radius, y_norm

# --------------------------------------------------------------------------------------
# The claim
# --------------------------------------------------------------------------------------


def test_t9_proof_concludes_its_statement() -> None:
    # that it verifies is test_claims' (one test per claim)
    assert T9.proof()[-1].conclusion == T9.statement
    assert CLAIMS == (T9,)


def test_t9_cites_t8_under_its_hypotheses() -> None:
    # Citing T8 gives its statement where its assumptions hold: T9 assumes all of them.
    assert T9.cites == (T8,)
    assert set(T8.assumptions) <= set(T9.assumptions)


def test_t9_uses_the_convex_combination_and_induction_rules() -> None:
    kinds = {type(step) for step in T9.proof()}
    assert {ConvexCombination, Induction, Implied} <= kinds
    assert T9.naturals == (composition.layer,)


def test_t9_states_every_exported_rule() -> None:
    parts = set(T9.statement.args) - {composition._bounded_inputs, composition._bounded_spread}
    for rule in (
        linear_radius,
        lipschitz_radius,
        residual_radius,
        layer_norm_radius,
        attention_spread,
        attention_radius,
    ):
        assert FORMULAS[rule.name] is rule
        assert any(part.rhs == rule.expr for part in parts), rule.name
    assert attention_spread.expr == logit_spread_bound.expr.xreplace(
        {y_norm: composition.r, x_radius: composition.r}
    )


def test_the_layers_compute_the_proven_rules() -> None:
    r = composition.r
    proven = {part.rhs for part in T9.statement.args}
    assert Linear(composition.sigma, composition.bias_norm).radius(r) in proven
    assert Lipschitz(composition.lipschitz, composition.offset).radius(r) in proven
    assert LayerNorm(composition.dim, composition.gain, composition.beta_norm).radius(r) in proven
    head = Attention(
        T8_SYMBOLS["sigma_q"], T8_SYMBOLS["sigma_k"], composition.sigma_v, T8_SYMBOLS["scale"]
    )
    assert head.spread(r) in proven
    assert head.radius(r) in proven
    # a residual block adds r to its branch's radius
    assert Residual(Bounded(composition.inner_radius)).radius(r) in proven


T8_SYMBOLS = {str(arg): arg for arg in logit_spread_bound.args}


def _sibling(statement: sp.Basic) -> Claim:
    """T9's proof with its last step aimed at another statement."""

    def proof() -> list[Step]:
        return [*T9.proof()[:-1], Implied(statement, "the false sibling's conclusion")]

    return dataclasses.replace(T9, id="T9-false", statement=statement, proof=proof)


r, sigma, bias_norm = composition.r, composition.sigma, composition.bias_norm


@pytest.mark.parametrize(
    "wrong",
    [
        sp.Le(composition.linear_out, sigma * r),  # dropping the bias
        sp.Le(composition.lipschitz_out, composition.lipschitz * r),  # dropping ‖f(0)‖
        sp.Le(composition.residual_out, composition.inner_radius),  # dropping the skip path
        sp.Le(composition.ln_out, composition.gain + composition.beta_norm),  # no sqrt(d)
        sp.Le(delta, attention_spread.expr / 2),  # the spread without the factor 2
        sp.Le(delta, 2 * T8_SYMBOLS["sigma_q"] * T8_SYMBOLS["sigma_k"] * r / T8_SYMBOLS["scale"]),
        sp.Le(composition.attention_out, composition.sigma_v),  # forgetting r
    ],
    ids=[
        "linear-no-bias",
        "lipschitz-no-offset",
        "residual-no-skip",
        "layer-norm-no-sqrt",
        "spread-no-factor-2",
        "spread-r-not-squared",
        "attention-no-radius",
    ],
)
def test_false_rules_are_rejected(wrong: sp.Basic) -> None:
    result = _sibling(wrong).check()  # checks the cited T8 again (a fraction of a second)
    assert result.verified is False
    assert not result.steps[-1].verified
    assert all(step.verified for step in result.steps[:-1])


def test_convex_combination_needs_weights_adding_to_one() -> None:
    facts = [a for a in T9.assumptions if a != sp.Eq(composition.weights_total, 1)]
    step = ConvexCombination(
        composition.value_norms,
        composition.weight_sum,
        composition.value_norm,
        None,
        composition.sigma_v * r,
        "the weights' total is not known",
    )
    assert step.check(facts).verified is False
    assert step.check([*facts, sp.Eq(composition.weights_total, 2)]).verified is False
    assert step.check(list(T9.assumptions)).verified is True
    # and a bound that varies with the term is no bound on the combination
    step = ConvexCombination(
        composition.value_norms,
        composition.weight_sum,
        composition.value_norm,
        None,
        composition.value_norm,
        "a term-dependent bound",
    )
    assert step.check(list(T9.assumptions)).verified is False


def test_the_stack_induction_needs_its_base_and_its_step() -> None:
    layer, N, R = composition.layer, composition.stack_norm, composition.stack_radius
    claim_of = lambda drop: dataclasses.replace(  # noqa: E731
        T9, id="T9-less", assumptions=[a for a in T9.assumptions if a != drop]
    )
    no_base = claim_of(sp.Le(N(0), R(0))).check()
    assert not no_base.verified and "the base case" in no_base.problem + "".join(
        s.detail for s in no_base.steps
    )
    slope = composition.slope
    no_sign = claim_of(sp.Ge(slope(layer), 0)).check()
    failed = [s for s in no_sign.steps if not s.verified]
    assert failed and "the induction step" in failed[0].detail


def test_sqrt_is_read_exactly_with_a_non_negative_radicand() -> None:
    a, b = sp.symbols("a b", real=True)
    assert Implied(sp.Le(a, sp.sqrt(b)), "a² <= b").check([sp.Le(a**2, b), sp.Gt(b, 0)]).verified
    assert not Implied(sp.Le(a, sp.sqrt(b)), "b's sign unknown").check([sp.Le(a**2, b)]).verified
    assert (
        not Implied(sp.Le(a, sp.sqrt(b)), "a² <= 2b")
        .check([sp.Le(a**2, 2 * b), sp.Gt(b, 0)])
        .verified
    )
    assert Implied(sp.Le(2, sp.sqrt(4)), "numbers").check([]).verified
    assert not Implied(sp.Le(3, sp.sqrt(4)), "numbers").check([]).verified


# --------------------------------------------------------------------------------------
# The public API
# --------------------------------------------------------------------------------------


def test_layer_bounds_exact_numbers() -> None:
    stack: list[Layer] = [
        Linear(2, bias=1),
        Residual(Lipschitz(1)),
        LayerNorm(16, gain=2, bias=1),
        Attention(1, 3, 2, scale=4),
        Bounded(5),
    ]
    bounds = layer_bounds(stack, input_radius=1, epsilon=sp.Rational(1, 10))
    assert [b.radius for b in bounds] == [3, 6, 9, 18, 5]
    assert [b.input_radius for b in bounds] == [1, 3, 6, 9, 18]
    head = bounds[3]
    assert head.spread == sp.Rational(2 * 3 * 81, 4)
    assert head.dispersion_size == 1 + 9 * sp.exp(sp.Rational(243, 2))
    assert [b.spread for b in bounds if b is not head] == [None] * 4
    assert bounds[1].inner[0].radius == 3


def test_layer_bounds_symbolic() -> None:
    r0, s1, s2, sq, sk, sv, s = sp.symbols("r0 s1 s2 sq sk sv s", real=True)
    bounds = layer_bounds([Linear(s1), Residual(Linear(s2)), Attention(sq, sk, sv, s)], r0)
    assert bounds[1].radius == s1 * r0 + s2 * s1 * r0
    head = bounds[2]
    assert sp.expand(head.spread - 2 * sq * sk * (s1 * r0 * (1 + s2)) ** 2 / s) == 0
    assert head.dispersion_size == 1 + sp.exp(head.spread) * (1 - eps) / eps
    assert head.radius == sv * bounds[1].radius
    # temperature
    (cold,) = layer_bounds([Attention(1, 1, 1)], 1, theta=theta, epsilon=eps)
    assert cold.dispersion_size == 1 + sp.exp(2 / theta) * (1 - eps) / eps


def test_floats_are_kept_exactly() -> None:
    assert Linear(0.1).sigma == sp.Rational(0.1)
    assert Linear(sp.Float(0.1)).sigma == sp.Rational(0.1)
    assert Linear(np.float64(0.25), bias=np.int64(3)).radius(4) == 4
    (bound,) = layer_bounds([Linear(0.5)], 0.5)
    assert bound.radius == sp.Rational(1, 4)


def test_nested_residual_blocks_are_walked() -> None:
    block = Residual(LayerNorm(4), Attention(1, 1, 1))
    (bound,) = layer_bounds([block], 10)
    kinds = [type(b.layer).__name__ for b in bound.walk()]
    assert kinds == ["Residual", "LayerNorm", "Attention"]
    head = bound.inner[1]
    assert head.input_radius == 2  # LayerNorm(4): sqrt(4)
    assert head.spread == 8
    assert bound.radius == 12
    assert Residual([LayerNorm(4), Attention(1, 1, 1)]) == block


def test_dispersion_size_is_t4s_formula() -> None:
    from softmax_dispersion.theory.dispersion_size import dispersion_size

    (head,) = [
        b
        for b in composition.layer_bounds([composition.Attention(1, 1, 1)], 1)
        if b.spread is not None
    ]
    assert head.dispersion_size == dispersion_size.expr.xreplace({delta: head.spread, theta: 1})


def test_layers_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Linear(1).sigma = 2  # type: ignore[misc]


@pytest.mark.parametrize(
    ("build", "error", "name"),
    [
        (lambda: layer_bounds([], 1), ValueError, "layers"),
        (lambda: layer_bounds([Linear(1)], -1), ValueError, "input_radius"),
        (lambda: layer_bounds([Linear(1)], 1, epsilon=1), ValueError, "epsilon"),
        (lambda: layer_bounds([Linear(1)], 1, epsilon=0), ValueError, "epsilon"),
        (lambda: layer_bounds([Linear(1)], 1, theta=0), ValueError, "theta"),
        (lambda: layer_bounds([Linear(1), "relu"], 1), TypeError, "layers[1]"),  # type: ignore[list-item]
        (lambda: layer_bounds(Linear(1), 1), TypeError, "layers"),  # type: ignore[arg-type]
        (lambda: layer_bounds([Linear(1)], float("nan")), ValueError, "input_radius"),
        (lambda: layer_bounds([Linear(1)], "1"), TypeError, "input_radius"),
        (lambda: layer_bounds([Linear(1)], sp.I), ValueError, "input_radius"),
        (lambda: Linear(-1), ValueError, "sigma"),
        (lambda: Linear(1, bias=-0.5), ValueError, "bias"),
        (lambda: Lipschitz(math.inf), ValueError, "lipschitz"),
        (lambda: Lipschitz(1, offset=-sp.Symbol("p", positive=True)), ValueError, "offset"),
        (lambda: LayerNorm(0), ValueError, "dim"),
        (lambda: LayerNorm(2.5), ValueError, "dim"),
        (lambda: LayerNorm(4, gain=-1), ValueError, "gain"),
        (lambda: Attention(1, 1, 1, scale=0), ValueError, "scale"),
        (lambda: Attention(1, -2, 1), ValueError, "sigma_k"),
        (lambda: Bounded(-1), ValueError, "bound"),
        (lambda: Residual(), ValueError, "inner"),
        (lambda: Residual(Linear(1), 3), TypeError, "inner[1]"),  # type: ignore[arg-type]
        (lambda: Linear(1).radius(-2), ValueError, "input_radius"),
    ],
)
def test_bad_input_names_the_argument(
    build: Callable[[], object], error: type[Exception], name: str
) -> None:
    with pytest.raises(error, match=rf"^{re.escape(name)} "):
        build()


# --------------------------------------------------------------------------------------
# Random numpy networks stay within the bounds
# --------------------------------------------------------------------------------------

TOLERANCE = 1e-9


@dataclass
class Network:
    """A numpy layer and its description."""

    layer: Layer
    apply: Callable[[np.ndarray], np.ndarray] | None = None
    weights: tuple[np.ndarray, ...] = ()
    inner: Sequence[Network] = ()


def _linear(rng: np.random.Generator, d_in: int, d_out: int, size: float) -> Network:
    w = rng.normal(size=(d_out, d_in)) * size / math.sqrt(d_in)
    b = rng.normal(size=d_out) * size
    return Network(Linear(np.linalg.norm(w, 2), np.linalg.norm(b)), lambda x: x @ w.T + b)


def _layer_norm(rng: np.random.Generator, d: int) -> Network:
    gamma, beta = rng.normal(size=d), rng.normal(size=d) * 0.5

    def apply(x: np.ndarray) -> np.ndarray:
        centred = x - x.mean(-1, keepdims=True)
        normalised: np.ndarray = centred / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
        out: np.ndarray = gamma * normalised + beta
        return out

    return Network(LayerNorm(d, np.abs(gamma).max(), np.linalg.norm(beta)), apply)


def _attention(rng: np.random.Generator, d: int, d_k: int, size: float) -> Network:
    q, k = (rng.normal(size=(d_k, d)) * size / math.sqrt(d) for _ in range(2))
    v = rng.normal(size=(d, d)) * size / math.sqrt(d)
    sigma_q, sigma_k, sigma_v = (np.linalg.norm(m, 2) for m in (q, k, v))
    head = Attention(sigma_q, sigma_k, sigma_v, scale=math.sqrt(d_k))
    return Network(head, weights=(q, k, v))


def _network(rng: np.random.Generator, d: int, h: int, size: float) -> list[Network]:
    relu = Network(Lipschitz(1), lambda x: np.maximum(x, 0))
    tanh = Network(Lipschitz(1), np.tanh)
    softplus = Network(Lipschitz(1, sp.sqrt(h) * sp.log(2)), lambda x: np.logaddexp(0, x))
    bounded_tanh = Network(Bounded(sp.sqrt(h)), np.tanh)

    def residual(*inner: Network) -> Network:
        return Network(Residual(*(n.layer for n in inner)), inner=inner)

    return [
        _linear(rng, d, h, size),
        relu,
        residual(_linear(rng, h, h, size), tanh),
        _attention(rng, h, 4, size),  # straight on the residual stream
        _layer_norm(rng, h),
        residual(_layer_norm(rng, h), _attention(rng, h, 3, size)),  # a pre-LN block
        softplus,
        residual(_linear(rng, h, h, size), relu, _linear(rng, h, h, size)),
        bounded_tanh,
        _attention(rng, h, 2, size),
    ]


def _max_norm(x: np.ndarray) -> float:
    return float(np.linalg.norm(x, axis=-1).max())


def _within(measured: float, bound: sp.Expr) -> None:
    limit = float(bound)
    assert measured <= limit * (1 + TOLERANCE) + TOLERANCE, (measured, limit)


def _run(layers: Sequence[Network], bounds: Sequence[LayerBound], x: np.ndarray) -> np.ndarray:
    """Apply the network, checking every measured radius and spread against its bound."""
    for net, bound in zip(layers, bounds, strict=True):
        _within(_max_norm(x), bound.input_radius)
        if isinstance(net.layer, Residual):
            out = x + _run(net.inner, bound.inner, x)
        elif isinstance(net.layer, Attention):
            out = _attend(net, bound, x)
        else:
            assert net.apply is not None
            out = net.apply(x)
        _within(_max_norm(out), bound.radius)
        x = out
    return x


def _attend(net: Network, bound: LayerBound, x: np.ndarray) -> np.ndarray:
    q, k, v = net.weights
    assert isinstance(net.layer, Attention) and bound.spread is not None
    logits = (x @ q.T) @ (x @ k.T).T / float(net.layer.scale)
    spreads = np.ptp(logits, axis=1)
    _within(float(spreads.max()), bound.spread)
    weights = np.exp(logits - logits.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    # T1 in this head, with c = exp(δ_ℓ) from the proven spread bound (θ = 1)
    n = x.shape[0]
    spread = float(bound.spread)
    upper = float(dispersion_upper.mpmath(n, spread, 1))
    lower = float(dispersion_lower.mpmath(n, spread, 1))
    assert weights.max() <= upper * (1 + TOLERANCE)
    assert weights.min() >= lower * (1 - TOLERANCE)
    out: np.ndarray = weights @ (x @ v.T)
    return out


def _inputs(rng: np.random.Generator, n: int, d: int, radius: float) -> np.ndarray:
    x = rng.normal(size=(n, d))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    x *= radius * rng.uniform(0, 1, size=(n, 1)) ** (1 / d)
    x[0] *= radius / np.linalg.norm(x[0])  # one token on the sphere
    return x


@settings(max_examples=25)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 12),
    d=st.integers(1, 6),
    h=st.integers(2, 8),
    size=st.floats(0.05, 2.0),
    radius=st.floats(0.01, 5.0),
)
def test_random_networks_stay_within_their_bounds(
    seed: int, n: int, d: int, h: int, size: float, radius: float
) -> None:
    rng = np.random.default_rng(seed)
    network = _network(rng, d, h, size)
    bounds = layer_bounds([net.layer for net in network], radius)
    _run(network, bounds, _inputs(rng, n, d, radius))


def test_symbolic_bounds_evaluate_to_the_exact_ones() -> None:
    rng = np.random.default_rng(7)
    network = _network(rng, 3, 5, 0.7)
    r0 = sp.Symbol("r0", real=True)
    symbolic = layer_bounds([net.layer for net in network], r0)
    exact = layer_bounds([net.layer for net in network], 2)
    for left, right in zip(symbolic, exact, strict=True):
        assert sp.expand(left.radius.subs(r0, 2) - right.radius) == 0
    x = _inputs(rng, 9, 3, 2.0)
    _run(network, exact, x)
