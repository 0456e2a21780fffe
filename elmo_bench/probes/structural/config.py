"""Probe ``structural``: Hewitt & Manning's (2019) distance and depth probes on every layer (elmo_bench.probe.
structural), UUAS, DSpr, root accuracy and NSpr per layer beside the linear-chain baseline. Torch-free."""
from __future__ import annotations

from dataclasses import dataclass

from elmo_bench.base.ranges import ranged
from elmo_bench.probe.declaration import ProbeDeclaration
from elmo_bench.probe.probe_cost import UD_EWT_SIZES
from elmo_bench.probe.settings import UdSettings, check_choice

PUNCT = ("xpos", "upos")


@dataclass(frozen=True)
class StructuralSettings(UdSettings):
    """``probe.<key>`` of probe structural (``elmo-bench probe-structural``'s flags; the seed is the run's)."""

    rank: int | None = ranged(None, int, 1, optional=True)   # rank of B; null: the layer's width
    punct: str = "xpos"                                       # punctuation left out of UUAS / root acc: xpos | upos
    max_epochs: int = ranged(40, int, 1)                      # the authors' 40
    batch_size: int = ranged(20, int, 1)                      # sentences per batch (the authors' 20)

    def check(self) -> None:
        check_choice("punct", self.punct, PUNCT)


PROBE = ProbeDeclaration("structural", ".probe:run", StructuralSettings, data="ud_ewt",
                         predicts="tree distances between words and each word's depth", record_task="structural_probe",
                         sentences=".cost:sentences", cost=".cost:cost", documented=UD_EWT_SIZES,
                         report=(".report:SECTION",))
