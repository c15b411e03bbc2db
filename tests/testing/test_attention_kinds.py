"""The attention and VJP kinds through the registry: built-ins, named behaviours, usage
errors, the CLI, the fixture and the hypothesis strategies, and T14's allowance."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings

from softmax_dispersion.testing import (
    check_attention,
    check_softmax,
    check_softmax_vjp,
    reference_attention,
    reference_softmax_vjp,
)
from softmax_dispersion.testing.attention_reference import attention_problem, reference_of
from softmax_dispersion.testing.attention_targets import numpy_attention, numpy_softmax_vjp
from softmax_dispersion.testing.attention_tolerance import attention_allowance
from softmax_dispersion.testing.strategies import attention_inputs, vjp_inputs
from softmax_dispersion.testing.vjp_tolerance import vjp_allowance
from tests.testing.attention_zoo import naive_float32

pytest_plugins = ["pytester"]


def test_the_numpy_built_ins_pass_their_kinds() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = check_attention(numpy_attention, dtypes=["float32"], suites=["random", "masks"])
    assert report.passed, report.text()
    assert report.kind == "attention" and report.tolerance.startswith("T14")
    assert report.policies["fully masked row"] == "NaN"
    assert report.policies["finfo.min row"] == "rounded scores"
    vjp = check_softmax_vjp(numpy_softmax_vjp, dtypes=["float16", "float64"])
    assert vjp.passed, vjp.text()
    assert vjp.tolerance.startswith("T15")


def _zero_masked(q, k, v, attn_mask=None, is_causal=False, scale=None):  # type: ignore[no-untyped-def]
    return np.nan_to_num(naive_float32(q, k, v, attn_mask, is_causal, scale))


def _half_on_masked(q, k, v, attn_mask=None, is_causal=False, scale=None):  # type: ignore[no-untyped-def]
    out = naive_float32(q, k, v, attn_mask, is_causal, scale)
    return np.where(np.isnan(out), 0.5, out).astype(out.dtype)


def test_fully_masked_rows_are_named_and_a_wrong_answer_there_fails() -> None:
    report = check_attention(_zero_masked, dtypes=["float32"], suites=["random"])
    assert report.passed and report.policies["fully masked row"] == "zeros"
    required = check_attention(
        _zero_masked, dtypes=["float32"], suites=["random"], policies={"fully masked row": "NaN"}
    )
    assert [r.name for r in required.failures] == ["policy"]
    wrong = check_attention(_half_on_masked, dtypes=["float32"], suites=["random"])
    policy = [r for r in wrong.failures if r.name == "policy"]
    assert policy and "fully masked row" in policy[0].message


def test_a_finite_mask_row_takes_the_exact_or_the_rounded_answer_never_anything() -> None:
    # float16 computed in float32 keeps the exact answer; float32 rounds every score alike
    report = check_attention(naive_float32, dtypes=["float16", "float32"], suites=["masks"])
    assert report.passed, report.text()
    assert report.policies["finfo.min row"] == "float16: exact; float32: rounded scores"

    def ones(q, k, v, attn_mask=None, is_causal=False, scale=None):  # type: ignore[no-untyped-def]
        out = naive_float32(q, k, v, attn_mask, is_causal, scale)
        if attn_mask is not None and attn_mask.dtype != bool and (attn_mask < -1e30).all(-1).any():
            out = np.ones_like(out)
        return out

    wrong = check_attention(ones, dtypes=["float32"], suites=["random"])
    assert any(r.name == "policy" for r in wrong.failures)


def test_usage_errors_name_the_argument() -> None:
    with pytest.raises(ValueError, match="suites is empty"):
        check_attention(numpy_attention, suites=[])
    with pytest.raises(ValueError, match="dtypes is empty"):
        check_softmax_vjp(numpy_softmax_vjp, dtypes=[])
    with pytest.raises(ValueError, match="unknown suite"):
        check_softmax(numpy_attention, kind="attention", suites=["families"])
    with pytest.raises(ValueError, match="unknown policy"):
        check_attention(numpy_attention, policies={"all -inf row": "NaN"})


def test_the_cli_checks_the_built_in_attention(capsys: pytest.CaptureFixture[str]) -> None:
    from softmax_dispersion.cli import main

    assert main(["check", "numpy", "--kind", "softmax_vjp", "--dtypes", "float32"]) == 0
    out = capsys.readouterr().out
    assert "softmax_vjp [numpy]" in out and "PASSED" in out


def test_the_cli_fails_a_wrong_vjp(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from softmax_dispersion.cli import main

    code = main(
        [
            "check",
            "tests.testing.attention_zoo:vjp_without_inner_product",
            "--kind",
            "softmax_vjp",
            "--dtypes",
            "float32",
        ]
    )
    assert code == 1
    out = capsys.readouterr().out
    assert "⟨g, p⟩" in out and "FAILED" in out


def test_the_fixture_checks_attention_with_the_marker(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import numpy as np
        import pytest
        from softmax_dispersion.testing.attention_targets import numpy_attention

        @pytest.mark.softmax_oracle(kind="attention", dtypes=["float32"], suites=["random"])
        def test_attention(softmax_oracle):
            softmax_oracle.check(numpy_attention)
            q = np.ones((1, 2, 4), dtype=np.float32)
            ref = softmax_oracle.attention(q, q, q)
            assert ref.values.shape == (1, 2, 4)

        @pytest.mark.softmax_oracle(kind="log_softmax_vjp")
        def test_vjp(softmax_oracle):
            ref = softmax_oracle.vjp(np.zeros(2), np.array([1.0, 0.0]))
            assert ref.log and ref.values.tolist() == [0.5, -0.5]
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


@settings(max_examples=25)
@given(attention_inputs(dtype="float32"))
def test_generated_attention_inputs_feed_the_reference_and_t14(case: dict) -> None:
    # the textbook (float32, max-shifted) stays within T14's allowance on every input
    problem = attention_problem(**case)
    ref = reference_of(problem)
    allowed = attention_allowance(ref, problem)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = naive_float32(**case)
    keeps = ~ref.fully_masked
    error = np.abs(out.astype(np.float64) - ref.values)[keeps]
    assert np.all(error <= allowed[keeps] + np.nan_to_num(ref.radius[keeps]))
    assert np.all(np.isfinite(allowed))


@settings(max_examples=25)
@given(vjp_inputs(dtype="float16"))
def test_generated_vjp_inputs_feed_the_reference_and_t15(pair: tuple) -> None:
    x, g = pair
    ref = reference_softmax_vjp(x, g)
    allowed = vjp_allowance(ref, x, g)
    out = numpy_softmax_vjp(x, g).astype(np.float64)
    assert np.all(np.abs(out - ref.values) <= allowed + np.nan_to_num(ref.radius))


def test_the_allowance_grows_with_the_keys_and_the_scores() -> None:
    rng = np.random.default_rng(3)

    def relative(keys: int, size: float) -> float:
        q = (rng.standard_normal((1, 16)) * size).astype(np.float32)
        k = (rng.standard_normal((keys, 16)) * size).astype(np.float32)
        v = np.ones((keys, 1), dtype=np.float32)
        problem = attention_problem(q, k, v)
        return float(attention_allowance(reference_of(problem), problem)[0, 0])

    assert relative(4096, 0.5) > 10 * relative(8, 0.5)
    assert relative(64, 8.0) > 10 * relative(64, 0.5)
    assert relative(64, 0.5) < 1e-4  # not vacuous: about 100 float32 units here


def test_the_reference_of_a_row_of_finfo_min_is_the_unmasked_attention() -> None:
    rng = np.random.default_rng(4)
    q, k, v = (rng.standard_normal((2, 3, 8)).astype(np.float32) for _ in range(3))
    mask = np.full((3, 3), np.finfo(np.float32).min, dtype=np.float32)
    exact = reference_attention(q, k, v, attn_mask=mask).values
    assert np.allclose(exact, reference_attention(q, k, v).values, rtol=1e-6, atol=1e-7)


def test_scale_zero_is_honoured_as_zero_every_row_the_mean_of_its_values() -> None:
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal((1, 2, 4, 8)) for _ in range(3))
    ref = reference_attention(q, k, v, scale=0.0)
    np.testing.assert_allclose(ref.values, np.broadcast_to(v.mean(axis=-2, keepdims=True), q.shape))
    torch = pytest.importorskip("torch")
    sdpa = torch.nn.functional.scaled_dot_product_attention
    got = sdpa(*(torch.from_numpy(a) for a in (q, k, v)), scale=0.0).numpy()
    np.testing.assert_allclose(ref.values, got, rtol=1e-14, atol=1e-15)


def test_torch_causal_is_top_left_aligned_both_ways_as_the_reference() -> None:
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    for length, keys in ((9, 4), (4, 9)):
        q = rng.standard_normal((1, 1, length, 8))
        k, v = (rng.standard_normal((1, 1, keys, 8)) for _ in range(2))
        tensors = [torch.from_numpy(a) for a in (q, k, v)]
        got = torch.nn.functional.scaled_dot_product_attention(*tensors, is_causal=True)
        top_left = np.tril(np.ones((length, keys), dtype=bool))
        ref = reference_attention(q, k, v, top_left)
        np.testing.assert_allclose(got.numpy(), ref.values, rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(reference_attention(q, k, v, is_causal=True).values, ref.values)


def test_a_wrong_finite_answer_on_a_finfo_min_row_is_named_and_cited_among_the_listed() -> None:
    def off_on_constant_rows(
        q: object, k: object, v: object, attn_mask: object = None, **kw: object
    ) -> object:
        out = np.array(naive_float32(q, k, v, attn_mask, **kw))  # type: ignore[arg-type]
        if attn_mask is not None and np.asarray(attn_mask).dtype != bool:
            m = np.asarray(attn_mask, dtype=np.float64)
            constant = (m.max(-1) == m.min(-1)) & (m.max(-1) < -1e4)
            out[..., constant, :] += 0.3
        return out

    report = check_attention(off_on_constant_rows, dtypes=["float32"], suites=["random"])
    assert report.policies["finfo.min row"] == "wrong values"
    policy = next(r for r in report.failures if r.name == "policy")
    assert "finfo.min row: output is none of exact/rounded scores/raises: wrong values" in (
        policy.message
    )
    assert policy.hint.startswith("a finite input") and "non-finite" not in policy.hint
    assert policy.worst is not None and policy.worst.column < 8  # all 8 values are listed
    assert np.isfinite(policy.worst.expected) and np.isfinite(policy.worst.allowance)
