"""Probe ``mdl``: the online codelength of the tags given each layer (Voita & Titov 2020), in bits
(elmo_bench.probe.mdl), with ``probe.control`` also the control task's labels. Torch-free."""
from __future__ import annotations

from dataclasses import dataclass

from elmo_bench.base.ranges import ranged
from elmo_bench.probe.declaration import ProbeCommand, ProbeDeclaration
from elmo_bench.probe.probe_cost import UD_EWT_SIZES
from elmo_bench.probe.settings import TAG_COLUMNS, UdSettings, choice

#: the probes trained per block (a ProbeFactory each: elmo_bench/probes/mdl/probe.py FACTORIES)
PROBES = ("linear", "mlp1", "mlp2")


@dataclass(frozen=True)
class MdlSettings(UdSettings):
    """``probe.<key>`` of probe mdl (``elmo-bench probe-mdl``'s flags; the shuffling seed is the run's)."""

    tags: str = choice("xpos", TAG_COLUMNS)     # xpos = PTB tags (the paper's) | upos
    probe: str = choice("linear", PROBES)       # the probe trained per block (a ProbeFactory): linear softmax, or
    #                                             Hewitt & Liang's mlp1 / mlp2 (probe.hidden units) with their regimen
    hidden: int = ranged(1000, int, 1)          # mlp1/mlp2 hidden units
    control: bool = False                       # also code the control task's labels (Hewitt & Liang: one random
    #                                             tag per word type, drawn with the run's seed), printed under
    #                                             "control" as "train"/"test" are for the tags
    max_epochs: int = ranged(40, int, 1)        # at most this many epochs per block's probe


PROBE = ProbeDeclaration("mdl", ".probe:run", MdlSettings, data="ud_ewt_pos",
                         predicts="the bits to transmit every training word's tag", record_task="mdl_probe",
                         sentences=".cost:sentences", cost=".cost:cost", documented=UD_EWT_SIZES,
                         command=ProbeCommand("probe-mdl", "online codelength (MDL) of POS tags given every layer, in "
                                              "bits: run.py probe=mdl", flags={"tags": "--tag-column"},
                                              run={"seed": 0}))
