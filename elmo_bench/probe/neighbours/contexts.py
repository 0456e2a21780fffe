"""The query contexts of probe neighbours: every sense-tagged SemCor word of a query lemma, grouped by (lemma,
WordNet pos), since a noun and a verb of one lemma never share a sense; and the rule that picks the default words.

A context is compared only with contexts of its own group in *other* sentences (two uses of a word in one sentence
share their context, which would make any contextual layer agree for free)."""
from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from elmo_bench.base.errors import DataError
from elmo_bench.probe.lib.semcor import SenseSpan, WsdSentence

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Context:
    """One tagged word: ``sentence`` indexes the encoded sentences, tokens [start, end), its sense keys."""

    sentence: int
    start: int
    end: int
    keys: tuple[str, ...]


@dataclass
class Group:
    """Every context of one lemma and pos, in SemCor order."""

    lemma: str
    pos: str
    contexts: list[Context] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.lemma}.{self.pos}"

    def most_frequent_key(self) -> str:
        """The key that tags most of the group's words (a word with several keys counts for each); ties: the
        smallest key."""
        counts = Counter(key for c in self.contexts for key in c.keys)
        return min(counts, key=lambda key: (-counts[key], key))


@dataclass
class Queries:
    """The groups found and the sentences they need (each once, in SemCor order)."""

    groups: list[Group]
    sentences: list[WsdSentence]


def parse_word(word: str) -> tuple[str, str | None]:
    """``play`` → ("play", None): every pos; ``play.n`` → ("play", "n")."""
    lemma, dot, pos = word.lower().rpartition(".")
    return (lemma, pos) if dot else (pos, None)


def _wanted(span: SenseSpan, words: Sequence[tuple[str, str | None]]) -> bool:
    return any(span.lemma == lemma and pos in (None, span.pos) for lemma, pos in words)


def collect(semcor: Sequence[WsdSentence], words: Sequence[str], max_contexts: int | None,
            where: str | Path) -> Queries:
    """The groups of ``words`` in ``semcor`` that occur in at least two sentences (else nothing to compare), their
    contexts indexing the sentences they need; one DataError line when no word has such a group, one warning line
    naming the words that have none."""
    parsed = [parse_word(w) for w in words]
    groups: dict[tuple[str, str], Group] = {}
    for i, sentence in enumerate(semcor):
        for span in sentence.spans:
            if _wanted(span, parsed):
                group = groups.setdefault((span.lemma, span.pos), Group(span.lemma, span.pos))
                if max_contexts is None or len(group.contexts) < max_contexts:
                    group.contexts.append(Context(i, span.start, span.end, span.keys))
    kept = [g for g in groups.values() if len({c.sentence for c in g.contexts}) >= 2]
    if not kept:
        raise DataError(f"probe.words: none of {', '.join(words)} is a sense-tagged lemma in two or more "
                        f"sentences of SemCor ({where}); expected SemCor lemmas such as play or time.n")

    def rank(lemma: str, pos: str | None) -> int:
        return min(i for i, (w, p) in enumerate(parsed) if w == lemma and p in (None, pos))

    missing = [w for w, (lemma, pos) in zip(words, parsed)
               if not any(g.lemma == lemma and pos in (None, g.pos) for g in kept)]
    if missing:
        log.warning("probe.words: %s not sense-tagged in two or more SemCor sentences: left out", ", ".join(missing))
    kept.sort(key=lambda g: (rank(g.lemma, g.pos), g.pos))
    order = sorted({c.sentence for g in kept for c in g.contexts})
    index = {i: n for n, i in enumerate(order)}
    for g in kept:
        g.contexts = [Context(index[c.sentence], c.start, c.end, c.keys) for c in g.contexts]
    return Queries(kept, [semcor[i] for i in order])


def ambiguous_lemmas(semcor: Sequence[WsdSentence], count: int = 4, pos: str = "n", share: float = 0.25,
                     leave_out: Sequence[str] = ("play",)) -> list[str]:
    """The default words' rule: the ``count`` most frequent ``pos`` lemmas of SemCor (by tagged words, each counted
    once by its first key; ties by lemma) whose two most frequent senses each tag at least ``share`` of them."""
    senses: dict[str, Counter] = {}
    for sentence in semcor:
        for span in sentence.spans:
            if span.pos == pos and span.lemma not in leave_out:
                senses.setdefault(span.lemma, Counter())[span.keys[0]] += 1
    found = []
    for lemma, counts in senses.items():
        total, top = sum(counts.values()), [n for _, n in counts.most_common(2)]
        if len(top) == 2 and min(top) >= share * total:
            found.append((-total, lemma))
    return [lemma for _, lemma in sorted(found)[:count]]
