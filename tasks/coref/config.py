"""Task coref's ``task.head`` (kwargs of CorefHead): each key's type (Hydra checks it at composition,
elmo_bench.engine.config_schema), range (checked before a run reads anything, elmo_bench.engine.config_check)
and CPU-sized default, written here only (this folder's conf/task/coref.yaml sets none; head=paper and budget=cpu
override). Torch-free: composing a config imports no model."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from elmo_bench.base.ranges import ranged
from elmo_bench.tasks.declaration import TaskDeclaration


@dataclass(frozen=True)
class HeadConfig:
    """``task.head`` of task coref, its defaults the CPU-sized head (a list's range holds for each item)."""

    #: keys only conf/head_preset/paper_coref.yaml sets (left out of the schema, so the default config lacks them)
    PRESET_ONLY: ClassVar[tuple[str, ...]] = ("char_dim", "char_filters", "char_widths")

    hidden: int | None = ranged(100, int, 1)                  # paper: 200 per direction, 1 BiLSTM layer
    lstm_dropout: float | None = ranged(0.2, float, 0, 1, high_open=True)     # paper: 0.2
    lexical_dropout: float | None = ranged(0.5, float, 0, 1, high_open=True)  # paper: 0.5 on the word vectors
    max_span_width: int | None = ranged(10, int, 1)           # paper: 10
    feature_dim: int | None = ranged(20, int, 1)              # paper: 20 (width, distance, speaker, genre embeddings)
    ffnn_dim: int | None = ranged(150, int, 1)                # paper: 150
    ffnn_layers: int | None = ranged(2, int, 0)               # paper: 2
    ffnn_dropout: float | None = ranged(0.2, float, 0, 1, high_open=True)     # paper: 0.2
    spans_per_word: float | None = ranged(0.4, float, 0, low_open=True)       # paper: 0.4
    max_antecedents: int | None = ranged(50, int, 1)          # paper: 250
    max_segment_len: int | None = ranged(128, int, 1)         # BiLSTM runs per sentence; longer ones are cut
    use_speakers: bool | None = False                         # paper (OntoNotes): true; LitBank has no speakers
    use_genres: bool | None = False                           # paper (OntoNotes): true; LitBank has no genres
    # paper: true (8-dim chars, 50 filters of widths 3, 4, 5); cheap now that the CNN runs once per distinct word
    # of a document
    char_cnn: bool | None = True
    # PRESET_ONLY: no default (the preset's own values)
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
