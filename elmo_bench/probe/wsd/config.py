"""Probe ``wsd``: sense centroids per layer from SemCor, 1-nearest-neighbour on the Raganato et al. (2017)
evaluation sets (paper Table 5; elmo_bench.probe.wsd.centroids). Torch-free."""
from __future__ import annotations

from dataclasses import dataclass, field

from elmo_bench.base.errors import ConfigError
from elmo_bench.base.ranges import ranged
from elmo_bench.probe.declaration import ProbeCommand, ProbeDeclaration
from elmo_bench.probe.probe_cost import SplitCount
from elmo_bench.probe.settings import dataset

#: the evaluation sets of Raganato et al.'s framework (elmo_bench.probe.wsd.data.EVAL_SETS, written here torch-free)
EVAL_SETS = ("senseval2", "senseval3", "semeval2007", "semeval2013", "semeval2015", "ALL")
#: below ``paths.data_root``
SEMCOR = "wsd/semcor3.0_google_original_format"
EVAL_ROOT = "wsd/WSD_Evaluation_Framework/Evaluation_Datasets"
#: SemCor 3.0 (train) and Raganato et al.'s evaluation sets, counted by elmo_bench.probe.wsd.data's readers
WSD_SIZES = {"train": SplitCount(37087, 817823, 25265575), "senseval2": SplitCount(242, 5829, 167715),
             "senseval3": SplitCount(352, 5640, 143994), "semeval2007": SplitCount(135, 3219, 102827),
             "semeval2013": SplitCount(306, 8533, 305305), "semeval2015": SplitCount(138, 2643, 69741),
             "ALL": SplitCount(1173, 25864, 789582)}


@dataclass(frozen=True)
class WsdSettings:
    """``probe.<key>`` of probe wsd (``elmo-bench probe-wsd``'s flags)."""

    semcor: str | None = dataset(SEMCOR)        # SemCor 3.0 tagfiles directory
    eval_root: str | None = dataset(EVAL_ROOT)  # the framework's Evaluation_Datasets directory
    sets: list[str] = field(default_factory=lambda: list(EVAL_SETS))   # the evaluation sets scored
    max_train_sentences: int | None = ranged(None, int, 1, optional=True)   # embed only the first N SemCor
    #                                                                         sentences (null: all of SemCor; the
    #                                                                         most-frequent-sense counts use all)
    wordnet: str | None = "/usr/share/wordnet"  # WordNet 3.0 database directory (Debian: apt-get install -y
    #                                             wordnet-base); null: no first-sense fallback for lemmas SemCor
    #                                             lacks and no WordNet baseline row
    wordnet_work: str | None = None             # where the database is copied for nltk's reader (with a lexnames
    #                                             file); null: <repo>/.cache/nltk_data

    def check(self) -> None:
        if not self.sets or any(not str(s).strip() for s in self.sets):
            raise ConfigError(f"config: probe.sets expected evaluation set names (e.g. {', '.join(EVAL_SETS)}), "
                              f"found {list(self.sets)}")


PROBE = ProbeDeclaration("wsd", ".probe:run", WsdSettings, data="semcor", predicts="a WordNet sense per tagged word",
                         record_task="wsd",
                         sentences=".cost:sentences", cost=".cost:cost", documented=WSD_SIZES,
                         scorer=".metric:SCORER",   # elmo-bench score wsd GOLD_KEY PRED_KEY
                         command=ProbeCommand("probe-wsd", "WSD probe of every layer (Table 5): an alias of run.py "
                                              "probe=wsd", run={"max_segment": None}, random_init=False,
                                              out_required=True),
                         report=(".report:SECTION",))
