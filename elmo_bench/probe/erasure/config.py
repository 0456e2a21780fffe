"""Probe ``erasure``: per layer, LEACE (Belrose et al. 2023; the ``concept-erasure`` package's LeaceFitter) fitted
on the training split's features and one-hot labels, and how complete the erasure is: a linear probe fitted on
erased training features scored on erased test features, beside the majority class's share and the prior's bits,
and the rank of the change (k − 1 for k classes). ``probe.stream=true`` fits the erasers from batches of the
training split (no split's layers gathered; the scoring probe reads one layer's matrix at a time). Torch-free."""
from __future__ import annotations

from dataclasses import dataclass

from elmo_bench.base.ranges import ranged
from elmo_bench.probe.declaration import ProbeDeclaration
from elmo_bench.probe.lib.streamed import BATCH_TOKENS
from elmo_bench.probe.probe_cost import UD_EWT_SIZES
from elmo_bench.probe.settings import UD_LABELS, UdSettings, check_choice


@dataclass(frozen=True)
class ErasureSettings(UdSettings):
    """``probe.<key>`` of probe erasure; the LEACE settings are recorded with every eraser."""

    tags: str = "upos"                                   # the concept erased: upos | xpos | deprel
    l2: float = ranged(1e-4, float, 0)                   # the scoring probe's fixed L2
    max_iter: int = ranged(1000, int, 1)
    tol: float = ranged(1e-5, float, 0, low_open=True)
    svd_tol: float = ranged(1e-8, float, 0, low_open=True)   # LeaceFitter's (its default 0.01 drops rare classes)
    stream: bool = False             # LeaceFitter.update over batches (true) or once over the gathered layers (false)
    batch_tokens: int = ranged(BATCH_TOKENS, int, 1)     # tokens per streamed batch at most

    def check(self) -> None:
        check_choice("tags", self.tags, UD_LABELS)


PROBE = ProbeDeclaration("erasure", ".probe:run", ErasureSettings, data="ud_ewt",
                         predicts="a word's label before and after erasing it from a layer",
                         record_task="erasure_probe", sentences=".cost:sentences", cost=".cost:cost",
                         documented={s: UD_EWT_SIZES[s] for s in ("train", "test")},
                         # budget=cpu: the first 1,000 training sentences (issue 47's evidence size)
                         budgets={"cpu": {"max_train_sentences": 1000}},
                         report=(".report:SECTION",))
