"""The probe's inputs: windows of real offline text, and synthetic token sequences.

Every sequence is framed as the model was trained: ``[CLS] tokens… [SEP]``, ``n``
positions in all, every position attended.

* ``text``: consecutive windows of a corpus available offline — by default the license
  texts Debian ships in ``/usr/share/common-licenses`` (Apache-2.0, GPL-3, MPL-2.0),
  else the license text of the running Python; any file with ``--text``.
* ``repeated``: one token repeated (so a head can only tell positions apart).
* ``random``: tokens drawn uniformly from the ordinary vocabulary (no special tokens).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "DEFAULT_CORPUS",
    "INPUT_KINDS",
    "Corpus",
    "default_corpus_files",
    "framed",
    "random_sequences",
    "read_corpus",
    "repeated_sequences",
    "text_windows",
]

DEFAULT_CORPUS: tuple[str, ...] = (
    "/usr/share/common-licenses/Apache-2.0",
    "/usr/share/common-licenses/GPL-3",
    "/usr/share/common-licenses/MPL-2.0",
)
"""The default corpus: license texts every Debian system ships (package base-files)."""

INPUT_KINDS: tuple[str, ...] = ("text", "repeated", "random")
"""The kinds of input the probe measures, in report order."""

#: Repeated-token inputs use these words (each one token in the model's vocabulary).
REPEATED_WORDS: tuple[str, ...] = ("the", "license", ".", "software")


@dataclass(frozen=True)
class Corpus:
    """Tokenised text and where it came from."""

    name: str
    """How the report names it."""
    files: tuple[str, ...]
    words: int
    token_ids: np.ndarray
    """The text's token ids, without special tokens."""


def default_corpus_files() -> tuple[Path, ...]:
    """The default corpus files present on this system.

    Debian's license texts when present, else the license text the Python standard
    library ships (``LICENSE.txt`` beside ``os.py``).
    """
    present = tuple(Path(p) for p in DEFAULT_CORPUS if Path(p).is_file())
    if present:
        return present
    fallback = Path(os.__file__).with_name("LICENSE.txt")
    return (fallback,) if fallback.is_file() else ()


def read_corpus(tokenizer: Any, files: Sequence[Path] | None = None) -> Corpus:
    """Read and tokenise ``files`` (the default corpus when None).

    Raises
    ------
    ValueError
        When no file is given and no default corpus is present, or the text holds
        fewer than 6 tokens; naming the files.
    """
    chosen = tuple(files) if files else default_corpus_files()
    if not chosen:
        raise ValueError("--text: no default corpus on this system; name a text file")
    texts = []
    for path in chosen:
        try:
            texts.append(Path(path).read_text(encoding="utf-8", errors="replace"))
        except OSError as error:
            raise ValueError(f"--text: cannot read {path}: {error.strerror}") from None
    text = "\n\n".join(texts)
    ids = np.asarray(tokenizer.encode(text, add_special_tokens=False).ids, dtype=np.int64)
    if ids.size < 6:
        raise ValueError(f"--text: {', '.join(map(str, chosen))} holds fewer than 6 tokens")
    if files:
        name = ", ".join(Path(p).name for p in chosen)
    elif str(chosen[0]).startswith("/usr/share/common-licenses"):
        name = "Debian's license texts (" + ", ".join(Path(p).name for p in chosen) + ")"
    else:
        name = f"Python's license text ({chosen[0]})"
    return Corpus(name, tuple(str(p) for p in chosen), len(text.split()), ids)


def framed(body: np.ndarray, cls: int, sep: int) -> np.ndarray:
    """``[CLS] body [SEP]`` for each row of ``body`` (``[batch, n − 2]``)."""
    batch = body.shape[0]
    return np.concatenate(
        [np.full((batch, 1), cls), body, np.full((batch, 1), sep)], axis=1
    ).astype(np.int64)


def text_windows(corpus: Corpus, n: int, count: int, cls: int, sep: int) -> np.ndarray:
    """Up to ``count`` windows of ``n − 2`` consecutive corpus tokens, framed.

    Windows start at evenly spaced offsets over the corpus (without overlap when the
    corpus is long enough); a corpus shorter than one window is repeated.

    Examples
    --------
    >>> corpus = Corpus("digits", (), 10, np.arange(10, 20))
    >>> text_windows(corpus, 5, 2, cls=1, sep=2).tolist()
    [[1, 10, 11, 12, 2], [1, 17, 18, 19, 2]]
    """
    width = n - 2
    ids = corpus.token_ids
    if ids.size < width:
        ids = np.resize(ids, width)
    starts = np.unique(np.linspace(0, ids.size - width, num=max(count, 1)).round().astype(int))
    body = np.stack([ids[s : s + width] for s in starts])
    return framed(body, cls, sep)


def repeated_sequences(tokenizer: Any, n: int, cls: int, sep: int) -> np.ndarray:
    """One framed sequence per word of :data:`REPEATED_WORDS`, that word ``n − 2`` times."""
    ids = [tokenizer.token_to_id(word) for word in REPEATED_WORDS]
    body = np.array([[i] * (n - 2) for i in ids if i is not None], dtype=np.int64)
    return framed(body, cls, sep)


def random_sequences(
    n: int, count: int, vocabulary: np.ndarray, rng: np.random.Generator, cls: int, sep: int
) -> np.ndarray:
    """``count`` framed sequences of tokens drawn uniformly from ``vocabulary``."""
    return framed(rng.choice(vocabulary, size=(count, n - 2)), cls, sep)
