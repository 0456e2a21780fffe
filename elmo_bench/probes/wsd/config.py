"""Probe ``wsd``: sense centroids per layer from SemCor, 1-nearest-neighbour on the Raganato et al. (2017)
evaluation sets (paper Table 5; elmo_bench.probe.wsd). Torch-free."""
from __future__ import annotations

from dataclasses import dataclass, field

from elmo_bench.base.errors import ConfigError
from elmo_bench.base.ranges import ranged
from elmo_bench.probe.declaration import ProbeDeclaration
from elmo_bench.probe.probe_cost import WSD_SIZES
from elmo_bench.probe.settings import dataset

#: the evaluation sets of Raganato et al.'s framework (elmo_bench.probe.wsd_data.EVAL_SETS, written here torch-free)
EVAL_SETS = ("senseval2", "senseval3", "semeval2007", "semeval2013", "semeval2015", "ALL")
#: below ``paths.data_root``
SEMCOR = "wsd/semcor3.0_google_original_format"
EVAL_ROOT = "wsd/WSD_Evaluation_Framework/Evaluation_Datasets"


@dataclass(frozen=True)
class WsdSettings:
    """``probe.<key>`` of probe wsd (``elmo-bench probe-wsd``'s flags)."""

    semcor: str | None = dataset(SEMCOR)        # SemCor 3.0 tagfiles directory; null: <paths.data_root>/SEMCOR
    eval_root: str | None = dataset(EVAL_ROOT)  # the framework's Evaluation_Datasets; null: <paths.data_root>/...
    sets: list[str] = field(default_factory=lambda: list(EVAL_SETS))
    max_train_sentences: int | None = ranged(None, int, 1, optional=True)   # embed the first N SemCor sentences
    wordnet: str | None = "/usr/share/wordnet"  # WordNet 3.0 (Debian's wordnet-base); null: no WordNet fallback/row
    wordnet_work: str | None = None             # where nltk's reader gets its copy; null: <repo>/.cache/nltk_data

    def check(self) -> None:
        if not self.sets or any(not str(s).strip() for s in self.sets):
            raise ConfigError(f"config: probe.sets expected evaluation set names (e.g. {', '.join(EVAL_SETS)}), "
                              f"found {list(self.sets)}")


PROBE = ProbeDeclaration("wsd", ".probe:run", WsdSettings, data="semcor", predicts="a WordNet sense per tagged word",
                         record_task="wsd",
                         sentences=".cost:sentences", cost=".cost:cost", report=(".report:SECTION",),
                         documented=WSD_SIZES)
