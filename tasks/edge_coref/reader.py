"""edge_coref targets from LitBank (fold 0, tasks/coref/conf/data/litbank.yaml), read by the shared CoNLL-2012
coreference reader (elmo_bench/data/conll2012_coref.py: one example per document, clusters of inclusive spans): per
sentence, every pair of gold mentions inside it, in order (first mention before second), labelled ``1`` when both
belong to one entity and ``0`` otherwise, as jiant's OntoNotes extraction does; no cross-sentence pair, and a mention
that crosses a sentence boundary is left out. A sentence with fewer than two mentions has no target and is left out
(it would cost the encoder and the head time and change no score)."""
from __future__ import annotations

from itertools import combinations
from typing import Any, Mapping

from elmo_bench.data.conll2012_coref import read_split
from elmo_bench.data.edge import make_target
from elmo_bench.tasks.api import Example

SAME, DIFFERENT = "1", "0"


def sentence_mentions(document: Example) -> dict[int, list[tuple[int, int, int]]]:
    """Sentence id → its mentions (start, end exclusive, entity), document offsets, sorted by position."""
    sentence_of = document["sentence_ids"]
    out: dict[int, list[tuple[int, int, int]]] = {}
    for entity, cluster in enumerate(document["clusters"]):
        for start, end in cluster:
            if sentence_of[start] == sentence_of[end]:
                out.setdefault(sentence_of[start], []).append((start, end + 1, entity))
    return {k: sorted(v) for k, v in out.items()}


def document_examples(document: Example) -> list[Example]:
    """One example per sentence with at least one mention pair."""
    starts: dict[int, int] = {}
    for position, sentence in enumerate(document["sentence_ids"]):
        starts.setdefault(sentence, position)
    examples = []
    for sentence, mentions in sorted(sentence_mentions(document).items()):
        if len(mentions) < 2:
            continue
        first = starts[sentence]
        length = document["sentence_ids"].count(sentence)
        targets = [make_target((a[0] - first, a[1] - first), [SAME if a[2] == b[2] else DIFFERENT],
                               (b[0] - first, b[1] - first)) for a, b in combinations(mentions, 2)]
        examples.append({"id": f"{document['id']}:{sentence}", "tokens": document["tokens"][first:first + length],
                         "targets": targets})
    return examples


def read_native(data_cfg: Mapping[str, Any], split: str) -> list[Example]:
    return [ex for document in read_split(data_cfg, split) for ex in document_examples(document)]
