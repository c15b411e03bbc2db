"""A max-retrieval experiment end to end: train, checkpoint, evaluate, report.

A run folder holds::

    config.json                 the configuration, preset and device
    checkpoints/NAME-seedK.pt   one trained model per (normaliser, seed): state + config
    evaluations/NAME-seedK.json the measurements of that model (and of any
                                inference-only rule applied to it)
    metrics.json, metrics.csv   every measurement, one row per (normaliser, seed, n)
    report.md, figures/*.png    the tables, the bound check, the paired tests, the plots

Each seed's checkpoint and evaluation are written as soon as they exist, so an
interrupted run keeps its completed seeds; ``resume=True`` finishes it.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from softmax_dispersion._version import __version__
from softmax_dispersion.empirical.config import ExperimentConfig
from softmax_dispersion.empirical.evaluation import evaluate
from softmax_dispersion.empirical.model import MaxRetrievalModel
from softmax_dispersion.empirical.normalisers import NORMALISERS
from softmax_dispersion.empirical.training import TrainingRun, build_model, train

__all__ = ["ExperimentError", "resolve_device", "run_experiment"]


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


def _write_json(path: Path, data: Any) -> None:
    # Written whole then renamed, so an interruption never leaves half a file.
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(path.suffix + ".partial")
    partial.write_text(json.dumps(data, indent=1) + "\n")
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
            "seconds": run.seconds,
            "steps_per_second": run.steps_per_second,
            "final_loss": run.final_loss[member],
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
        training.append(
            {k: payload[k] for k in ("seconds", "steps_per_second", "final_loss")}
            | {"normaliser": normaliser, "seed": seed}
        )
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


def _train(
    out: Path,
    config: ExperimentConfig,
    normaliser: str,
    seeds: list[int],
    device: torch.device,
    progress: bool,
) -> tuple[MaxRetrievalModel, list[dict[str, Any]]]:
    """Train one ensemble, save its checkpoints, and describe each member's training."""
    run = train(config, normaliser, seeds, device=device, progress=progress)
    save_checkpoints(out, config, run)
    described = [
        {
            "normaliser": normaliser,
            "seed": seed,
            "seconds": run.seconds,
            "steps_per_second": run.steps_per_second,
            "final_loss": run.final_loss[member],
        }
        for member, seed in enumerate(seeds)
    ]
    return run.model, described


def _message(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def run_experiment(
    config: ExperimentConfig,
    out: Path,
    *,
    device: str = "auto",
    preset: str | None = None,
    from_checkpoint: Path | None = None,
    resume: bool = False,
    progress: bool = True,
    log: Callable[[str], None] = _message,
) -> dict[str, Any]:
    """Train (or load), evaluate and report; returns the metrics written to ``out``.

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
        The preset's name, recorded in the report.
    from_checkpoint
        A run folder whose checkpoints to evaluate instead of training; they must
        come from the same training config.
    resume
        Finish an interrupted run in ``out``: seeds already evaluated are kept.
    progress
        Progress bars on standard error.
    log
        Where one-line progress messages go.

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
    header = {
        "config": config.to_json(),
        "preset": preset,
        "device": describe_device(torch_device),
        "versions": {"torch": torch.__version__, "softmax_dispersion": __version__},
    }
    # Every argument is checked before the run folder is created, so that a refused
    # command leaves nothing behind.
    if from_checkpoint is not None and not (from_checkpoint / "checkpoints").is_dir():
        raise ExperimentError(f"--from-checkpoint: {from_checkpoint} has no checkpoints/ folder")
    _check_out(out, header, resume)
    if not (out / "config.json").is_file():
        _write_json(out / "config.json", header)
    started = time.perf_counter()
    seconds = {"train": 0.0, "evaluate": 0.0}
    training: list[dict[str, Any]] = []
    for trained in config.trained:
        names = [n for n in config.normalisers if NORMALISERS[n].train_with == trained]
        seeds = list(range(config.seeds))
        pending = [s for s in seeds if not _evaluation_path(out, trained, s).is_file()]
        if len(pending) < len(seeds):
            log(f"{trained}: seeds {sorted(set(seeds) - set(pending))} already evaluated")
        if pending:
            tick = time.perf_counter()
            source = from_checkpoint
            if source is None and all(_checkpoint_path(out, trained, s).is_file() for s in pending):
                source = out  # trained before an interruption: evaluate, don't retrain
            if source is not None:
                model, trained_runs = load_checkpoints(
                    source, config, trained, pending, torch_device
                )
                log(f"{trained}: loaded {len(pending)} checkpoint(s) from {source}")
            else:
                model, trained_runs = _train(out, config, trained, pending, torch_device, progress)
                first = trained_runs[0]
                speed = f"{first['seconds']:.0f} s, {first['steps_per_second']:.0f} steps/s"
                log(f"{trained}: trained in {speed}")
            seconds["train"] += time.perf_counter() - tick
            tick = time.perf_counter()
            evaluation = evaluate(
                model, config, pending, names, device=torch_device, progress=progress
            )
            seconds["evaluate"] += time.perf_counter() - tick
            for seed, trained_run in zip(pending, trained_runs, strict=True):
                record = {
                    "training": trained_run,
                    "rows": [row for row in evaluation.rows if row["seed"] == seed],
                    "heatmaps": evaluation.heatmaps if seed == pending[0] else {},
                }
                _write_json(_evaluation_path(out, trained, seed), record)
        for seed in seeds:
            record = json.loads(_evaluation_path(out, trained, seed).read_text())
            training.append(record["training"])
    metrics = collect_metrics(out, config, header)
    metrics["training"] = training
    metrics["seconds"] = seconds | {"total": time.perf_counter() - started}
    _write_json(out / "metrics.json", metrics)
    from softmax_dispersion.empirical.report import write_report

    write_report(out, metrics)
    return metrics


def collect_metrics(out: Path, config: ExperimentConfig, header: dict[str, Any]) -> dict[str, Any]:
    """Gather the per-seed evaluation files of a run folder into one metrics dict."""
    rows: list[dict[str, Any]] = []
    heatmaps: dict[str, dict[str, Any]] = {}
    for trained in config.trained:
        for seed in range(config.seeds):
            record = json.loads(_evaluation_path(out, trained, seed).read_text())
            rows.extend(record["rows"])
            for name, maps in record["heatmaps"].items():
                if name not in heatmaps or seed == 0:
                    heatmaps[name] = {str(n): rows_ for n, rows_ in maps.items()}
    order = {name: i for i, name in enumerate(config.normalisers)}
    rows.sort(key=lambda r: (order[r["normaliser"]], r["seed"], r["n"]))
    return header | {"rows": rows, "heatmaps": heatmaps}
