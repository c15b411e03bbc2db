"""The pretrained-heads probe: certify, measure and search every head of all-MiniLM-L6-v2.

:func:`run_probe` does, in order:

1. load the model offline (:mod:`~softmax_dispersion.empirical.pretrained.model`);
2. certify every head's spread ``δ*`` and ``n*(½)`` over every LayerNorm output
   (:mod:`~softmax_dispersion.empirical.pretrained.spread_bounds`), and measure the
   head on the witness LayerNorm outputs that nearly attain that certificate;
3. check the capture: ``softmax`` of the captured logits against the weights of a
   separate eager forward pass with ``output_attentions``;
4. measure every row of every head on real text and synthetic inputs at each size;
5. certify every head over what tokens can reach
   (:mod:`~softmax_dispersion.empirical.pretrained.token_bounds`): layer 0 by
   enumeration of every token × position × token type, later layers by boxes; the best
   triple of each layer-0 head is run through the model as a sequence of tokens;
6. search token sequences for each head's largest spread
   (:mod:`~softmax_dispersion.empirical.pretrained.search`), from its own starts and
   from the inputs measured in step 4, with the time going to the heads weakest against
   the random inputs;
7. hold every spread found to the certificates and write ``heads.json``,
   ``measurements.json``, ``report.md`` and ``figures/`` into the run folder.

The run passes when no spread found on tokens exceeds its head's certificate over tokens
(beyond the float32 allowance), the witness stays below the LayerNorm-set certificate,
and the consistency checks hold: the capture reproduces the model's weights, the model
computes the layer-0 triples as their certificate does, and no row breaks T1 or T6.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import torch

from softmax_dispersion.empirical.pretrained.capture import attention_logits, capture_logits
from softmax_dispersion.empirical.pretrained.inputs import (
    INPUT_KINDS,
    Corpus,
    random_sequences,
    read_corpus,
    repeated_sequences,
    text_windows,
)
from softmax_dispersion.empirical.pretrained.measure import RowMeasurements, measure_batch
from softmax_dispersion.empirical.pretrained.model import MODEL_NAME, LoadedModel, load_minilm
from softmax_dispersion.empirical.pretrained.search import SearchConfig, TokenSearch
from softmax_dispersion.empirical.pretrained.spread_bounds import (
    HeadCertificate,
    _upper,
    certify_head,
    witness_spread,
)
from softmax_dispersion.empirical.pretrained.token_bounds import (
    SETS,
    HeadTokenBound,
    TokenBounds,
    token_certificates,
)
from softmax_dispersion.numerics._backends import backend
from softmax_dispersion.numerics._dyadic import decimal_string
from softmax_dispersion.numerics.ball_formulas import ball_value
from softmax_dispersion.numerics.operator_norm import single_threaded_blas
from softmax_dispersion.theory.dispersion import dispersion_upper
from softmax_dispersion.theory.dispersion_size import dispersion_size
from softmax_dispersion.theory.entropy import entropy_lower_bound

__all__ = [
    "DEFAULT_SIZES",
    "FLOAT32_ALLOWANCE",
    "WITNESS_ALLOWANCE",
    "ProbeConfig",
    "ProbeError",
    "certificate_violations",
    "run_probe",
]

DEFAULT_SIZES: tuple[int, ...] = (8, 16, 32, 64, 128, 256, 512)
"""Sequence lengths measured by default (512 is the model's largest)."""

FLOAT32_ALLOWANCE = 4 * (384 + 2) * 2.0**-24
"""Relative allowance of a float32 spread over the exact-arithmetic certificate.

The certificate bounds the model in exact arithmetic; the forward pass runs in float32
(unit roundoff ``u = 2**−24``).  First order: the LayerNorm output, the query and key
maps (dot products of length ``d = 384``) and the logit's dot product each add at most
``(d + 2)u`` relative to the T8 magnitude bound, four such steps in all.
"""

WITNESS_ALLOWANCE = 1e-9
"""Relative allowance of the float64 witness evaluation (errors near ``d·2**−53``)."""


class ProbeError(ValueError):
    """Bad input to the probe (sizes, text, run folder): one line for the user."""


@dataclass(frozen=True)
class ProbeConfig:
    """What the probe runs; the defaults are the documented run."""

    sizes: tuple[int, ...] = DEFAULT_SIZES
    text_files: tuple[Path, ...] = ()
    """Text to measure; the default corpus when empty."""
    tokens_per_size: dict[str, int] = field(
        default_factory=lambda: {"text": 1024, "repeated": 512, "random": 512}
    )
    """Roughly how many tokens each input kind runs at each size."""
    search_seconds: float = 240.0
    """The search's time budget (every stage and round starts before it runs out)."""
    search_rounds: int = 40
    """Rounds of gradient-guided swaps at most."""
    token_bounds: bool = True
    """Certify every head over what tokens can reach (minutes); off: the LayerNorm-set
    certificate stands in for it."""
    token_tolerance: float = 0.1
    """Layer 0's enumeration refines until its bound is within this of the best triple."""
    seed: int = 0

    def __post_init__(self) -> None:
        if not self.sizes:
            raise ProbeError("--sizes: give at least one size")
        if list(self.sizes) != sorted(set(self.sizes)):
            raise ProbeError(f"--sizes must be strictly increasing, got {list(self.sizes)}")
        if self.sizes[0] < 3 or self.sizes[-1] > 512:
            raise ProbeError(
                f"--sizes must lie in 3..512 (the model has 512 positions), got {list(self.sizes)}"
            )
        if not self.search_seconds >= 0:
            raise ProbeError(f"--search-seconds must be >= 0, got {self.search_seconds}")
        if self.search_rounds < 0:
            raise ProbeError(f"--search-rounds must be >= 0, got {self.search_rounds}")
        if not 0 < self.token_tolerance < 1:
            raise ProbeError(f"token_tolerance must lie in (0, 1), got {self.token_tolerance}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "sizes": list(self.sizes),
            "text_files": [str(p) for p in self.text_files],
            "tokens_per_size": dict(self.tokens_per_size),
            "search_seconds": self.search_seconds,
            "search_rounds": self.search_rounds,
            "token_bounds": self.token_bounds,
            "token_tolerance": self.token_tolerance,
            "seed": self.seed,
        }


def _inputs(
    kind: str, n: int, config: ProbeConfig, loaded: LoadedModel, corpus: Corpus, rng: Any
) -> np.ndarray:
    ids = loaded.special_ids()
    budget = config.tokens_per_size[kind]
    count = max(1, budget // n)
    if kind == "text":
        return text_windows(corpus, n, count, ids["cls"], ids["sep"])
    if kind == "repeated":
        return repeated_sequences(loaded.tokenizer, n, ids["cls"], ids["sep"])[
            : max(1, min(4, count))
        ]
    return random_sequences(n, count, loaded.vocabulary(), rng, ids["cls"], ids["sep"])


def _batches(sequences: np.ndarray, tokens: int = 1024) -> Iterator[torch.Tensor]:
    step = max(1, tokens // sequences.shape[1])
    for start in range(0, len(sequences), step):
        yield torch.as_tensor(sequences[start : start + step])


def _capture_check(loaded: LoadedModel, sequence: np.ndarray) -> float:
    """Largest |softmax(captured logits) − output_attentions| over one input (a separate
    eager forward pass computes the reference)."""
    ids = torch.as_tensor(sequence[None, :])
    model = loaded.model
    previous = model.config._attn_implementation
    model.set_attn_implementation("eager")
    try:
        with torch.no_grad():
            reference = model(
                input_ids=ids, attention_mask=torch.ones_like(ids), output_attentions=True
            ).attentions
    finally:
        model.set_attn_implementation(previous)
    logits, _ = attention_logits(model, ids)
    return max(
        float((torch.softmax(logits[i], dim=-1) - reference[i]).abs().max())
        for i in range(len(reference))
    )


def certificate_violations(
    spreads: np.ndarray, certificates: Sequence[Sequence[HeadCertificate]], allowance: float
) -> np.ndarray:
    """Per head (``[layers, heads]``): whether ``spreads`` exceeds ``δ*·(1 + allowance)``.

    Examples
    --------
    >>> from fractions import Fraction
    >>> from types import SimpleNamespace
    >>> heads = [[SimpleNamespace(delta_star=Fraction(v)) for v in (10, 2)]]
    >>> certificate_violations(np.array([[9.0, 3.0]]), heads, 1e-6).tolist()
    [[False, True]]
    """
    bounds = np.array([[float(c.delta_star) for c in row] for row in certificates])
    return np.asarray(spreads > bounds * (1 + allowance))


def _quantiles(values: np.ndarray) -> dict[str, list[list[float]]]:
    """Per head (``values`` is ``[layers, heads, rows]``): the summaries the report uses."""
    q = np.quantile(values, [0.1, 0.5, 0.9], axis=-1)
    return {
        "q10": q[0].round(5).tolist(),
        "median": q[1].round(5).tolist(),
        "q90": q[2].round(5).tolist(),
        "max": values.max(axis=-1).round(5).tolist(),
        "min": values.min(axis=-1).round(5).tolist(),
    }


def _histograms(deltas: list[np.ndarray], width: float = 0.5) -> dict[str, Any]:
    """Per layer, counts of row spreads (every head and size pooled) in bins of ``width``."""
    top = max(float(d.max()) for d in deltas)
    edges = np.arange(0.0, math.ceil(top / width) * width + width, width)
    layers = deltas[0].shape[0]
    counts = [
        np.sum([np.histogram(d[layer].ravel(), bins=edges)[0] for d in deltas], axis=0).tolist()
        for layer in range(layers)
    ]
    return {"edges": edges.round(6).tolist(), "counts": counts}


def _size_summary(n: int, arrays: dict[str, np.ndarray]) -> dict[str, Any]:
    delta = arrays["delta"]
    bound = dispersion_upper.numpy(n, np.minimum(delta, 700.0), 1.0)
    floor = entropy_lower_bound.numpy(n, np.minimum(delta, 700.0), 1.0)
    return {
        "rows_per_head": int(delta.shape[-1]),
        "delta": _quantiles(delta),
        "p_max": _quantiles(arrays["p_max"]),
        "entropy": _quantiles(arrays["entropy"]),
        "t1_bound": _quantiles(bound),
        "t6_floor": _quantiles(floor),
        "t1_bound_at_max_delta": dispersion_upper.numpy(n, np.minimum(delta.max(-1), 700.0), 1.0)
        .round(9)
        .tolist(),
        "rows_t1_below_half": (bound < 0.5).mean(axis=-1).round(6).tolist(),
    }


def _bound_of(bounds: TokenBounds | None, layer: int, head: int) -> HeadTokenBound | None:
    if bounds is None:
        return None
    return next((b for b in bounds.heads if (b.layer, b.head) == (layer, head)), None)


def _decimal_up(value: float, digits: int = 8) -> str:
    """A float (already an upper bound) as a decimal string rounded up."""
    return decimal_string(_dyadic(value), digits, "up")


def _dyadic(value: float) -> tuple[int, int]:
    mantissa, exponent = Fraction(value).as_integer_ratio()
    return (mantissa, -(exponent.bit_length() - 1))


def _dispersion_half(delta: float) -> tuple[str, float]:
    """``n*(½) = 1 + e^δ`` (T4 at ε = ½, θ = 1) for an upper bound ``δ``, rounded up: as a
    6-digit decimal string and ``log10``."""
    import flint

    bk = backend("arb")
    with flint.ctx.workprec(128):
        n_star = ball_value(
            dispersion_size, bk, epsilon=Fraction(1, 2), delta=Fraction(delta), theta=1
        )
        log10 = _upper(bk, n_star.log() / flint.arb(10).log())
        text = decimal_string(bk.endpoints(n_star)[1], 6, "up")
    return text, round(math.nextafter(float(log10), math.inf) + 5e-7, 6)


def _run_triples(
    loaded: LoadedModel, bounds: TokenBounds, ln_bounds: Sequence[Sequence[float]]
) -> dict[int, dict[str, Any]]:
    """Each layer-0 head's best triple as a sequence of tokens through the model: the
    forward pass's logit difference between the two keys must agree with the
    certificate's own (float64) evaluation of the triple, within the float32 allowance."""
    out: dict[int, dict[str, Any]] = {}
    for bound in bounds.heads:
        if (
            bound.layer != 0
            or bound.sequence is None
            or bound.token_types is None
            or bound.rows is None
        ):
            continue
        ids = torch.as_tensor(bound.sequence[None, :])
        types = torch.as_tensor(bound.token_types[None, :])
        logits = _layer_logits(loaded, ids, types, 0)[0, bound.head]
        query, high, low = bound.rows
        difference = float(logits[query, high] - logits[query, low])
        row = logits[query]
        estimate = float(bound.triple_estimate or 0.0)
        allowance = FLOAT32_ALLOWANCE * ln_bounds[0][bound.head]
        certificate = bound.certificate
        out[bound.head] = {
            "query": list(certificate.query) if certificate else None,
            "high": list(certificate.high) if certificate else None,
            "low": list(certificate.low) if certificate else None,
            "certified_found": round(certificate.found, 6) if certificate else None,
            "positions": [query, high, low],
            "sequence": bound.sequence.tolist(),
            "token_types": bound.token_types.tolist(),
            "estimate": round(estimate, 6),
            "model": round(difference, 6),
            "row_spread": round(float(row.max() - row.min()), 6),
            "allowance": allowance,
            "agrees": abs(difference - estimate) <= allowance,
        }
    return out


def _layer_logits(
    loaded: LoadedModel, ids: torch.Tensor, types: torch.Tensor, layer: int
) -> torch.Tensor:
    """One layer's captured logits ``[batch, heads, n, n]`` for sequences with token types."""
    captured: dict[int, torch.Tensor] = {}

    def record(index: int, logits: torch.Tensor, weights: torch.Tensor) -> None:
        captured[index] = logits

    with torch.no_grad(), capture_logits(loaded.model, record):
        loaded.model(input_ids=ids, attention_mask=torch.ones_like(ids), token_type_ids=types)
    return captured[layer].double()


def _versions() -> dict[str, str]:
    import flint
    import transformers

    return {
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "python-flint": flint.__version__,
        "numpy": np.__version__,
    }


def _machine() -> dict[str, Any]:
    load = os.getloadavg() if hasattr(os, "getloadavg") else (math.nan,) * 3
    return {
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "load_average": [round(v, 2) for v in load],
    }


def run_probe(
    out: Path | str,
    config: ProbeConfig | None = None,
    *,
    log: Callable[[str], None] = lambda line: None,
    loaded: LoadedModel | None = None,
    write_report: bool = True,
) -> dict[str, Any]:
    """Certify, measure and attack every head; write the run folder ``out``.

    Parameters
    ----------
    out
        The run folder: new or empty, or holding an earlier probe (replaced).
    config
        What to run; :class:`ProbeConfig`'s defaults when None.
    log
        Called with one line per phase.
    loaded
        A model already loaded (tests reuse one); loaded from the wheel when None.
    write_report
        Write ``report.md`` and ``figures/`` (needs matplotlib) besides the JSON files.

    Returns
    -------
    dict
        The content of ``heads.json``.

    Raises
    ------
    ProbeError
        For a run folder that holds other files, or unreadable text.
    """
    config = config or ProbeConfig()
    out = Path(out)
    if out.exists() and (
        not out.is_dir() or (any(out.iterdir()) and not (out / "heads.json").is_file())
    ):
        raise ProbeError(
            f"--out {out} is not empty and holds no earlier probe; choose a new folder"
        )
    seconds: dict[str, float] = {}
    start = time.perf_counter()

    clock = time.perf_counter()
    loaded = loaded or load_minilm()
    seconds["load"] = time.perf_counter() - clock
    log(f"loaded {MODEL_NAME} from {loaded.archive} ({seconds['load']:.1f} s)")
    try:
        corpus = read_corpus(loaded.tokenizer, list(config.text_files) or None)
    except ValueError as error:
        raise ProbeError(str(error)) from None
    if config.sizes[-1] > loaded.max_positions:
        raise ProbeError(f"--sizes: the model has {loaded.max_positions} positions")

    clock = time.perf_counter()
    layers, heads = loaded.layers, loaded.heads
    with single_threaded_blas():
        certificates = [
            [certify_head(loaded.head_weights(i, h)) for h in range(heads)] for i in range(layers)
        ]
        witness = np.array(
            [
                [witness_spread(loaded.head_weights(i, h)) for h in range(heads)]
                for i in range(layers)
            ]
        )
    seconds["certify"] = time.perf_counter() - clock
    log(f"certified {layers * heads} heads ({seconds['certify']:.1f} s)")

    clock = time.perf_counter()
    ids = loaded.special_ids()
    probe_window = text_windows(corpus, min(128, config.sizes[-1]), 1, ids["cls"], ids["sep"])[0]
    capture_error = _capture_check(loaded, probe_window)
    seconds["capture_check"] = time.perf_counter() - clock

    clock = time.perf_counter()
    rng = np.random.default_rng(config.seed)
    summaries: dict[str, dict[str, Any]] = {kind: {} for kind in INPUT_KINDS}
    text_deltas: list[np.ndarray] = []
    kind_max = {kind: np.zeros((layers, heads)) for kind in INPUT_KINDS}
    text_rows: list[np.ndarray] = []
    t1_violations = t6_violations = rows_checked = 0
    counts: dict[str, dict[str, int]] = {kind: {} for kind in INPUT_KINDS}
    measured: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # the search's starts
    for kind in INPUT_KINDS:
        for n in config.sizes:
            sequences = _inputs(kind, n, config, loaded, corpus, rng)
            counts[kind][str(n)] = len(sequences)
            rows = RowMeasurements(n)
            for batch in _batches(sequences):
                measure_batch(loaded.model, batch, rows)
            arrays = rows.finish()
            summaries[kind][str(n)] = _size_summary(n, arrays)
            kind_max[kind] = np.maximum(kind_max[kind], arrays["delta"].max(axis=-1))
            measured.append((sequences, np.zeros_like(sequences), arrays["sequence_max"]))
            t1_violations += rows.t1_violations
            t6_violations += rows.t6_violations
            rows_checked += arrays["delta"].size
            if kind == "text":
                text_deltas.append(arrays["delta"])
                text_rows.append(arrays["delta"])
        log(f"measured {kind} inputs at n = {', '.join(map(str, config.sizes))}")
    seconds["measure"] = time.perf_counter() - clock

    ln_bounds = [[float(c.delta_star) for c in row] for row in certificates]
    bounds: TokenBounds | None = None
    triples: dict[int, dict[str, Any]] = {}
    if config.token_bounds:
        clock = time.perf_counter()
        bounds = token_certificates(loaded, ln_bounds, tolerance=config.token_tolerance, log=log)
        triples = _run_triples(loaded, bounds, ln_bounds)
        seconds["token_certificates"] = time.perf_counter() - clock

    clock = time.perf_counter()
    ids = loaded.special_ids()
    special = [ids[name] for name in ("mask", "pad", "unk", "cls", "sep")]
    searcher = TokenSearch(
        loaded.model,
        int(loaded.config["vocab_size"]),
        special,
        SearchConfig(
            seconds=config.search_seconds,
            rounds=config.search_rounds,
            seed=config.seed,
            # Layer 0's best triples come from its certificate: swaps go to later layers.
            layers=tuple(range(1, layers)) if triples else None,
        ),
        log=log,
    )
    seeds = [
        ("certificate triple", np.array([t["sequence"]]), np.array([t["token_types"]]))
        for t in triples.values()
    ]
    # The inputs just measured are the search's starts, and the random ones the baseline
    # its weakest heads are held to (their spreads as measured above: the report's numbers).
    search = searcher.run(seeds=seeds, starts=measured, reference=kind_max["random"])
    seconds["search"] = time.perf_counter() - clock
    log(f"search: {search.evaluated} sequences ({seconds['search']:.1f} s)")

    measured_max = np.maximum.reduce([kind_max[k] for k in INPUT_KINDS])
    found = np.maximum(measured_max, search.spreads)
    token_upper = np.array(ln_bounds)
    token_kind = np.full((layers, heads), "layernorm", dtype=object)
    if bounds is not None:
        for b in bounds.heads:
            token_upper[b.layer, b.head] = b.upper
            token_kind[b.layer, b.head] = b.kind
    # A float32 forward pass against an exact-arithmetic certificate: the LayerNorm-set
    # certificate bounds every magnitude involved, so its relative allowance, applied to
    # it, bounds the absolute float32 error of any spread the head computes.
    absolute = np.array(ln_bounds) * FLOAT32_ALLOWANCE
    violations = {
        "found": found > token_upper + absolute,
        "layernorm": found > np.array(ln_bounds) * (1 + FLOAT32_ALLOWANCE),
        "witness": certificate_violations(witness, certificates, WITNESS_ALLOWANCE),
    }
    text_all = np.concatenate(text_rows, axis=-1)
    stages = sorted(search.by_stage)
    head_records = []
    for i in range(layers):
        for h in range(heads):
            certificate = certificates[i][h]
            delta_star = float(certificate.delta_star)
            text = [summaries["text"][str(n)] for n in config.sizes]
            median_below = [
                n
                for n, s in zip(config.sizes, text, strict=True)
                if s["t1_bound"]["median"][i][h] < 0.5
            ]
            every_below = [
                n
                for n, s in zip(config.sizes, text, strict=True)
                if s["t1_bound_at_max_delta"][i][h] < 0.5
            ]
            sources = {kind: float(kind_max[kind][i, h]) for kind in INPUT_KINDS}
            sources["search"] = float(search.spreads[i, h])
            source = max(sources, key=lambda key: sources[key])
            if source == "search":
                source = f"search: {search.stage[i][h]}"
            largest = float(found[i, h])
            upper = float(token_upper[i, h])
            n_star, log10 = _dispersion_half(upper)
            bound = _bound_of(bounds, i, h)
            head_records.append(
                {
                    "layer": i,
                    "head": h,
                    "delta_star_upper": certificate.decimal(),
                    "delta_star_route": certificate.route,
                    "delta_product_upper": certificate.decimal(certificate.delta_product),
                    "delta_factored_upper": certificate.decimal(certificate.delta_factored),
                    "sigma_product_upper": certificate.decimal(certificate.sigma_product),
                    "query_offset_upper": certificate.decimal(certificate.query_offset),
                    "sigma_q_upper": certificate.decimal(certificate.sigma_q),
                    "sigma_k_upper": certificate.decimal(certificate.sigma_k),
                    "input_radius_upper": certificate.decimal(certificate.input_radius),
                    "n_star_half": certificate.n_star_half,
                    "log10_n_star_half": round(certificate.log10_n_star_half + 5e-7, 6),
                    "witness_delta": round(float(witness[i, h]), 6),
                    "token_upper": _decimal_up(upper),
                    "token_set": str(token_kind[i, h]),
                    "token_box_bound": (
                        _decimal_up(bound.box_bound)
                        if bound is not None and bound.box_bound is not None
                        else None
                    ),
                    "token_n_star_half": n_star,
                    "token_log10_n_star_half": log10,
                    "token_seconds": (
                        round(bound.certificate.seconds, 2)
                        if bound is not None and bound.certificate is not None
                        else None
                    ),
                    "triple": triples.get(h) if i == 0 else None,
                    "measured_median_delta": round(float(np.median(text_all[i, h])), 6),
                    "measured_max_delta": round(float(measured_max[i, h]), 6),
                    "measured_max_by_input": {
                        kind: round(float(kind_max[kind][i, h]), 6) for kind in INPUT_KINDS
                    },
                    "search_delta": round(float(search.spreads[i, h]), 6),
                    "search_by_stage": {
                        stage: round(float(search.by_stage[stage][i, h]), 6) for stage in stages
                    },
                    "found_delta": round(largest, 6),
                    "found_source": source,
                    "found_sequence": search.sequences[i][h].tolist()
                    if source.startswith("search")
                    else None,
                    "found_token_types": search.token_types[i][h].tolist()
                    if source.startswith("search")
                    else None,
                    "bracket_ratio": round(upper / largest, 6) if largest > 0 else None,
                    "ln_ratio": round(delta_star / largest, 6) if largest > 0 else None,
                    "tightness": round(largest / delta_star, 6),
                    "witness_ratio": round(float(witness[i, h]) / delta_star, 6),
                    "t1_below_half_at": median_below[0] if median_below else None,
                    "t1_below_half_every_row_at": every_below[0] if every_below else None,
                    "violations": {k: bool(v[i, h]) for k, v in violations.items()},
                }
            )
    triple_failures = sum(not t["agrees"] for t in triples.values())
    certificate_failures = int(violations["found"].sum() + violations["witness"].sum())
    checks = {
        "capture_max_abs_error": capture_error,
        "capture_passed": capture_error <= 1e-6,
        "certificate_violations": certificate_failures,
        "layernorm_violations": int(violations["layernorm"].sum()),
        "triples_checked": len(triples),
        "triple_disagreements": triple_failures,
        "t1_row_violations": t1_violations,
        "t6_row_violations": t6_violations,
        "rows_checked": rows_checked,
    }
    checks["passed"] = bool(
        checks["capture_passed"]
        and certificate_failures == 0
        and checks["layernorm_violations"] == 0
        and triple_failures == 0
        and t1_violations == 0
        and t6_violations == 0
    )
    seconds["total"] = time.perf_counter() - start
    result: dict[str, Any] = {
        "model": {
            "name": MODEL_NAME,
            "archive": str(loaded.archive),
            "layers": layers,
            "heads": heads,
            "hidden": int(loaded.config["hidden_size"]),
            "head_dim": loaded.head_dim,
            "max_positions": loaded.max_positions,
        },
        "corpus": {
            "name": corpus.name,
            "files": list(corpus.files),
            "words": corpus.words,
            "tokens": int(corpus.token_ids.size),
        },
        "config": config.to_dict(),
        "sequences": counts,
        "search": {
            "seconds_budget": config.search_seconds,
            "seconds": round(search.seconds, 2),
            "evaluated": search.evaluated,
            "rounds": search.rounds,
            "refine_rounds": search.refine_rounds,
            "stages": stages,
        },
        "token_bounds": (
            {
                "sets": {kind: SETS[kind] for kind in sorted(set(token_kind.ravel()))},
                "first_box_gap": round(bounds.first_box_gap, 6),
                "smallest_variance": bounds.smallest_variance,
                "seconds": {k: round(v, 2) for k, v in bounds.seconds.items()},
                "tolerance": config.token_tolerance,
            }
            if bounds is not None
            else {"sets": {"layernorm": SETS["layernorm"]}}
        ),
        "allowance": {"float32_relative": FLOAT32_ALLOWANCE, "witness_relative": WITNESS_ALLOWANCE},
        "checks": checks,
        "heads": head_records,
        "seconds": {k: round(v, 2) for k, v in seconds.items()},
        "machine": _machine(),
        "versions": _versions(),
    }
    measurements = {
        "sizes": list(config.sizes),
        "kinds": summaries,
        "text_histograms": _histograms(text_deltas),
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "measurements.json").write_text(json.dumps(measurements) + "\n")
    if write_report:
        from softmax_dispersion.empirical.pretrained.probe_report import write_report as render

        clock = time.perf_counter()
        render(out, result, measurements)
        result["seconds"]["report"] = round(time.perf_counter() - clock, 2)
        result["seconds"]["total"] = round(time.perf_counter() - start, 2)
        render(out, result, measurements, draw_figures=False)  # the report's timings, final
    (out / "heads.json").write_text(json.dumps(result, indent=1) + "\n")
    return result
