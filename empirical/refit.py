"""Refitting the adaptive-temperature polynomial on this model's own heads.

The paper fitted its degree-4 polynomial ``P(H)`` to the inverse temperatures that
sharpened its trained head best, as a function of the head's entropy.  This repeats the
procedure on each softmax head trained here: on sets of every test size (drawn from a
stream of their own, never the test sets), the best ``β`` of a set is the one, on a grid,
that minimises the model's cross-entropy at the set's target with attention
``softmax(β e)``; ``P`` is the least-squares degree-4 fit of those ``β`` against the
entropy ``H`` of ``softmax(e)``.  The paper's exact criterion is not given; this one
asks for the ``β`` that makes the head most useful to its own predictor.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from softmax_dispersion.empirical.config import ExperimentConfig
from softmax_dispersion.empirical.evaluation import evaluation_chunks
from softmax_dispersion.empirical.model import MaxRetrievalModel
from softmax_dispersion.empirical.normalisers import rule_entropy

__all__ = ["BETA_GRID", "FIT_SETS", "FIT_SIZES", "refit_polynomials"]

BETA_GRID = tuple(1 + 0.1 * k for k in range(31))
"""The inverse temperatures tried per set: 1 to 4 in steps of 0.1."""

FIT_SETS = 64
"""Sets per size and seed the polynomial is fitted on."""

FIT_SIZES = 1024
"""The largest size fitted on (larger sets add little to the fit and much to the time)."""


@torch.no_grad()
def refit_polynomials(
    model: MaxRetrievalModel, config: ExperimentConfig, seeds: list[int], device: torch.device
) -> list[dict[str, Any]]:
    """Fit the rule's polynomial per member of a softmax ensemble.

    Returns
    -------
    list of dict
        Per member: ``coefficients`` (highest degree first, as the paper writes ``P``),
        the number of sets fitted on, and the fit's root-mean-square residual.

    Examples
    --------
    >>> from softmax_dispersion.empirical.config import preset
    >>> from softmax_dispersion.empirical.training import build_model
    >>> config = preset("quick", sizes=(4, 16), width=8)
    >>> model = build_model(config, "softmax", [0], torch.device("cpu")).eval()
    >>> fit = refit_polynomials(model, config, [0], torch.device("cpu"))
    >>> len(fit[0]["coefficients"]), fit[0]["sets"]
    (5, 128)
    """
    fit_config = _fit_config(config)
    entropies: list[list[float]] = [[] for _ in seeds]
    best: list[list[float]] = [[] for _ in seeds]
    betas = torch.tensor(BETA_GRID, dtype=torch.float32, device=device)
    for n in fit_config.sizes:
        for items, batch in evaluation_chunks(fit_config, seeds, n, device, stream="fit"):
            logits, values = model.attention_logits(items)
            entropy = rule_entropy(torch.softmax(logits.double(), dim=-1))
            shifted = logits - logits.amax(-1, keepdim=True)
            losses = []
            for beta in betas:
                weights = torch.softmax(beta * shifted, dim=-1)
                pooled = torch.einsum("mbn,mbnd->mbd", weights, values)
                scores = model.predictor(pooled)
                losses.append(
                    torch.nn.functional.cross_entropy(
                        scores.flatten(0, 1), batch.target.flatten(), reduction="none"
                    ).view(batch.target.shape)
                )
            chosen = betas[torch.stack(losses).argmin(dim=0)]
            for member in range(len(seeds)):
                entropies[member] += entropy[member].tolist()
                best[member] += chosen[member].double().tolist()
    fits = []
    for member in range(len(seeds)):
        h, b = np.array(entropies[member]), np.array(best[member])
        coefficients = np.polyfit(h, b, 4)
        residual = float(np.sqrt(np.mean((np.polyval(coefficients, h) - b) ** 2)))
        fits.append({"coefficients": coefficients.tolist(), "sets": int(h.size), "rms": residual})
    return fits


def _fit_config(config: ExperimentConfig) -> ExperimentConfig:
    from dataclasses import replace

    sizes = tuple(n for n in config.sizes if n <= FIT_SIZES) or config.sizes[:1]
    return replace(config, sizes=sizes, test_sets=FIT_SETS)
