"""The softmax vocabulary in bilm-tf's format: one token a line, ``<S>``, ``</S>``, ``<UNK>`` first, then the
words from most to least frequent (the order matters: the log-uniform sampler assumes id ~ frequency rank).

Counts come with the vocabulary (``counts``) so that the unigram reference perplexity uses the same vocabulary;
a vocabulary read from a file without counts has none.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from elmo_bench.base.errors import DataError

BOS, EOS, UNK = "<S>", "</S>", "<UNK>"
SPECIALS = (BOS, EOS, UNK)


@dataclass
class Vocab:
    tokens: list[str]
    counts: list[int] | None = None  # training-target counts, aligned with tokens (<S>, </S> = sentences)
    index: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.index = {t: i for i, t in enumerate(self.tokens)}

    def __len__(self) -> int:
        return len(self.tokens)

    @property
    def bos(self) -> int:
        return self.index[BOS]

    @property
    def eos(self) -> int:
        return self.index[EOS]

    @property
    def unk(self) -> int:
        return self.index[UNK]

    def id(self, token: str) -> int:
        return self.index.get(token, self.index[UNK])

    def encode(self, tokens: Sequence[str]) -> list[int]:
        return [self.id(t) for t in tokens]

    def save(self, path: str | Path) -> None:
        from elmo_bench.base.atomic import atomic_write_text

        atomic_write_text(path, "".join(t + "\n" for t in self.tokens))

    @classmethod
    def load(cls, path: str | Path) -> "Vocab":
        """Read a bilm-tf vocab file (one token a line); it must contain <S>, </S> and <UNK>."""
        path = Path(path)
        if not path.exists():
            raise DataError(f"{path}: vocabulary file not found")
        tokens: list[str] = []
        seen: set[str] = set()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            token = line.strip()
            if not token:
                continue
            if len(token.split()) != 1:
                raise DataError(f"{path}: line {number}: expected one token, found {line!r}")
            if token in seen:
                raise DataError(f"{path}: line {number}: duplicate token {token!r}")
            seen.add(token)
            tokens.append(token)
        missing = [s for s in SPECIALS if s not in seen]
        if missing:
            raise DataError(f"{path}: vocabulary lacks the special tokens {missing} (expected <S>, </S>, <UNK>)")
        return cls(tokens)


def count_tokens(sentences: Iterable[Sequence[str]]) -> tuple[Counter, int]:
    """Word counts and the number of sentences."""
    counts: Counter = Counter()
    n = 0
    for sentence in sentences:
        counts.update(sentence)
        n += 1
    return counts, n


def build_vocab(counts: Counter, n_sentences: int, min_count: int = 1, max_size: int | None = None) -> Vocab:
    """Specials first, then words with count >= min_count by decreasing count (ties: alphabetical), at most
    ``max_size`` entries in all. ``<UNK>``'s count is the mass of the words left out."""
    words = sorted((w for w, c in counts.items() if c >= min_count and w not in SPECIALS),
                   key=lambda w: (-counts[w], w))
    if max_size is not None:
        words = words[: max(0, max_size - len(SPECIALS))]
    kept = sum(counts[w] for w in words)
    unk = sum(counts.values()) - kept - sum(counts.get(s, 0) for s in SPECIALS)
    return Vocab([*SPECIALS, *words], [n_sentences, n_sentences, unk, *(counts[w] for w in words)])
