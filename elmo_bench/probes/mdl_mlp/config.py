"""Probe ``mdl_mlp``: probe mdl with Hewitt & Liang's MLP-1 trained per block (Voita & Titov's MLP rows); the same
code as probe mdl (elmo_bench/probes/mdl/probe.py), this its named setting."""
from __future__ import annotations

from dataclasses import dataclass

from elmo_bench.probe.declaration import ProbeDeclaration
from elmo_bench.probe.probe_cost import UD_EWT_SIZES
from elmo_bench.probe.settings import redefault
from elmo_bench.probes.mdl.config import MdlSettings


@dataclass(frozen=True)
class MdlMlpSettings(MdlSettings):
    """Probe mdl's settings with the MLP-1 probe as the default."""

    probe: str = redefault(MdlSettings, "probe", "mlp1")


PROBE = ProbeDeclaration("mdl_mlp", "elmo_bench.probes.mdl.probe:run", MdlMlpSettings, data="ud_ewt_pos",
                         predicts="the bits to transmit every training word's tag", record_task="mdl_probe",
                         sentences="elmo_bench.probes.mdl.cost:sentences",
                         cost="elmo_bench.probes.mdl.cost:cost", documented=UD_EWT_SIZES)
