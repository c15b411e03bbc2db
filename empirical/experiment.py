"""A max-retrieval experiment end to end: train, checkpoint, evaluate, report.

A run folder holds::

    config.json                 the configuration, preset, device and normalisers
    checkpoints/NAME-seedK.pt   one trained model per (normaliser, seed): state + config
    evaluations/NAME-seedK.json the measurements of that model (and of any
                                inference-only rule applied to it), its certificate,
                                its worst sets and its learning curves
    certificates.json           every head's certified logit spread and dispersion sizes
    metrics.json, metrics.csv   every measurement, one row per (normaliser, seed, n)
    report.md, figures/*.png    the tables, the checks, the paired tests, the plots

Per trained ensemble the pipeline is: train (or load); take each member's item → logit
map; certify its logit range over the whole item domain; measure the test sets (with
T13's prediction for each); measure the gap-controlled sets; run the certified worst
sets through the model; refit the adaptive polynomial when asked.

Each seed's checkpoint and evaluation are written as soon as they exist, so an
interrupted run keeps its completed seeds; ``resume=True`` finishes it.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import torch

from softmax_dispersion._version import __version__
from softmax_dispersion.empirical.adversarial import (
    adversarial_rows,
    crossing_size,
    item_logits,
    run_length_check,
)
from softmax_dispersion.empirical.config import PRESET_SOURCES, ExperimentConfig
from softmax_dispersion.empirical.evaluation import (
    BETA_BINS,
    ENTROPY_BINS,
    evaluate,
    evaluate_gap_sets,
    fixed_beta,
)
from softmax_dispersion.empirical.logit_function import logit_function
from softmax_dispersion.empirical.logit_ranges import (
    certify_logit_range,
    head_certificate,
    sampled_range,
)
from softmax_dispersion.empirical.model import MaxRetrievalModel
from softmax_dispersion.empirical.normalisers import (
    AdaptiveRefit,
    Normaliser,
    ScalableSoftmax,
    describe_normalisers,
    make_normaliser,
)
from softmax_dispersion.empirical.progress import Progress, ProgressMode
from softmax_dispersion.empirical.refit import refit_polynomials
from softmax_dispersion.empirical.training import TrainingRun, build_model, train
from softmax_dispersion.empirical.typical import TypicalSetLaw

__all__ = ["ExperimentError", "choose_threads", "resolve_device", "run_experiment"]


class ExperimentError(ValueError):
    """Bad input to an experiment: a device, a folder or a checkpoint that cannot be used."""


def resolve_device(device: str) -> torch.device:
    """``"auto"`` (CUDA when available, else CPU), ``"cpu"`` or ``"cuda"``.

    Raises
    ------
    ExperimentError
        For another name, or ``"cuda"`` on a machine without a usable GPU.
    """
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device not in ("cpu", "cuda"):
        raise ExperimentError(f"device must be auto, cpu or cuda, got {device!r}")
    if device == "cuda" and not torch.cuda.is_available():
        raise ExperimentError("device 'cuda' requested but torch sees no CUDA GPU")
    return torch.device(device)


def describe_device(device: torch.device) -> str:
    """``"cpu"`` or ``"cuda (GPU name)"``."""
    if device.type == "cuda":
        return f"cuda ({torch.cuda.get_device_name(device)})"
    return device.type


def _checkpoint_path(out: Path, normaliser: str, seed: int) -> Path:
    return out / "checkpoints" / f"{normaliser}-seed{seed}.pt"


def _evaluation_path(out: Path, normaliser: str, seed: int) -> Path:
    return out / "evaluations" / f"{normaliser}-seed{seed}.json"


def _write_json(path: Path, data: Any, *, compact: bool = False) -> None:
    # Written whole then renamed, so an interruption never leaves half a file.
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(path.suffix + ".partial")
    text = json.dumps(data, separators=(",", ":")) if compact else json.dumps(data, indent=1)
    partial.write_text(text + "\n")
    partial.replace(path)


def save_checkpoints(out: Path, config: ExperimentConfig, run: TrainingRun) -> None:
    """One file per member: its slice of every parameter, the config and its training."""
    state = run.model.state_dict()
    for member, seed in enumerate(run.seeds):
        path = _checkpoint_path(out, run.model.normaliser.name, seed)
        path.parent.mkdir(parents=True, exist_ok=True)
        payload = {
            "normaliser": run.model.normaliser.name,
            "seed": seed,
            "training": config.training_view(),
            "state": {key: value[member].detach().cpu().clone() for key, value in state.items()},
            "training_record": _training_record(run, member),
        }
        partial = path.with_suffix(".partial")
        torch.save(payload, partial)
        partial.replace(path)


def load_checkpoints(
    folder: Path, config: ExperimentConfig, normaliser: str, seeds: list[int], device: torch.device
) -> tuple[MaxRetrievalModel, list[dict[str, Any]]]:
    """Rebuild an ensemble from per-seed checkpoints in ``folder`` (a run folder).

    Raises
    ------
    ExperimentError
        When a checkpoint is missing, unreadable, or was trained with another config.
    """
    model = build_model(config, normaliser, seeds, device)
    state = model.state_dict()
    training = []
    for member, seed in enumerate(seeds):
        path = _checkpoint_path(folder, normaliser, seed)
        if not path.is_file():
            raise ExperimentError(f"no checkpoint {path}")
        try:
            payload = torch.load(path, map_location=device, weights_only=True)
        except Exception as error:  # a truncated or foreign file: say which
            raise ExperimentError(f"cannot read checkpoint {path}: {error}") from None
        if payload.get("training") != config.training_view():
            raise ExperimentError(
                f"checkpoint {path} was trained with another config "
                f"({_difference(payload.get('training'), config.training_view())})"
            )
        for key, value in state.items():
            value[member].copy_(payload["state"][key])
        training.append(payload["training_record"])
    model.load_state_dict(state)
    return model.eval(), training


def _difference(saved: Any, wanted: dict[str, Any]) -> str:
    if not isinstance(saved, dict):
        return "no config stored"
    keys = [k for k in wanted if saved.get(k) != wanted[k]]
    return ", ".join(f"{k}: {saved.get(k)!r} there, {wanted[k]!r} here" for k in keys)


def _check_out(out: Path, header: dict[str, Any], resume: bool) -> None:
    config_path = out / "config.json"
    if out.exists() and not out.is_dir():
        raise ExperimentError(f"--out {out} is a file, not a folder")
    if resume and not config_path.is_file():
        what = "does not exist" if not out.exists() else "holds no config.json"
        raise ExperimentError(f"--resume: {out} {what}; there is nothing to resume")
    if out.is_dir() and any(out.iterdir()):
        if not resume:
            hint = " (an earlier run: add --resume to finish it)" if config_path.is_file() else ""
            raise ExperimentError(f"--out {out} is not empty{hint}")
        saved = json.loads(config_path.read_text())
        if saved.get("config") != header["config"]:
            raise ExperimentError(f"--resume: {out} was started with another config")
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".write-test"
        probe.write_text("")
        probe.unlink()
    except OSError as error:
        raise ExperimentError(f"--out {out} is not writable: {error.strerror}") from None


def _training_record(run: TrainingRun, member: int) -> dict[str, Any]:
    """How one member was trained: its ensemble's wall time (shared by its members, and
    said so), its share, the speed, its final loss and its learning curve."""
    return {
        "normaliser": run.model.normaliser.name,
        "seed": run.seeds[member],
        "ensemble": run.seeds,
        "ensemble_seconds": run.seconds,
        "seconds_per_seed": run.seconds_per_seed,
        "steps_per_second": run.steps_per_second,
        "final_loss": run.final_loss[member],
        "curve": run.curves[member],
    }


def _train(
    out: Path,
    config: ExperimentConfig,
    normaliser: str,
    seeds: list[int],
    device: torch.device,
    progress: Progress,
) -> tuple[MaxRetrievalModel, list[dict[str, Any]]]:
    """Train one ensemble, save its checkpoints, and describe each member's training."""
    run = train(config, normaliser, seeds, device=device, progress=progress)
    save_checkpoints(out, config, run)
    return run.model, [_training_record(run, member) for member in range(len(seeds))]


def _message(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _load_average() -> list[float] | None:
    try:
        return list(os.getloadavg())
    except OSError:  # pragma: no cover - platforms without a load average
        return None


def choose_threads(requested: int | None = None) -> int:
    """The intra-op threads torch should use: ``requested``, or one per idle core.

    On a shared CPU, torch's default of one thread per core makes every thread wait for
    the slowest at each operation; measured on 2 cores busy with other work, 5 seeds
    trained at 1.9 steps/s with 2 threads and at 10.2 with 1.  So by default the count
    is the cores not already busy (load average), at least 1.
    """
    if requested is not None:
        if requested < 1:
            raise ExperimentError(f"threads must be >= 1, got {requested}")
        return requested
    cores = os.cpu_count() or 1
    try:
        busy = os.getloadavg()[0]
    except OSError:  # pragma: no cover - platforms without a load average
        busy = 0.0
    return max(1, min(cores, round(cores - busy)))


def run_experiment(
    config: ExperimentConfig,
    out: Path,
    *,
    device: str = "auto",
    preset: str | None = None,
    from_checkpoint: Path | None = None,
    resume: bool = False,
    progress: bool | ProgressMode | Progress = "lines",
    log: Callable[[str], None] = _message,
    threads: int | None = None,
) -> dict[str, Any]:
    """Train (or load), certify, evaluate and report; returns the metrics written to ``out``.

    Parameters
    ----------
    config
        What to run.
    out
        The run folder: created, or empty, or (with ``resume``) an interrupted run of
        the same config.
    device
        ``"auto"``, ``"cpu"`` or ``"cuda"``.
    preset
        The preset's name, recorded in the report with where its settings come from.
    from_checkpoint
        A run folder whose checkpoints to evaluate instead of training; they must
        come from the same training config.
    resume
        Finish an interrupted run in ``out``: seeds already evaluated are kept.
    progress
        ``"bar"`` (or ``True``): progress bars; ``"lines"``: a plain line per stage and
        at least every 20 s (for logs); ``"off"`` (or ``False``).
    log
        Where one-line messages go.
    threads
        torch's intra-op threads (default: :func:`choose_threads`).

    Returns
    -------
    dict
        The contents of ``metrics.json``.

    Raises
    ------
    ExperimentError
        For a folder, device or checkpoint that cannot be used (before any training).
    """
    torch_device = resolve_device(device)
    reporter = Progress.of(progress)
    reporter.log = log
    used_threads = choose_threads(threads)
    torch.set_num_threads(used_threads)
    header = {
        "config": config.to_json(),
        "preset": preset,
        "source": PRESET_SOURCES.get(preset or "", "custom settings"),
        "device": describe_device(torch_device),
        "threads": used_threads,
        "normaliser_info": describe_normalisers(config.normalisers),
        "histogram_edges": {"entropy": list(ENTROPY_BINS), "beta": list(BETA_BINS)},
        "versions": {"torch": torch.__version__, "softmax_dispersion": __version__},
    }
    # Every argument is checked before the run folder is created, so that a refused
    # command leaves nothing behind.
    if from_checkpoint is not None and not (from_checkpoint / "checkpoints").is_dir():
        raise ExperimentError(f"--from-checkpoint: {from_checkpoint} has no checkpoints/ folder")
    _check_out(out, header, resume)
    load_at_start = _load_average()
    if not (out / "config.json").is_file():
        _write_json(out / "config.json", header)
    started, cpu_started = time.perf_counter(), time.process_time()
    seconds = {"train": 0.0, "evaluate": 0.0, "certify": 0.0}
    for trained in config.trained:
        names = config.applied_to(trained)
        seeds = list(range(config.seeds))
        pending = [s for s in seeds if not _evaluation_path(out, trained, s).is_file()]
        if len(pending) < len(seeds):
            log(f"{trained}: seeds {sorted(set(seeds) - set(pending))} already evaluated")
        if not pending:
            continue
        tick = time.perf_counter()
        source = from_checkpoint
        if source is None and all(_checkpoint_path(out, trained, s).is_file() for s in pending):
            source = out  # trained before an interruption: evaluate, don't retrain
        if source is not None:
            model, trained_runs = load_checkpoints(source, config, trained, pending, torch_device)
            log(f"{trained}: loaded {len(pending)} checkpoint(s) from {source}")
        else:
            model, trained_runs = _train(out, config, trained, pending, torch_device, reporter)
            first = trained_runs[0]
            log(
                f"{trained}: {len(pending)} seeds trained together in "
                f"{first['ensemble_seconds']:.0f} s ({first['steps_per_second']:.0f} steps/s)"
            )
        seconds["train"] += time.perf_counter() - tick
        records = _measure_ensemble(
            model, config, trained, names, pending, torch_device, reporter, seconds
        )
        for seed, trained_run, record in zip(pending, trained_runs, records, strict=True):
            _write_json(_evaluation_path(out, trained, seed), {"training": trained_run} | record)
    metrics = collect_metrics(out, config, header)
    metrics["seconds"] = seconds | {
        "total": time.perf_counter() - started,
        # CPU time of this process: what the run cost whatever else shared the machine.
        "cpu": time.process_time() - cpu_started,
    }
    metrics["load_average"] = {"start": load_at_start, "end": _load_average()}
    _write_json(out / "metrics.json", metrics, compact=True)
    _write_json(out / "certificates.json", certificates_file(metrics))
    from softmax_dispersion.empirical.run_report import write_report

    write_report(out, metrics)
    return metrics


def _measure_ensemble(
    model: MaxRetrievalModel,
    config: ExperimentConfig,
    trained: str,
    names: list[str],
    seeds: list[int],
    device: torch.device,
    reporter: Progress,
    seconds: dict[str, float],
) -> list[dict[str, Any]]:
    """Everything measured on one trained ensemble, one record per member."""
    tick = time.perf_counter()
    fns = [logit_function(model, member, seed) for member, seed in enumerate(seeds)]
    ranges, decoys = [], []
    for fn in reporter.track(fns, f"certify {trained}", unit="heads"):
        found = certify_logit_range(fn, gap=config.certificate_gap)
        others = [c for c in range(fn.classes) if c != found.argmax[1]]
        decoys.append(certify_logit_range(fn, gap=config.certificate_gap, labels=others).argmin)
        ranges.append(found)
    modules = _modules(model, names)
    sampled = [sampled_range(fn, seed=seed) for fn, seed in zip(fns, seeds, strict=True)]
    certificates = [
        {
            name: head_certificate(
                found,
                normaliser=name,
                seed=seed,
                **_certificate_beta(modules[name], member),
                sampled=sampled[member],
            )
            for name in names
        }
        for member, (seed, found) in enumerate(zip(seeds, ranges, strict=True))
    ]
    seconds["certify"] += time.perf_counter() - tick

    tick = time.perf_counter()
    typical = [n for n in names if fixed_beta(modules[n], 0, 2) is not None]
    laws = [TypicalSetLaw(fn) for fn in fns] if typical else None
    refits = None
    if "adaptive_refit" in modules:
        refits = refit_polynomials(model, config, seeds, device)
        refit = modules["adaptive_refit"]
        assert isinstance(refit, AdaptiveRefit)
        refit.set_coefficients([fit["coefficients"] for fit in refits])
    evaluation = evaluate(
        model, config, seeds, names, device=device, progress=reporter, laws=laws, modules=modules
    )
    gap_rows = (
        evaluate_gap_sets(
            model, config, seeds, typical, laws=laws, device=device, progress=reporter
        )
        if typical
        else []
    )
    softmax_family = {n: modules[n] for n in names if modules[n].softmax_family}
    pairs = item_logits(model, fns, ranges)
    worst: dict[str, list[list[dict[str, Any]]]] = {}
    crossings: dict[str, list[int | None]] = {}
    if softmax_family:
        reporter.message(f"worst sets {trained}: n up to {max(config.adversarial_sizes)}")
        worst = adversarial_rows(
            model,
            softmax_family,
            fns,
            ranges,
            config.adversarial_sizes,
            decoys=decoys,
            # T11 bounds the paper's rule only; a refitted polynomial has no proved bound.
            beta_bound={n: _beta_max() for n in softmax_family if n == "adaptive_temperature"},
        )
        for name in typical:
            sizes = [_least_size(c[name]) for c in certificates]
            if all(size is not None and size <= max(config.adversarial_sizes) for size in sizes):
                crossings[name] = crossing_size(
                    model, modules[name], fns, ranges, max(config.adversarial_sizes)
                )
    seconds["evaluate"] += time.perf_counter() - tick

    records = []
    for member, seed in enumerate(seeds):
        for name in names:
            cert = certificates[member][name]
            cert["worst_sets"] = worst.get(name, [[]] * len(seeds))[member]
            cert["crossing"] = crossings[name][member] if name in crossings else None
            cert["decoy"] = {"priority": decoys[member][0], "class": decoys[member][1]}
            if name in typical and cert["dispersion_size"] is not None:
                cert["run_length"] = _run_length(pairs[member], cert)
        records.append(
            {
                "rows": [row for row in evaluation.rows if row["seed"] == seed],
                "heatmaps": evaluation.heatmaps if seed == seeds[0] else {},
                "histograms": {
                    name: by_seed[seed] for name, by_seed in evaluation.histograms.items()
                },
                "gap_rows": [row for row in gap_rows if row["seed"] == seed],
                "certificates": certificates[member],
                "refit": None if refits is None else refits[member],
            }
        )
    return records


def _modules(model: MaxRetrievalModel, names: list[str]) -> dict[str, Normaliser]:
    members = model.normaliser.members
    return {
        name: model.normaliser if name == model.normaliser.name else make_normaliser(name, members)
        for name in names
    }


@cache
def _beta_max_ball() -> Any:
    """T11's β_max as an arb ball (exact algebraic number, enclosed)."""
    from softmax_dispersion.numerics._backends import backend
    from softmax_dispersion.numerics.ball_formulas import ball_value
    from softmax_dispersion.theory.adaptive_temperature import adaptive_constants

    return ball_value(adaptive_constants().max_inverse_temperature, backend("arb"), precision=80)


def _beta_max() -> float:
    return float(_beta_max_ball().upper())


def _certificate_beta(normaliser: Normaliser, member: int) -> dict[str, Any]:
    """The β a certificate's dispersion sizes use, and what it says about it."""
    if not normaliser.softmax_family:
        return {"beta": None, "beta_note": "not a softmax: T1 and T4 do not apply"}
    if normaliser.name.startswith("adaptive"):
        if normaliser.name == "adaptive_temperature":
            return {
                "beta": _beta_max_ball(),
                "beta_note": "β ≤ β_max ≈ 2.4214 (T11): n* is an upper bound",
            }
        return {"beta": None, "beta_note": "refit rule: no proved bound on β"}
    if normaliser.length_scaled:
        s = float(normaliser.s[member].detach()) if isinstance(normaliser, ScalableSoftmax) else 1.0
        return {"beta": None, "beta_note": f"β = s·log n grows with n (T10), s = {s:.4g}"}
    return {"beta": 1, "beta_note": "β = 1"}


def _least_size(cert: dict[str, Any]) -> int | None:
    sizes = cert.get("dispersion_size")
    if not sizes or sizes["half"]["least_size"] is None:
        return None
    return int(sizes["half"]["least_size"])


def _run_length(pair: tuple[float, float], cert: dict[str, Any]) -> dict[str, Any]:
    """The run-length engine on the worst set at the certificate's dispersion sizes."""
    sizes = {
        name: int(level["least_size_exact"]) for name, level in cert["dispersion_size"].items()
    }
    errors = [row["logit_error"] for row in cert["worst_sets"]] or [0.0]
    return run_length_check(pair[0], pair[1], sizes, slack=max(4 * max(errors), 1e-9))


def certificates_file(metrics: dict[str, Any]) -> dict[str, Any]:
    """``certificates.json``: per normaliser and seed, the certificate without the rest."""
    heads: dict[str, dict[str, Any]] = {}
    for name, by_seed in metrics.get("certificates", {}).items():
        heads[name] = {
            seed: {k: v for k, v in cert.items() if k not in ("worst_sets", "run_length")}
            for seed, cert in by_seed.items()
        }
    return {
        "what": (
            "Certified logit spreads δ* of each trained head over its whole item domain "
            "(priority in [0, 1] × every class), by branch and bound in arb ball "
            "arithmetic, and T4's dispersion sizes n*(ε) = 1 + e^(βδ*)(1 − ε)/ε; "
            "load a head with softmax_dispersion.empirical.load_logit_function(run_dir, "
            "normaliser, seed)."
        ),
        "heads": heads,
    }


def collect_metrics(out: Path, config: ExperimentConfig, header: dict[str, Any]) -> dict[str, Any]:
    """Gather the per-seed evaluation files of a run folder into one metrics dict."""
    rows: list[dict[str, Any]] = []
    gap_rows: list[dict[str, Any]] = []
    heatmaps: dict[str, dict[str, Any]] = {}
    histograms: dict[str, dict[str, Any]] = {}
    certificates: dict[str, dict[str, Any]] = {}
    refits: dict[str, Any] = {}
    training: list[dict[str, Any]] = []
    for trained in config.trained:
        for seed in range(config.seeds):
            record = json.loads(_evaluation_path(out, trained, seed).read_text())
            training.append(record["training"])
            rows.extend(record["rows"])
            gap_rows.extend(record.get("gap_rows", []))
            for name, maps in record["heatmaps"].items():
                if name not in heatmaps or seed == 0:
                    heatmaps[name] = {str(n): rows_ for n, rows_ in maps.items()}
            for name, by_size in record.get("histograms", {}).items():
                histograms.setdefault(name, {})[str(seed)] = by_size
            for name, cert in record.get("certificates", {}).items():
                certificates.setdefault(name, {})[str(seed)] = cert
            if record.get("refit") is not None:
                refits[str(seed)] = record["refit"]
    order = {name: i for i, name in enumerate(config.normalisers)}
    rows.sort(key=lambda r: (order[r["normaliser"]], r["seed"], r["n"]))
    gap_rows.sort(key=lambda r: (order[r["normaliser"]], r["seed"], r["lead"], r["n"]))
    return header | {
        "rows": rows,
        "gap_rows": gap_rows,
        "heatmaps": heatmaps,
        "histograms": histograms,
        "certificates": certificates,
        "refits": refits,
        "training": training,
    }
