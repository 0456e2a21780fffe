"""Probe ``mdl``: the online codelength of the tags given each layer (Voita & Titov 2020), in bits
(elmo_bench.probe.mdl.online_code), with ``probe.control`` also the control task's labels. Torch-free."""
from __future__ import annotations

from dataclasses import dataclass

from elmo_bench.base.ranges import ranged
from elmo_bench.probe.declaration import ProbeCommand, ProbeDeclaration
from elmo_bench.probe.probe_cost import UD_EWT_SIZES
from elmo_bench.probe.settings import TAG_COLUMNS, UdSettings, choice, redefault

#: the probes trained per block (a ProbeFactory each: elmo_bench/probe/mdl/probe.py FACTORIES)
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


#: the probe suite (``probe_set=suite``) codes the control task's labels too (Voita & Titov's comparison)
SUITE = {"control": True}


@dataclass(frozen=True)
class MdlMlpSettings(MdlSettings):
    """Probe mdl's settings with the MLP-1 probe as the default (probe ``mdl_mlp``)."""

    probe: str = redefault(MdlSettings, "probe", "mlp1")


PROBE = ProbeDeclaration("mdl", ".probe:run", MdlSettings, data="ud_ewt_pos",
                         predicts="the bits to transmit every training word's tag", record_task="mdl_probe",
                         sentences=".cost:sentences", cost=".cost:cost", documented=UD_EWT_SIZES,
                         # budget=cpu: 2,000 training sentences; the authors' 40 epochs kept: its linear probes are
                         # cheap (3 layers, 1,000 sentences: 98 s here) and a 10-epoch cap reversed the layers' order
                         # (layer 0 21,968 bits < layer 1 24,326; with 40 epochs 19,376 > 15,464)
                         budgets={"cpu": {"max_train_sentences": 2000, "max_epochs": 40}}, presets={"suite": SUITE},
                         command=ProbeCommand("probe-mdl", "online codelength (MDL) of POS tags given every layer, in "
                                              "bits: run.py probe=mdl", flags={"tags": "--tag-column"},
                                              run={"seed": 0}),
                         report=(".report:SECTION",))
#: probe ``mdl_mlp``: probe mdl with Hewitt & Liang's MLP-1 trained per block (Voita & Titov's MLP rows); the same
#: code as probe mdl (this folder), its named setting
VARIANTS = (ProbeDeclaration("mdl_mlp", ".probe:run", MdlMlpSettings, data="ud_ewt_pos",
                             predicts="the bits to transmit every training word's tag", record_task="mdl_probe",
                             sentences=".cost:sentences", cost=".cost:cost", documented=UD_EWT_SIZES,
                             # budget=cpu: 2,000 training sentences, the authors' 40 epochs, MLP width 256
                             budgets={"cpu": {"max_train_sentences": 2000, "max_epochs": 40, "hidden": 256}},
                             presets={"suite": SUITE}),)
