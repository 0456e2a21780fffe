"""Probe ``structural``: Hewitt & Manning's (2019) distance and depth probes on every layer (elmo_bench.probe.
structural), UUAS, DSpr, root accuracy and NSpr per layer beside the linear-chain baseline. Torch-free."""
from __future__ import annotations

from dataclasses import dataclass

from elmo_bench.base.ranges import ranged
from elmo_bench.probe.declaration import ProbeCommand, ProbeDeclaration
from elmo_bench.probe.probe_cost import UD_EWT_SIZES
from elmo_bench.probe.settings import UdSettings, choice

PUNCT = ("xpos", "upos")


@dataclass(frozen=True)
class StructuralSettings(UdSettings):
    """``probe.<key>`` of probe structural (``elmo-bench probe-structural``'s flags; the seed is the run's)."""

    rank: int | None = ranged(None, int, 1, optional=True)   # rank of B; null: the layer's width
    punct: str = choice("xpos", PUNCT)                        # punctuation left out of UUAS and root accuracy:
    #                                                           the authors' PTB XPOS list, or UPOS PUNCT
    max_epochs: int = ranged(40, int, 1)                      # at most this many epochs (the authors' 40)
    batch_size: int = ranged(20, int, 1)                      # sentences per batch (the authors' 20)


PROBE = ProbeDeclaration("structural", ".probe:run", StructuralSettings, data="ud_ewt",
                         predicts="tree distances between words and each word's depth", record_task="structural_probe",
                         sentences=".cost:sentences", cost=".cost:cost", documented=UD_EWT_SIZES,
                         # budget=cpu: 2,000 training sentences, at most 10 epochs
                         budgets={"cpu": {"max_train_sentences": 2000, "max_epochs": 10}},
                         command=ProbeCommand("probe-structural", "structural probes (distance, depth) of every "
                                              "layer: an alias of run.py probe=structural", run={"seed": 0}),
                         report=(".report:SECTION",))
