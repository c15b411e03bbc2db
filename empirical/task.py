"""The max-retrieval task: output the class of the highest-priority item in a set.

Each item is ``[priority, one-hot class]`` with the priority drawn from U(0, 1) and the
class uniform over ``classes``; the target is the class of the item whose priority is
largest.  Sets are generated on the fly, from a seeded :class:`torch.Generator`, on any
device and at any size.
"""

from __future__ import annotations

from typing import NamedTuple

import torch

__all__ = ["MaxRetrievalBatch", "gap_controlled_batch", "max_retrieval_batch"]


class MaxRetrievalBatch(NamedTuple):
    """A batch of sets and what the model must retrieve from each."""

    items: torch.Tensor
    """``(batch, n, 1 + classes)``: the priority, then the one-hot class."""
    target: torch.Tensor
    """``(batch,)``: the class of the highest-priority item."""
    top: torch.Tensor
    """``(batch,)``: the index of the highest-priority item."""


def max_retrieval_batch(
    batch: int,
    n: int,
    *,
    classes: int = 10,
    generator: torch.Generator,
    device: torch.device | str | None = None,
) -> MaxRetrievalBatch:
    """Draw ``batch`` sets of ``n`` items.

    Parameters
    ----------
    batch, n
        How many sets, and how many items in each (both ``>= 1``).
    classes
        The number of classes (``>= 2``).
    generator
        The source of randomness; it must live on ``device``.
    device
        Where the tensors are created (the generator's device by default).

    Returns
    -------
    MaxRetrievalBatch
        ``items`` of shape ``(batch, n, 1 + classes)`` in float32, and ``target`` and
        ``top`` of shape ``(batch,)``.

    Notes
    -----
    With priorities :math:`\\pi_i \\sim U(0, 1)` and classes :math:`c_i`, the target is
    :math:`c_{\\arg\\max_i \\pi_i}`.  Ties have probability zero in exact arithmetic
    and about :math:`n^2 2^{-25}` in float32; ``argmax`` then takes the first.

    Examples
    --------
    >>> import torch
    >>> data = max_retrieval_batch(2, 5, generator=torch.Generator().manual_seed(0))
    >>> data.items.shape, data.target.shape
    (torch.Size([2, 5, 11]), torch.Size([2]))
    >>> bool((data.items[..., 1:].argmax(-1).gather(1, data.top[:, None])[:, 0]
    ...       == data.target).all())
    True
    """
    if batch < 1 or n < 1:
        raise ValueError(f"batch and n must be >= 1, got batch={batch}, n={n}")
    if classes < 2:
        raise ValueError(f"classes must be >= 2, got {classes}")
    device = generator.device if device is None else torch.device(device)
    priority = torch.rand(batch, n, generator=generator, device=device)
    label = torch.randint(classes, (batch, n), generator=generator, device=device)
    items = torch.cat(
        (priority[..., None], torch.nn.functional.one_hot(label, classes).to(priority.dtype)),
        dim=-1,
    )
    top = priority.argmax(dim=-1)
    target = label.gather(1, top[:, None])[:, 0]
    return MaxRetrievalBatch(items, target, top)


def gap_controlled_batch(
    batch: int,
    n: int,
    *,
    lead: float,
    classes: int = 10,
    generator: torch.Generator,
    device: torch.device | str | None = None,
) -> MaxRetrievalBatch:
    """Draw ``batch`` sets of ``n`` items whose top priority leads the rest by ``lead``.

    Parameters
    ----------
    batch, n
        How many sets, and how many items in each (``n >= 2``).
    lead
        The gap, strictly between 0 and 1, between the top priority and every other.
    classes, generator, device
        As for :func:`max_retrieval_batch`.

    Returns
    -------
    MaxRetrievalBatch
        As :func:`max_retrieval_batch`, the top item at a uniformly random position.

    Notes
    -----
    The top priority is :math:`t \\sim U(\\mathrm{lead}, 1)`, the other :math:`n - 1` are
    i.i.d. :math:`U(0, t - \\mathrm{lead})`; classes are uniform.  So the sets are the
    uniform task conditioned on a lead of at least ``lead``, and T13's prediction for
    them integrates the logit map over :math:`[0, t - \\mathrm{lead})`.

    Examples
    --------
    >>> import torch
    >>> data = gap_controlled_batch(3, 50, lead=0.5, generator=torch.Generator().manual_seed(0))
    >>> top = data.items[torch.arange(3), data.top, 0]
    >>> others = data.items[..., 0].clone()
    >>> others[torch.arange(3), data.top] = -1
    >>> bool((top - others.amax(-1) >= 0.5).all())
    True
    """
    if batch < 1 or n < 2:
        raise ValueError(f"batch must be >= 1 and n >= 2, got batch={batch}, n={n}")
    if not 0 < lead < 1:
        raise ValueError(f"lead must lie strictly between 0 and 1, got {lead}")
    if classes < 2:
        raise ValueError(f"classes must be >= 2, got {classes}")
    device = generator.device if device is None else torch.device(device)
    top_priority = lead + (1 - lead) * torch.rand(batch, generator=generator, device=device)
    priority = (
        torch.rand(batch, n, generator=generator, device=device) * (top_priority - lead)[:, None]
    )
    top = torch.randint(n, (batch,), generator=generator, device=device)
    priority[torch.arange(batch, device=device), top] = top_priority
    label = torch.randint(classes, (batch, n), generator=generator, device=device)
    items = torch.cat(
        (priority[..., None], torch.nn.functional.one_hot(label, classes).to(priority.dtype)),
        dim=-1,
    )
    target = label.gather(1, top[:, None])[:, 0]
    return MaxRetrievalBatch(items, target, top)
