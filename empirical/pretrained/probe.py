"""The pretrained-heads probe: certify, measure and attack every head of all-MiniLM-L6-v2.

:func:`run_probe` does, in order:

1. load the model offline (:mod:`~softmax_dispersion.empirical.pretrained.model`);
2. certify every head's spread ``δ*`` and ``n*(½)`` over every possible input
   (:mod:`~softmax_dispersion.empirical.pretrained.certificate`), and measure the
   head on the witness LayerNorm outputs that nearly attain the certificate;
3. check the capture: ``softmax`` of the captured logits against the weights of a
   separate eager forward pass with ``output_attentions``;
4. measure every row of every head on real text and synthetic inputs at each size;
5. run the adversarial token search;
6. hold every measured, adversarial and witness spread to the certificate, and write
   ``heads.json``, ``measurements.json``, ``report.md`` and ``figures/`` into the run
   folder.

The run passes when no spread exceeds its head's certificate (beyond the float32
allowance), the capture reproduces the model's weights, and no row breaks T1 or T6
(those two are consistency checks).
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from softmax_dispersion.empirical.pretrained.capture import attention_logits
from softmax_dispersion.empirical.pretrained.certificate import (
    HeadCertificate,
    certify_head,
    witness_spread,
)
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
from softmax_dispersion.empirical.pretrained.search import adversarial_search
from softmax_dispersion.numerics.operator_norm import single_threaded_blas
from softmax_dispersion.theory.dispersion import dispersion_upper
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
    search_rounds: int = 20
    search_size: int = 16
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
        if not 3 <= self.search_size <= 512:
            raise ProbeError(f"--search-size must lie in 3..512, got {self.search_size}")
        if self.search_rounds < 0:
            raise ProbeError(f"--search-rounds must be >= 0, got {self.search_rounds}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "sizes": list(self.sizes),
            "text_files": [str(p) for p in self.text_files],
            "tokens_per_size": dict(self.tokens_per_size),
            "search_rounds": self.search_rounds,
            "search_size": self.search_size,
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
    search_pool: list[np.ndarray] = []
    t1_violations = t6_violations = rows_checked = 0
    counts: dict[str, dict[str, int]] = {kind: {} for kind in INPUT_KINDS}
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
            t1_violations += rows.t1_violations
            t6_violations += rows.t6_violations
            rows_checked += arrays["delta"].size
            if kind == "text":
                text_deltas.append(arrays["delta"])
                text_rows.append(arrays["delta"])
            if n == config.search_size:
                search_pool.append(sequences)
        log(f"measured {kind} inputs at n = {', '.join(map(str, config.sizes))}")
    seconds["measure"] = time.perf_counter() - clock

    clock = time.perf_counter()
    if not search_pool:
        for kind in INPUT_KINDS:
            search_pool.append(_inputs(kind, config.search_size, config, loaded, corpus, rng))
    search = adversarial_search(
        loaded.model,
        np.concatenate(search_pool),
        rounds=config.search_rounds,
        vocabulary_size=int(loaded.config["vocab_size"]),
        rng=rng,
    )
    seconds["search"] = time.perf_counter() - clock
    log(f"adversarial search: {search.evaluated} sequences ({seconds['search']:.1f} s)")

    measured_max = np.maximum.reduce([kind_max[k] for k in INPUT_KINDS])
    text_all = np.concatenate(text_rows, axis=-1)
    violations = {
        "measured": certificate_violations(measured_max, certificates, FLOAT32_ALLOWANCE),
        "adversarial": certificate_violations(search.spreads, certificates, FLOAT32_ALLOWANCE),
        "witness": certificate_violations(witness, certificates, WITNESS_ALLOWANCE),
    }
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
            largest = max(float(measured_max[i, h]), float(search.spreads[i, h]))
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
                    "measured_median_delta": round(float(np.median(text_all[i, h])), 6),
                    "measured_max_delta": round(float(measured_max[i, h]), 6),
                    "measured_max_by_input": {
                        kind: round(float(kind_max[kind][i, h]), 6) for kind in INPUT_KINDS
                    },
                    "adversarial_max_delta": round(float(search.spreads[i, h]), 6),
                    "adversarial_start_delta": round(float(search.start[i, h]), 6),
                    "largest_found_delta": round(largest, 6),
                    "tightness": round(largest / delta_star, 6),
                    "witness_ratio": round(float(witness[i, h]) / delta_star, 6),
                    "t1_below_half_at": median_below[0] if median_below else None,
                    "t1_below_half_every_row_at": every_below[0] if every_below else None,
                    "violations": {k: bool(v[i, h]) for k, v in violations.items()},
                }
            )
    certificate_failures = int(sum(v.sum() for v in violations.values()))
    checks = {
        "capture_max_abs_error": capture_error,
        "capture_passed": capture_error <= 1e-6,
        "certificate_violations": certificate_failures,
        "t1_row_violations": t1_violations,
        "t6_row_violations": t6_violations,
        "rows_checked": rows_checked,
    }
    checks["passed"] = bool(
        checks["capture_passed"]
        and certificate_failures == 0
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
            "rounds": config.search_rounds,
            "size": config.search_size,
            "evaluated": search.evaluated,
            "history_max": search.history.max(axis=(1, 2)).round(6).tolist(),
            "history_mean_tightness": [
                round(
                    float(
                        np.mean(
                            h / np.array([[float(c.delta_star) for c in r] for r in certificates])
                        )
                    ),
                    6,
                )
                for h in search.history
            ],
        },
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
        from softmax_dispersion.empirical.pretrained.report import write_report as render

        clock = time.perf_counter()
        render(out, result, measurements)
        result["seconds"]["report"] = round(time.perf_counter() - clock, 2)
        result["seconds"]["total"] = round(time.perf_counter() - start, 2)
        render(out, result, measurements, draw_figures=False)  # the report's timings, final
    (out / "heads.json").write_text(json.dumps(result, indent=1) + "\n")
    return result
