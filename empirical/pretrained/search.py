"""A search for each head's largest logit spread over token sequences.

The certificates bound every head from above; the search brackets them from below, with
spreads the real model produces on real token sequences.  In order, within a time
budget:

1. **repeated tokens**: one token ``n`` times, for candidate tokens (the special tokens
   and the tokens whose embeddings are extreme in norm) at several lengths up to 512;
2. **two tokens**: the best repeated tokens paired, half a sequence each;
3. **random starts**: random sequences at the gradient stage's length;
4. **gradient-guided swaps** (as in greedy coordinate gradient searches): for every head,
   the gradient of its largest row spread with respect to the one-hot tokens of its best
   sequence of that length (through the embedding: ``(e_v − e_now)·∇``) ranks, per position, the
   ``top_k`` tokens other than the one there whose swap raises the spread most to first
   order; ``swaps`` single-token swaps drawn from those (positions in proportion to their
   best gain) are run through the model (all heads of a layer in one batch, each forward
   pass stopped at that layer) and every head keeps the best sequence found;
5. **gradient from the best** (the last ``refine_share`` of the time left): the same swaps,
   each round for the ``refine_heads`` heads whose best spread found is the smallest
   multiple of their *reference* (given, or by default the largest spread of the plain
   sequences the search was given as ``starts`` and of its own random starts; the probe
   gives its random inputs' spreads), each from the best sequence it knows — its own or
   a start (the probe's text, repeated and random inputs) — whatever its length (up to 512;
   heads of one layer and one length share a batch, with fewer swaps the longer the
   sequence).  Spreads grow with the length (more keys to be extreme), so a head whose
   best plain sequence is long can only be beaten near that length; and the time goes
   where the search is weakest against what plain tokens reach.

A head's spread on a sequence is its largest row spread ``max_rows (max e − min e)``
over every position.  Every sequence evaluated is offered to every head; the ``starts``
are not (they are the baseline the search is held to, and only its own sequences count
as found by it), and every swap changes a token, so a head beats its reference only with
a sequence the search made.  Nothing here is certified: the search gives lower ends of
brackets.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from softmax_dispersion.empirical.pretrained.capture import CAPTURE, _recorders, _register
from softmax_dispersion.empirical.pretrained.measure import sequence_spreads

__all__ = ["SearchConfig", "SearchResult", "TokenSearch", "head_spreads"]

_Pool = tuple[np.ndarray, np.ndarray, np.ndarray]
"""Sequences, their token types and their spreads ``[count, layers, heads]``."""


@dataclass(frozen=True)
class SearchConfig:
    """What the search runs (the defaults are the probe's)."""

    seconds: float = 240.0
    """The time budget; no new stage or round starts after it."""
    repeat_lengths: tuple[int, ...] = (32, 128, 512)
    """Every candidate token at the first length; each head's best few at the next ones."""
    repeat_tokens: int = 96
    """Tokens tried repeated: the special tokens, then the smallest- and largest-norm."""
    pair_tokens: int = 4
    """Each head's best repeated tokens, paired with each other; half as many go on to the
    second length, a quarter to the third, and so on (at least one)."""
    layers: tuple[int, ...] | None = None
    """The layers whose heads get gradient-guided swaps (all when None)."""
    gradient_length: int = 32
    random_starts: int = 64
    """Random sequences at the gradient stage's length: with the repeated tokens of that
    length, the pool each head's swaps start from (its best sequence there)."""
    top_k: int = 16
    swaps: int = 12
    """Swaps per head and round at the gradient stage's length; at a longer length ``n``
    ``swaps·gradient_length/n`` (the same tokens), at least ``least_swaps``."""
    least_swaps: int = 4
    rounds: int = 40
    """Rounds of each gradient stage at most."""
    refine_share: float = 0.5
    """The share of the time left after the first gradient round that goes to the
    weakest heads' best sequences (stage 5)."""
    refine_heads: int = 6
    """Heads per round of stage 5."""
    seed: int = 0

    def __post_init__(self) -> None:
        if self.seconds < 0 or self.rounds < 0:
            raise ValueError("seconds and rounds must be >= 0")
        if not 0 <= self.refine_share <= 1:
            raise ValueError("refine_share must lie in [0, 1]")
        if any(not 3 <= n <= 512 for n in self.repeat_lengths) or not (
            3 <= self.gradient_length <= 512
        ):
            raise ValueError("search lengths must lie in 3..512")
        for name in (
            "repeat_tokens",
            "pair_tokens",
            "top_k",
            "swaps",
            "least_swaps",
            "refine_heads",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")


@dataclass
class SearchResult:
    """The best sequence and spread found for every head, and where it came from."""

    spreads: np.ndarray
    """``[layers, heads]``: the largest spread found (float32 forward pass)."""
    sequences: list[list[np.ndarray]]
    """Per head, a sequence of token ids attaining it."""
    token_types: list[list[np.ndarray]]
    """Per head, the token types of that sequence."""
    stage: list[list[str]]
    """Per head, the stage that found it."""
    by_stage: dict[str, np.ndarray] = field(default_factory=dict)
    """Per stage, ``[layers, heads]``: the best spread that stage alone found."""
    reference: np.ndarray | None = None
    """``[layers, heads]``: the spreads stage 5 holds each head to (by default the largest
    spread of the plain sequences: the starts given and the search's random starts)."""
    evaluated: int = 0
    rounds: int = 0
    refine_rounds: int = 0
    seconds: float = 0.0

    def offer(
        self,
        stage: str,
        sequences: np.ndarray,
        types: np.ndarray,
        spreads: np.ndarray,
    ) -> None:
        """Let every head adopt the best of ``sequences`` (``spreads``: ``[count, L, H]``)."""
        self.evaluated += len(sequences)
        best = spreads.max(axis=0)
        if stage in self.by_stage:
            self.by_stage[stage] = np.maximum(self.by_stage[stage], best)
        else:
            self.by_stage[stage] = best.copy()
        winner = spreads.argmax(axis=0)
        improved = best > self.spreads
        for layer, head in zip(*np.nonzero(improved), strict=True):
            i = winner[layer, head]
            self.spreads[layer, head] = best[layer, head]
            self.sequences[layer][head] = np.asarray(sequences[i]).copy()
            self.token_types[layer][head] = np.asarray(types[i]).copy()
            self.stage[layer][head] = stage


def _best_of(pool: Sequence[_Pool]) -> dict[tuple[int, int], tuple[np.ndarray, np.ndarray, float]]:
    """Per head ``(layer, head)``: the sequence, types and spread of its best in ``pool``
    (sequences of any lengths)."""
    best: dict[tuple[int, int], tuple[np.ndarray, np.ndarray, float]] = {}
    for sequences, types, spreads in pool:
        winner = spreads.argmax(axis=0)
        for (layer, head), i in np.ndenumerate(winner):
            value = float(spreads[i, layer, head])
            if (layer, head) not in best or value > best[(layer, head)][2]:
                best[(layer, head)] = (sequences[i], types[i], value)
    return best


def head_spreads(
    model: object, input_ids: torch.Tensor, token_types: torch.Tensor | None = None
) -> np.ndarray:
    """Each sequence's largest row spread in every head, ``[batch, layers, heads]``."""
    if token_types is None:
        return sequence_spreads(model, input_ids)
    return sequence_spreads(model, input_ids, token_types)


class _Recorder:
    """Collects each layer's logits with their graph (for gradients)."""

    def __init__(self) -> None:
        self.logits: dict[int, torch.Tensor] = {}

    def __call__(self, layer: int, logits: torch.Tensor, weights: torch.Tensor) -> None:
        self.logits[layer] = logits


def _truncated_logits(
    model: object, embeds: torch.Tensor, types: torch.Tensor, last_layer: int
) -> dict[int, torch.Tensor]:
    """Run the model's embeddings and layers ``0 … last_layer`` on ``inputs_embeds``;
    every layer's logits, differentiable."""
    _register()
    bert = model
    layer_of = {id(layer.attention.self): i for i, layer in enumerate(bert.encoder.layer)}  # type: ignore[attr-defined]
    recorder = _Recorder()
    previous = bert.config._attn_implementation  # type: ignore[attr-defined]
    bert.set_attn_implementation(CAPTURE)  # type: ignore[attr-defined]
    _recorders.append((recorder, layer_of, True))
    try:
        hidden = bert.embeddings(inputs_embeds=embeds, token_type_ids=types)  # type: ignore[attr-defined]
        for layer in bert.encoder.layer[: last_layer + 1]:  # type: ignore[attr-defined]
            hidden = layer(hidden)
            hidden = hidden[0] if isinstance(hidden, tuple) else hidden
    finally:
        _recorders.pop()
        bert.set_attn_implementation(previous)  # type: ignore[attr-defined]
    return recorder.logits


def _spread(logits: torch.Tensor) -> torch.Tensor:
    """``[batch, heads]``: each head's largest row spread (differentiable almost everywhere)."""
    return (logits.amax(-1) - logits.amin(-1)).amax(-1)


class TokenSearch:
    """The search over one model; see the module docstring.

    Parameters
    ----------
    model
        A transformers BERT model.
    vocabulary_size
        Token ids ``0 … vocabulary_size − 1`` are all allowed (the certificates cover
        every input, special tokens included).
    special
        Token ids tried first in the repeated stage.
    config
    log
        Called with a line per stage.
    """

    def __init__(
        self,
        model: object,
        vocabulary_size: int,
        special: Sequence[int],
        config: SearchConfig | None = None,
        log: Callable[[str], None] = lambda line: None,
    ) -> None:
        self.model = model
        self.config = config or SearchConfig()
        self.vocabulary_size = vocabulary_size
        self.special = list(dict.fromkeys(int(s) for s in special))
        self.log = log
        embeddings = model.embeddings.word_embeddings.weight  # type: ignore[attr-defined]
        self.embedding = embeddings.detach()
        self.layers = len(model.encoder.layer)  # type: ignore[attr-defined]
        self.heads = int(model.config.num_attention_heads)  # type: ignore[attr-defined]

    def _evaluate(self, sequences: np.ndarray, types: np.ndarray, tokens: int = 8192) -> np.ndarray:
        step = max(1, tokens // sequences.shape[1])
        out = []
        for start in range(0, len(sequences), step):
            ids = torch.as_tensor(sequences[start : start + step])
            kinds = torch.as_tensor(types[start : start + step])
            out.append(head_spreads(self.model, ids, kinds))
        return np.concatenate(out)

    def _candidate_tokens(self) -> list[int]:
        norms = self.embedding.double().norm(dim=1).numpy()
        order = np.argsort(norms)
        count = max(0, self.config.repeat_tokens - len(self.special))
        small = order[: (count + 1) // 2].tolist()
        large = order[::-1][: count // 2].tolist()
        return list(dict.fromkeys(self.special + small + large))[: self.config.repeat_tokens]

    def run(
        self,
        result: SearchResult | None = None,
        seeds: Sequence[tuple[str, np.ndarray, np.ndarray]] = (),
        starts: Sequence[_Pool] = (),
        reference: np.ndarray | None = None,
    ) -> SearchResult:
        """Search every head.

        ``seeds`` (stage, sequences, types) are offered first, as found by that stage.
        ``starts`` (sequences, types, spreads ``[count, layers, heads]``) are plain
        sequences already measured (the probe's inputs): the gradient stages may start
        from them and are held to them, but they are not offered (a head's result is
        what the search itself found).  ``reference`` (``[layers, heads]``) is what each
        head is held to in stage 5; the largest spread of the starts and of the search's
        own random starts when None.
        """
        clock = time.perf_counter()
        deadline = clock + self.config.seconds
        rng = np.random.default_rng(self.config.seed)
        if result is None:
            empty = [[np.zeros(0, np.int64) for _ in range(self.heads)] for _ in range(self.layers)]
            result = SearchResult(
                spreads=np.full((self.layers, self.heads), -np.inf),
                sequences=[list(r) for r in empty],
                token_types=[list(r) for r in empty],
                stage=[["" for _ in range(self.heads)] for _ in range(self.layers)],
            )
        for stage, sequences, types in seeds:
            result.offer(stage, sequences, types, self._evaluate(sequences, types))
        parameters = list(self.model.parameters())  # type: ignore[attr-defined]
        needed = [p.requires_grad for p in parameters]
        for p in parameters:  # gradients flow to the inputs only
            p.requires_grad_(False)
        try:
            pool = self._repeated(result, deadline)
            if time.perf_counter() < deadline:
                own = self._random_starts(result, rng)
                plain = [*starts, own]
                result.reference = (
                    np.max([p[2].max(axis=0) for p in plain], axis=0)
                    if reference is None
                    else np.asarray(reference, dtype=np.float64)
                )
                n = self.config.gradient_length
                pool += [own, *(p for p in starts if p[0].shape[1] == n)]
                self._gradient(result, rng, deadline, pool, plain)
        finally:
            for p, flag in zip(parameters, needed, strict=True):
                p.requires_grad_(flag)
        result.seconds += time.perf_counter() - clock
        return result

    def _repeated(self, result: SearchResult, deadline: float) -> list[_Pool]:
        """Repeated tokens at the shortest length, then each head's best few at the longer
        lengths; and pairs of each head's best tokens at the shortest.  Returns what ran at
        the gradient stage's length."""
        tokens = np.array(self._candidate_tokens())
        lengths = sorted(self.config.repeat_lengths)
        spreads = None
        pool: list[_Pool] = []
        for i, n in enumerate(lengths):
            if time.perf_counter() > deadline:
                return pool
            if i > 0 and spreads is not None:
                keep = max(1, self.config.pair_tokens >> i)
                top = np.argsort(-spreads.reshape(len(tokens), -1), axis=0)[:keep]
                tokens = tokens[np.unique(top)]
            sequences = np.repeat(tokens[:, None], n, axis=1)
            types = np.zeros_like(sequences)
            spreads = self._evaluate(sequences, types)
            result.offer("repeated token", sequences, types, spreads)
            self.log(f"search: {len(tokens)} repeated tokens at n = {n}")
            if n == self.config.gradient_length:
                pool.append((sequences, types, spreads))
            if i == 0:
                pair = self._pairs(result, tokens, spreads, n, deadline)
                if pair is not None and n == self.config.gradient_length:
                    pool.append(pair)
        return pool

    def _random_starts(self, result: SearchResult, rng: np.random.Generator) -> _Pool:
        n = self.config.gradient_length
        sequences = rng.integers(0, self.vocabulary_size, size=(self.config.random_starts, n))
        types = np.zeros_like(sequences)
        spreads = self._evaluate(sequences, types)
        result.offer("random start", sequences, types, spreads)
        return sequences, types, spreads

    def _pairs(
        self,
        result: SearchResult,
        tokens: np.ndarray,
        spreads: np.ndarray,
        n: int,
        deadline: float,
    ) -> _Pool | None:
        """Pairs of each head's best repeated tokens, half a sequence each."""
        top = np.argsort(-spreads.reshape(len(tokens), -1), axis=0)[: self.config.pair_tokens]
        pairs = sorted(
            {(int(tokens[i]), int(tokens[j])) for column in top.T for i in column for j in column}
            - {(int(t), int(t)) for t in tokens}
        )
        if not pairs or time.perf_counter() > deadline:
            return None
        half = n // 2
        sequences = np.array([[a] * half + [b] * (n - half) for a, b in pairs], dtype=np.int64)
        types = np.zeros_like(sequences)
        spreads = self._evaluate(sequences, types)
        result.offer("two tokens", sequences, types, spreads)
        self.log(f"search: {len(pairs)} two-token sequences at n = {n}")
        return sequences, types, spreads

    def _searched_layers(self) -> list[int]:
        layers = self.config.layers
        return list(range(self.layers)) if layers is None else list(layers)

    def _gradient(
        self,
        result: SearchResult,
        rng: np.random.Generator,
        deadline: float,
        pool: list[_Pool],
        plain: list[_Pool],
    ) -> None:
        """Stage 4 (every head at the gradient stage's length), then stage 5 (the weakest
        heads, each from the best sequence it knows)."""
        config = self.config
        n = config.gradient_length
        current = _best_of(pool)
        scores = {key: value[2] for key, value in current.items()}
        split: float | None = None
        for _ in range(config.rounds):
            if time.perf_counter() > (deadline if split is None else split):
                break
            for layer in self._searched_layers():
                if time.perf_counter() > deadline:
                    break
                keys = [(layer, h) for h in range(self.heads)]
                self._swap_round(result, rng, keys, current, scores, config.swaps, "gradient")
            result.rounds += 1
            if split is None:  # the first round shows what a round costs; stage 5 gets its share
                now = time.perf_counter()
                split = now + (deadline - now) * (1 - config.refine_share)
        self.log(f"search: {result.rounds} gradient rounds at n = {n}")
        if config.refine_share == 0:
            return
        # Stage 5: each head from the best sequence it knows, the search's own or a start.
        best_plain = _best_of(plain)
        for key in best_plain:
            layer, head = key
            own = float(result.spreads[layer, head])
            if best_plain[key][2] > max(own, scores.get(key, -np.inf)):
                current[key] = best_plain[key]
                scores[key] = best_plain[key][2]
            elif own > scores.get(key, -np.inf):
                sequence = result.sequences[layer][head]
                current[key] = (sequence, result.token_types[layer][head], own)
                scores[key] = own
        assert result.reference is not None
        reference = np.maximum(result.reference, 1e-12)
        heads = [(layer, h) for layer in self._searched_layers() for h in range(self.heads)]
        for _ in range(config.rounds):
            if time.perf_counter() > deadline:
                break
            # The weakest heads: the smallest multiple of what plain tokens reach.
            margin = {k: float(result.spreads[k]) / float(reference[k]) for k in heads}
            chosen = sorted(heads, key=lambda k: margin[k])[: config.refine_heads]
            groups: dict[tuple[int, int], list[tuple[int, int]]] = defaultdict(list)
            for key in chosen:
                groups[(key[0], len(current[key][0]))].append(key)
            # The weakest head's group first: the deadline may stop the round.
            for (_, length), keys in sorted(groups.items(), key=lambda g: margin[g[1][0]]):
                if time.perf_counter() > deadline:
                    break
                swaps = max(config.least_swaps, config.swaps * n // length)
                self._swap_round(result, rng, keys, current, scores, swaps, "gradient from best")
            result.refine_rounds += 1
        self.log(f"search: {result.refine_rounds} rounds on the weakest heads' best sequences")

    def _swap_round(
        self,
        result: SearchResult,
        rng: np.random.Generator,
        keys: list[tuple[int, int]],
        current: dict[tuple[int, int], tuple[np.ndarray, np.ndarray, float]],
        scores: dict[tuple[int, int], float],
        swaps: int,
        stage: str,
    ) -> None:
        """One round of gradient-guided swaps for ``keys`` (heads of one layer whose
        current sequences have one length), in one batch."""
        config = self.config
        layer = keys[0][0]
        heads = torch.as_tensor([h for _, h in keys])
        rows = torch.arange(len(keys))
        ids = torch.as_tensor(np.stack([current[k][0] for k in keys]))
        token_types = torch.as_tensor(np.stack([current[k][1] for k in keys]))
        n = ids.shape[1]
        embeds = self.embedding[ids].clone().requires_grad_(True)
        logits = _truncated_logits(self.model, embeds, token_types, layer)[layer]
        objective = _spread(logits)[rows, heads]
        objective.sum().backward()  # type: ignore[no-untyped-call]
        assert embeds.grad is not None
        with torch.no_grad():
            # First-order gain of putting token v at a position: (e_v − e_now)·∇.
            gain = embeds.grad @ self.embedding.T  # [keys, n, V]
            gain -= (embeds.grad * embeds).sum(-1, keepdim=True)
            # A swap must change the sequence: the token already there is no candidate.
            gain.scatter_(-1, ids[..., None], -torch.inf)
            top = gain.topk(config.top_k, dim=-1)
        tokens_top = top.indices.numpy()  # [keys, n, k]
        weight = np.maximum(top.values[..., 0].numpy(), 0.0) + 1e-12  # [keys, n]
        objective = objective.detach()
        candidates, candidate_types, owners = [], [], []
        for i, key in enumerate(keys):
            scores[key] = max(scores[key], float(objective[i]))
            sequence, types, _ = current[key]
            chance = weight[i] / weight[i].sum()
            for _ in range(swaps):
                position = int(rng.choice(n, p=chance))
                mutant = sequence.copy()
                mutant[position] = tokens_top[i, position, int(rng.integers(config.top_k))]
                candidates.append(mutant)
                candidate_types.append(types)
                owners.append(i)
        batch = np.stack(candidates)
        batch_types = np.stack(candidate_types)
        spreads = self._evaluate_upto(batch, batch_types, layer)
        result.offer(stage, batch, batch_types, spreads)
        owner = np.array(owners)
        own = spreads[np.arange(len(batch)), layer, heads.numpy()[owner]]
        for i, key in enumerate(keys):
            mine = np.flatnonzero(owner == i)
            best = mine[np.argmax(own[mine])]
            if own[best] > scores[key]:
                scores[key] = float(own[best])
                current[key] = (batch[best], batch_types[best], float(own[best]))

    def _evaluate_upto(self, sequences: np.ndarray, types: np.ndarray, layer: int) -> np.ndarray:
        """Spreads ``[count, layers, heads]`` with layers after ``layer`` left at −inf."""
        out = np.full((len(sequences), self.layers, self.heads), -np.inf)
        with torch.no_grad():
            ids = torch.as_tensor(sequences)
            embeds = self.embedding[ids]
            logits = _truncated_logits(self.model, embeds, torch.as_tensor(types), layer)
        for i, value in logits.items():
            out[:, i, :] = _spread(value).double().numpy()
        return out
