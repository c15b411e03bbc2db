"""The empirical layer: attention heads trained on max retrieval, held to claim T1.

Needs torch (from a checkout: ``pip install '.[empirical]'``); importing
:mod:`softmax_dispersion` alone never imports it.  The pieces:

:mod:`~softmax_dispersion.empirical.task`
    The max-retrieval data: the target is the class of the highest-priority item.
:mod:`~softmax_dispersion.empirical.normalisers`
    softmax, adaptive temperature (the theory's rule), SSMax, log-n, entmax15, sparsemax.
:mod:`~softmax_dispersion.empirical.model`, :mod:`~softmax_dispersion.empirical.training`
    One attention head per seed, trained side by side as one ensemble.
:mod:`~softmax_dispersion.empirical.evaluation`, :mod:`~softmax_dispersion.empirical.bound_check`
    Chunked measurement at any size, and T1 checked on every row with T12's tolerance.
:mod:`~softmax_dispersion.empirical.experiment`, :mod:`~softmax_dispersion.empirical.report`
    Run folders (checkpoints, resume), the report, the paired tests and the figures.

The quick preset, as ``experiment max-retrieval --preset quick`` runs it:

>>> from softmax_dispersion.empirical import preset
>>> preset("quick").normalisers
('softmax', 'adaptive_temperature', 'ssmax')
"""

from __future__ import annotations

from softmax_dispersion.empirical.bound_check import BoundCheck, check_t1
from softmax_dispersion.empirical.config import PRESETS, ExperimentConfig, preset
from softmax_dispersion.empirical.evaluation import Evaluation, evaluate
from softmax_dispersion.empirical.experiment import ExperimentError, run_experiment
from softmax_dispersion.empirical.model import MaxRetrievalModel
from softmax_dispersion.empirical.normalisers import NORMALISERS, make_normaliser
from softmax_dispersion.empirical.report import write_report
from softmax_dispersion.empirical.statistics import summarise
from softmax_dispersion.empirical.task import max_retrieval_batch
from softmax_dispersion.empirical.training import TrainingRun, train

__all__ = [
    "NORMALISERS",
    "PRESETS",
    "BoundCheck",
    "Evaluation",
    "ExperimentConfig",
    "ExperimentError",
    "MaxRetrievalModel",
    "TrainingRun",
    "check_t1",
    "evaluate",
    "make_normaliser",
    "max_retrieval_batch",
    "preset",
    "run_experiment",
    "summarise",
    "train",
    "write_report",
]
