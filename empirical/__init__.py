"""The empirical layer: attention heads trained on max retrieval, held to claims T1 and T13.

Needs torch (from a checkout: ``pip install '.[empirical]'``); importing
:mod:`softmax_dispersion` alone never imports it, and the names below load on first use,
so that rendering a run folder's report (:mod:`~softmax_dispersion.empirical.run_report`)
needs no torch either.  The pieces:

:mod:`~softmax_dispersion.empirical.task`
    The max-retrieval data: the target is the class of the highest-priority item.
:mod:`~softmax_dispersion.empirical.normalisers`
    softmax, adaptive temperature (the theory's rule, and a refit), SSMax, log-n,
    entmax15, sparsemax, and the bounded heads (soft-capped, QK-normed).
:mod:`~softmax_dispersion.empirical.model`, :mod:`~softmax_dispersion.empirical.training`
    One attention head per seed, trained side by side as one ensemble.
:mod:`~softmax_dispersion.empirical.logit_function`
    A head's item → logit map (and :func:`load_logit_function` from a run folder).
:mod:`~softmax_dispersion.empirical.logit_ranges`
    Its logit range certified over the whole item domain.
:mod:`~softmax_dispersion.empirical.adversarial`, :mod:`~softmax_dispersion.empirical.typical`
    T1's worst sets through the model; T13's prediction for typical sets.
:mod:`~softmax_dispersion.empirical.evaluation`, :mod:`~softmax_dispersion.empirical.bound_check`
    Chunked measurement at any size, and T1 checked on every row with T12's tolerance.
:mod:`~softmax_dispersion.empirical.experiment`, :mod:`~softmax_dispersion.empirical.run_report`
    Run folders (checkpoints, resume), the report, the paired tests and the figures.

The quick preset, as ``experiment max-retrieval --preset quick`` runs it:

>>> from softmax_dispersion.empirical import preset
>>> preset("quick").normalisers
('softmax', 'adaptive_temperature', 'adaptive_refit', 'ssmax', 'entmax15', 'sparsemax')
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

_LAZY = {
    "BoundCheck": "bound_check",
    "check_t1": "bound_check",
    "PRESETS": "config",
    "PRESET_SOURCES": "config",
    "ExperimentConfig": "config",
    "preset": "config",
    "Evaluation": "evaluation",
    "evaluate": "evaluation",
    "ExperimentError": "experiment",
    "run_experiment": "experiment",
    "LogitFunction": "logit_function",
    "load_logit_function": "logit_function",
    "MaxRetrievalModel": "model",
    "NORMALISERS": "normalisers",
    "make_normaliser": "normalisers",
    "write_report": "run_report",
    "summarise": "statistics",
    "max_retrieval_batch": "task",
    "TrainingRun": "training",
    "train": "training",
    "certify_logit_range": "logit_ranges",
    "TypicalSetLaw": "typical",
}

if TYPE_CHECKING:
    from softmax_dispersion.empirical.bound_check import BoundCheck, check_t1
    from softmax_dispersion.empirical.config import (
        PRESET_SOURCES,
        PRESETS,
        ExperimentConfig,
        preset,
    )
    from softmax_dispersion.empirical.evaluation import Evaluation, evaluate
    from softmax_dispersion.empirical.experiment import ExperimentError, run_experiment
    from softmax_dispersion.empirical.logit_function import LogitFunction, load_logit_function
    from softmax_dispersion.empirical.logit_ranges import certify_logit_range
    from softmax_dispersion.empirical.model import MaxRetrievalModel
    from softmax_dispersion.empirical.normalisers import NORMALISERS, make_normaliser
    from softmax_dispersion.empirical.run_report import write_report
    from softmax_dispersion.empirical.statistics import summarise
    from softmax_dispersion.empirical.task import max_retrieval_batch
    from softmax_dispersion.empirical.training import TrainingRun, train
    from softmax_dispersion.empirical.typical import TypicalSetLaw


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(f"softmax_dispersion.empirical.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'softmax_dispersion.empirical' has no attribute {name!r}")


__all__ = [
    "NORMALISERS",
    "PRESETS",
    "PRESET_SOURCES",
    "BoundCheck",
    "Evaluation",
    "ExperimentConfig",
    "ExperimentError",
    "LogitFunction",
    "MaxRetrievalModel",
    "TrainingRun",
    "TypicalSetLaw",
    "certify_logit_range",
    "check_t1",
    "evaluate",
    "load_logit_function",
    "make_normaliser",
    "max_retrieval_batch",
    "preset",
    "run_experiment",
    "summarise",
    "train",
    "write_report",
]
