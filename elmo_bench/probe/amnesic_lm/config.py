"""Probe ``amnesic_lm``: what erasing a concept inside the biLM (elmo_bench.encoders.erasing, the erasers a
``probe=erasure`` run saved) does to the biLM's own language model, against erasing random directions of the same
rank: forward and backward perplexity through the shared softmax on UD EWT dev text, the mean KL to the un-erased
distribution and top-1 accuracy, for none / erased / random (``probe.seeds`` draws, mean), with a one-sided paired
bootstrap over dev sentences. Torch-free."""
from __future__ import annotations

from dataclasses import dataclass

from elmo_bench.base.errors import ConfigError
from elmo_bench.base.ranges import ranged
from elmo_bench.probe.declaration import ProbeDeclaration
from elmo_bench.probe.probe_cost import UD_EWT_SIZES
from elmo_bench.probe.settings import UdSettings, check_choice, dataset

CONCEPTS = ("upos", "xpos", "deprel")
RANDOM_CONTROLS = ("random", "orth")


@dataclass(frozen=True)
class AmnesicLmSettings(UdSettings):
    """``probe.<key>`` of probe amnesic_lm (``probe.layers``: the biLM's layer indices erased, null: every one)."""

    tags: str = "upos"                                       # the concept erased (the erasers' probe.tags)
    erasers: str | None = dataset(".")                       # the probe=erasure run directory (required)
    control: str = "random"                                  # the random row: random | orth (amnesic probing's)
    seeds: int = ranged(3, int, 1)                           # random draws, seeds 0 .. seeds − 1 (mean reported)
    max_eval_sentences: int | None = ranged(None, int, 1, optional=True)   # the first N dev sentences
    bootstrap: int = ranged(1000, int, 1)                    # paired bootstrap resamples of the dev sentences
    batch_size: int = ranged(16, int, 1)                     # dev sentences per forward pass

    def check(self) -> None:
        check_choice("tags", self.tags, CONCEPTS)
        check_choice("control", self.control, RANDOM_CONTROLS)
        if self.erasers is None or not str(self.erasers).strip():
            raise ConfigError("config: probe=amnesic_lm needs probe.erasers (a probe=erasure run directory of this "
                              "biLM, holding erasers/layer_<k>.pt); found none")


PROBE = ProbeDeclaration("amnesic_lm", ".probe:run", AmnesicLmSettings, data="ud_ewt",
                         predicts="the biLM's next and previous word, with a concept erased inside",
                         record_task="amnesic_lm_probe", sentences=".cost:sentences",
                         documented={"dev": UD_EWT_SIZES["dev"]}, run_cost=".cost:run_cost",
                         # budget=cpu: the first 1,000 UD EWT dev sentences (each scored by the LM 2 + probe.seeds
                         # times per erased layer, recomputing only from that layer up)
                         budgets={"cpu": {"max_eval_sentences": 1000}},
                         report=(".report:SECTION",))
