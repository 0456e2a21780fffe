"""The keys of conf/task/coref.yaml's ``head:`` block: their types (Hydra checks them at composition,
elmo_bench.engine.config_schema) and ranges (checked before a run reads anything, elmo_bench.engine.config_check).
The values live in the YAML only (kwargs of CorefHead); torch-free: composing a config imports no model."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from elmo_bench.base.ranges import ranged
from elmo_bench.tasks.declaration import TaskDeclaration


@dataclass(frozen=True)
class HeadConfig:
    """``task.head`` of task coref, in the order of conf/task/coref.yaml (a list's range holds for each item)."""

    #: keys only conf/head_preset/paper_coref.yaml sets (left out of the schema, so the default config lacks them)
    PRESET_ONLY: ClassVar[tuple[str, ...]] = ("char_dim", "char_filters", "char_widths")

    hidden: int | None = ranged(None, int, 1)
    lstm_dropout: float | None = ranged(None, float, 0, 1, high_open=True)
    lexical_dropout: float | None = ranged(None, float, 0, 1, high_open=True)
    max_span_width: int | None = ranged(None, int, 1)
    feature_dim: int | None = ranged(None, int, 1)
    ffnn_dim: int | None = ranged(None, int, 1)
    ffnn_layers: int | None = ranged(None, int, 0)
    ffnn_dropout: float | None = ranged(None, float, 0, 1, high_open=True)
    spans_per_word: float | None = ranged(None, float, 0, low_open=True)
    max_antecedents: int | None = ranged(None, int, 1)
    max_segment_len: int | None = ranged(None, int, 1)
    use_speakers: bool | None = None
    use_genres: bool | None = None
    char_cnn: bool | None = None
    char_dim: int | None = ranged(None, int, 1)
    char_filters: int | None = ranged(None, int, 1)
    char_widths: list[int] | None = ranged(None, int, 1)


#: task coref as the registry (elmo_bench.tasks.registry) finds it; numbers: the ELMo paper (Peters et al. 2018)
TASK = TaskDeclaration(
    "coref",
    ".task:CorefTask",
    HeadConfig,
    paper={"table1": {"metric": "average F1", "baseline": 67.2, "elmo": 70.4,
                       "previous_sota": ("Lee et al. (2017)", 67.2)}},
    paper_row=3,
    dataset_sizes={"conll2012_coref": {
        # CoNLL-2012 English (Pradhan et al. 2012), the split of Lee et al. (2017): documents (parts)
        "train": 2_802, "dev": 343, "test": 348,
        "source": "CoNLL-2012 English coreference (Pradhan et al. 2012): 2,802 / 343 / 348 documents; tokens per "
                  "document from the stand-in LitBank (longer documents than OntoNotes parts: an overestimate)"}},
)
