"""``softmax-dispersion certify``: an adversarial family's certified coefficients against T1, T2."""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from softmax_dispersion.cli._usage import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    MAX_SIZE_DIGITS,
    UsageError,
    read_sizes,
    usage_error,
)
from softmax_dispersion.numerics._backends import DEFAULT_MAX_PRECISION
from softmax_dispersion.numerics.families import FAMILIES, Family
from softmax_dispersion.numerics.rounding import float_format, round_enclosure

# The registry and the rounding are light; the engines and the checks (mpmath, numpy,
# sympy) load when certify runs, so that building the parser for --help costs nothing.
if TYPE_CHECKING:
    from softmax_dispersion.numerics.checks import (
        DispersionCheck,
        DispersionSizeCheck,
        LengthScalingReport,
    )
    from softmax_dispersion.numerics.evaluate import Enclosure

__all__ = ["CertifyReport", "add_parser", "certifiable_families", "certify", "run"]


@dataclass
class SizeResult:
    """One size of the sweep."""

    check: DispersionCheck
    rounded: dict[str, tuple[float, bool]]

    @property
    def verified(self) -> bool:
        return self.check.verdict in ("holds", "attained")

    def to_dict(self) -> dict[str, Any]:
        from softmax_dispersion.numerics.checks import enclosure_dict

        check = self.check
        t1_upper, t1_lower = check.bound("T1 upper"), check.bound("T1 lower")
        p_max, p_min = enclosure_dict(check.p_max), enclosure_dict(check.p_min)
        return {
            "n": check.n,
            "p_max_lower": p_max["lower"],
            "p_max_upper": p_max["upper"],
            "p_min_lower": p_min["lower"],
            "p_min_upper": p_min["upper"],
            "bound_upper": enclosure_dict(t1_upper.bound)["upper"],
            "bound_lower": enclosure_dict(t1_lower.bound)["lower"],
            "verified": self.verified,
            "verdict": check.verdict,
            "rounded": {
                name: {"value": value, "certified": certified}
                for name, (value, certified) in self.rounded.items()
            },
            "details": check.to_dict(),
        }


@dataclass
class CertifyReport:
    """Everything ``certify`` computed."""

    family: str
    theta: Fraction
    format: str
    sizes: list[SizeResult]
    dispersion_size: DispersionSizeCheck | None = None
    length_scaling: LengthScalingReport | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def violated(self) -> bool:
        return any(size.check.violated for size in self.sizes)

    @property
    def undecided(self) -> bool:
        return any(size.check.verdict == "undecided" for size in self.sizes)

    @property
    def verified(self) -> bool:
        extras = [
            self.dispersion_size is None or self.dispersion_size.verified,
            self.length_scaling is None or self.length_scaling.agrees,
        ]
        return all(size.verified for size in self.sizes) and all(extras)

    def to_dict(self) -> dict[str, Any]:
        return {
            "family": self.family,
            "theta": str(self.theta),
            "format": self.format,
            "verified": self.verified,
            "sizes": [size.to_dict() for size in self.sizes],
            "dispersion_size": self.dispersion_size.to_dict() if self.dispersion_size else None,
            "length_scaling": self.length_scaling.to_dict() if self.length_scaling else None,
            "notes": self.notes,
        }


def _rounded(enclosure: Enclosure, fmt_name: str) -> tuple[float, bool]:
    return round_enclosure(enclosure.lower, enclosure.upper, float_format(fmt_name))


def certify(
    family: str,
    sizes: list[int],
    *,
    delta: object = None,
    theta: object = 1,
    epsilon: object = None,
    s: object = None,
    format: str = "float64",
    engine: str | None = None,
    parameters: dict[str, object] | None = None,
    max_precision: int = DEFAULT_MAX_PRECISION,
) -> CertifyReport:
    """Certify a family's largest and smallest coefficients at each size.

    ``parameters`` are the family's own (``k_high`` of ``two_level``, ``low``, ...);
    ``delta`` is the spread of the families that take one.

    Raises
    ------
    ValueError
        For an unknown family, a parameter the family does not take, or bad values.
    """
    from softmax_dispersion.numerics.checks import (
        check_dispersion,
        check_dispersion_size,
        length_scaling_regimes,
    )
    from softmax_dispersion.theory.formulas import exact_value

    certifiable = ", ".join(certifiable_families())
    if family not in FAMILIES:
        raise ValueError(f"unknown family {family!r}; certifiable families: {certifiable}")
    chosen = FAMILIES[family]
    if not chosen.finite:
        raise ValueError(
            f"family {family!r} has non-finite logits, outside T1's assumptions; "
            f"certifiable families: {certifiable}"
        )
    float_format(format)
    exact_theta = exact_value("theta", theta)
    if delta is not None and not chosen.takes("delta"):
        raise ValueError(
            f"family {family!r} takes no delta; it takes {', '.join(chosen.parameters)}"
        )
    extra = dict(parameters or {})
    if "n" in extra or "delta" in extra:
        raise ValueError("give n with --n and delta with --delta, not as parameters")
    report = CertifyReport(family, exact_theta, format, [])
    for n in sizes:
        sequence = chosen.build(n=n, delta=delta, **extra)
        check = check_dispersion(sequence, exact_theta, engine=engine, max_precision=max_precision)
        rounded = {"p_max": _rounded(check.p_max, format), "p_min": _rounded(check.p_min, format)}
        report.sizes.append(SizeResult(check, rounded))
    spread = report.sizes[-1].check.spread if report.sizes else Fraction(0)
    if epsilon is not None:
        _check_size_digits(exact_value("epsilon", epsilon), spread / exact_theta)
        report.dispersion_size = check_dispersion_size(
            epsilon, spread, exact_theta, engine=engine, max_precision=max_precision
        )
    if s is not None:
        report.length_scaling = length_scaling_regimes(
            s, spread, sizes, engine=engine, max_precision=max_precision
        )
    return report


def _check_size_digits(epsilon: Fraction, ratio: Fraction) -> None:
    """Refuse an ``n*(ε)`` too long to print: ``log10 n* ≈ (δ/θ)/ln 10 + log10((1−ε)/ε)``.

    Estimated from bit lengths (within a digit or two), so that nothing huge is built.
    """
    odds = (1 - epsilon) / epsilon
    log10_odds = (odds.numerator.bit_length() - odds.denominator.bit_length()) * math.log10(2)
    spread = float(min(ratio, Fraction(10**7)))
    digits = spread / math.log(10) + log10_odds
    if digits > MAX_SIZE_DIGITS - 2:
        raise ValueError(
            f"epsilon = {float(epsilon):g} at δ/θ = {spread:g} makes n*(ε) "
            f"a number of about {digits:.0f} digits, more than the {MAX_SIZE_DIGITS} a size may "
            "have (lower --delta or raise --theta or --eps)"
        )


def _short(enclosure: Enclosure, digits: int = 10) -> str:
    from softmax_dispersion.numerics.checks import enclosure_dict

    ends = enclosure_dict(enclosure, digits)
    return f"[{ends['lower']}, {ends['upper']}]"


def format_report(report: CertifyReport) -> str:
    """Human-readable tables of a :class:`CertifyReport`."""
    header = (
        f"family {report.family}, θ = {report.theta}: certified enclosures (10 digits shown, "
        "outward; --json gives 40)"
    )
    lines = [header, ""]
    for side, coefficient, extra in (
        ("upper", "p_max", f"p_max in {report.format}"),
        ("lower", "p_min", f"p_min in {report.format}"),
    ):
        lines.append(
            f"{'n':>20}  {coefficient + ' enclosure':<33} {'T1 ' + side + ' bound':<33} "
            f"{'T1':<9} {'T2':<9} {extra}"
        )
        for size in report.sizes:
            check = size.check
            t1, t2 = check.bound(f"T1 {side}"), check.bound(f"T2 {side}")
            enclosure = check.p_max if side == "upper" else check.p_min
            value, certified = size.rounded[coefficient]
            lines.append(
                f"{check.n:>20}  {_short(enclosure):<33} {_short(t1.bound):<33} "
                f"{t1.verdict:<9} {t2.verdict:<9} {value!r} "
                f"({'certified' if certified else 'NOT certified'})"
            )
        lines.append("")
    lines.append(
        "attained: the coefficient meets the bound within the enclosures; holds: strictly "
        "inside; violated: certainly outside"
    )
    if report.dispersion_size is not None:
        size_check = report.dispersion_size
        lines += [
            "",
            f"T4: n*(ε = {size_check.epsilon}) = {_short(size_check.n_star)}; at n = "
            f"{size_check.size} the spike's top coefficient is {_short(size_check.at_size)} "
            f"({size_check.at_size_verdict} <= ε); at n = {size_check.size - 1} it "
            f"{'exceeds ε' if size_check.exceeds_below else 'does NOT certifiably exceed ε'}",
        ]
    if report.length_scaling is not None:
        scaling = report.length_scaling
        lines += [
            "",
            f"T10: β = s·log n with s = {scaling.s}, sδ regime {scaling.regime}, "
            f"limit {scaling.limit}",
        ]
        for row in scaling.rows:
            lines.append(
                f"{row.n:>22}  p_max {_short(row.p_max)}  formula {_short(row.formula)}  "
                f"{row.verdict}; distance to the limit {_short(row.distance_to_limit)}"
            )
    verdict = "VERIFIED" if report.verified else ("VIOLATED" if report.violated else "NOT VERIFIED")
    lines += ["", f"verdict: {verdict}"]
    return "\n".join(lines)


def certifiable_families() -> dict[str, Family]:
    """The families ``certify`` accepts: the registry's finite ones (T1's assumptions).

    The help lists exactly these, and an unknown name is refused naming exactly these.

    Examples
    --------
    >>> "spike" in certifiable_families(), "nan" in certifiable_families()
    (True, False)
    """
    return {name: family for name, family in FAMILIES.items() if family.finite}


def _family_help() -> str:
    """Every certifiable family with its parameters and sizes, from the registry."""
    lines = []
    for name, family in certifiable_families().items():
        extra = [p for p in family.parameters if p not in ("n", "delta")]
        sizes = f"n >= {family.min_n}" if family.min_n > 1 else ""
        if family.max_n is not None:
            sizes = (sizes + ", " if sizes else "") + f"n <= {family.max_n}"
        notes = ", ".join(
            filter(
                None,
                [
                    ("--delta" + ("" if "delta" in family.defaults else " (required)"))
                    if family.takes("delta")
                    else "",
                    *(f"{p}{'' if p in family.defaults else ' (required)'}" for p in extra),
                    sizes,
                ],
            )
        )
        lines.append(f"{name} ({notes})" if notes else name)
    return "; ".join(lines)


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``certify``."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "certify",
        help="certified coefficients of an adversarial family against T1 and T2",
        description=(
            "Evaluate softmax on an adversarial logit family with certified enclosures "
            "(python-flint arb balls, or mpmath intervals), at sizes up to 10**18 and "
            "far beyond, and check the largest and smallest coefficient against T1 (tight) "
            "and T2 (the paper's form). Exit 0 when every bound holds, 1 when one is "
            "violated, 2 for bad input."
        ),
        epilog=(
            "Example: softmax-dispersion certify --family spike --n 16,1024,1e18 "
            "--delta 5 --theta 1 --eps 0.01 --s 0.5; "
            "softmax-dispersion certify --family two_level --n 64 --delta 3 --param k_high=4"
        ),
    )
    parser.add_argument(
        "--family",
        required=True,
        metavar="NAME",
        help="an adversarial family, with the parameters it takes: " + _family_help(),
    )
    parser.add_argument(
        "--n",
        required=True,
        metavar="N[,N...]",
        help="sizes: integers, 1e18, 1e400, 10**18 or 2^20, comma-separated",
    )
    parser.add_argument("--delta", metavar="D", help="logit spread δ >= 0 (families that take it)")
    parser.add_argument(
        "--param",
        nargs="+",
        default=[],
        metavar="NAME=VALUE",
        help="the family's other parameters (e.g. k_high=4 for two_level, low=-3)",
    )
    parser.add_argument("--theta", default="1", metavar="T", help="temperature θ > 0 (default 1)")
    parser.add_argument(
        "--eps", metavar="E", help="also certify the dispersion size n*(ε) (T4), 0 < ε < 1"
    )
    parser.add_argument(
        "--s", metavar="S", help="also show length scaling β = s·log n on the spike (T10)"
    )
    parser.add_argument(
        "--format",
        default="float64",
        choices=["float16", "bfloat16", "float32", "float64"],
        help="float format for the certified rounding (default float64)",
    )
    parser.add_argument(
        "--engine",
        choices=["arb", "mpmath"],
        help="arb (python-flint, default when installed) or mpmath",
    )
    parser.add_argument(
        "--max-precision",
        type=int,
        default=DEFAULT_MAX_PRECISION,
        metavar="BITS",
        help=f"cap of the precision ladder in bits (default {DEFAULT_MAX_PRECISION})",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    return parser


_INTEGER = re.compile(r"^[+-]?\d+$")
_OPTIONS = {
    "epsilon": "--eps",
    "delta": "--delta",
    "theta": "--theta",
    "s": "--s",
    "n": "--n",
}


def _family_parameters(items: list[str]) -> dict[str, object]:
    """``--param NAME=VALUE``: integers as integers, anything else as the text itself."""
    values: dict[str, object] = {}
    for item in items:
        for part in filter(None, item.split(",")):
            name, sep, raw = part.partition("=")
            if not sep or not name.strip():
                raise UsageError(f"--param expects NAME=VALUE, got {part!r}")
            raw = raw.strip()
            values[name.strip()] = int(raw) if _INTEGER.match(raw) else raw
    return values


def run(args: argparse.Namespace) -> int:
    """Certify the family at each size; exit 1 on a violated bound."""
    from softmax_dispersion.numerics.evaluate import PrecisionError

    sizes = read_sizes("--n", args.n)
    if args.max_precision < 64:
        raise UsageError(f"--max-precision must be at least 64 bits, got {args.max_precision}")
    parameters = _family_parameters(args.param)
    try:
        report = certify(
            args.family,
            sizes,
            delta=args.delta,
            theta=args.theta,
            epsilon=args.eps,
            s=args.s,
            format=args.format,
            engine=args.engine,
            parameters=parameters,
            max_precision=args.max_precision,
        )
    except PrecisionError as error:
        raise UsageError(f"{error} (raise --max-precision)") from None
    except ValueError as error:
        options = {**_OPTIONS, **{name: f"--param {name}" for name in parameters}}
        raise usage_error(error, options) from None
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print(format_report(report))
    if report.violated:
        return EXIT_FAILED
    if report.undecided:
        print(
            "softmax-dispersion certify: error: the enclosures could not decide a bound at "
            f"--max-precision {args.max_precision}; raise it",
            file=sys.stderr,
        )
        return EXIT_USAGE
    return EXIT_OK if report.verified else EXIT_FAILED
