"""Probe ``mdl``: the online codelength of the tags given each layer (Voita & Titov 2020), in bits
(elmo_bench.probe.mdl), with ``probe.control`` also the control task's labels. Torch-free."""
from __future__ import annotations

from dataclasses import dataclass

from elmo_bench.base.ranges import ranged
from elmo_bench.probe.declaration import ProbeDeclaration
from elmo_bench.probe.probe_cost import UD_EWT_SIZES
from elmo_bench.probe.settings import TAG_COLUMNS, UdSettings, check_choice

#: the probes trained per block (a ProbeFactory each: elmo_bench/probes/mdl/probe.py FACTORIES)
PROBES = ("linear", "mlp1", "mlp2")


@dataclass(frozen=True)
class MdlSettings(UdSettings):
    """``probe.<key>`` of probe mdl (``elmo-bench probe-mdl``'s flags; the shuffling seed is the run's)."""

    tags: str = "xpos"                          # xpos | upos
    probe: str = "linear"                       # linear softmax (the default) | mlp1 | mlp2 (Hewitt & Liang's)
    hidden: int = ranged(1000, int, 1)          # mlp1/mlp2 hidden units
    control: bool = False                       # also code the control task's labels (one random tag per type)
    max_epochs: int = ranged(40, int, 1)        # at most this many epochs per block's probe

    def check(self) -> None:
        check_choice("tags", self.tags, TAG_COLUMNS)
        check_choice("probe", self.probe, PROBES)


PROBE = ProbeDeclaration("mdl", ".probe:run", MdlSettings, data="ud_ewt_pos",
                         predicts="the bits to transmit every training word's tag", record_task="mdl_probe",
                         sentences=".cost:sentences", cost=".cost:cost", documented=UD_EWT_SIZES,
                         report=(".report:SECTION",))
