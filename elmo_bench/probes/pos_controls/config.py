"""Probe ``pos_controls``: probe pos with the papers' probes (``probe.probe``: linear and MLP-1 by default) and
Hewitt & Liang's control task on, so accuracy, control and selectivity come per layer (the probe suite's entry).
The same code as probe pos (elmo_bench/probes/pos/probe.py): one POS probe, this its named setting."""
from __future__ import annotations

from dataclasses import dataclass, field

from elmo_bench.probe.declaration import ProbeDeclaration
from elmo_bench.probe.probe_cost import UD_EWT_SIZES
from elmo_bench.probes.pos.config import PosSettings


@dataclass(frozen=True)
class PosControlsSettings(PosSettings):
    """Probe pos's settings with the papers' probes and the control task as defaults."""

    probe: list[str] = field(default_factory=lambda: ["linear", "mlp1"])
    control: bool = True


PROBE = ProbeDeclaration("pos_controls", "elmo_bench.probes.pos.probe:run", PosControlsSettings, data="ud_ewt_pos",
                         predicts="a part-of-speech tag per word, and the control task's tag per word type",
                         record_task="pos_probe",
                         sentences="elmo_bench.probes.pos.cost:sentences",
                         cost="elmo_bench.probes.pos.cost:cost", documented=UD_EWT_SIZES,
                         report=(".report:SECTION",))
