"""Probe ``pos``: a linear softmax classifier on each frozen layer (and their average, and GloVe) trained to
convergence (standardised features, full-batch L-BFGS, the L2 chosen on dev from ``probe.l2_grid``), beside the
most-frequent-tag baseline: the paper's Table 6 (elmo_bench.probe.pos.converged). With ``probe.probe`` naming the papers'
probes (linear, mlp1, mlp2) and ``probe.control``, Hewitt & Liang's control task and selectivity
(elmo_bench.probe.pos.fits): probe ``pos_controls`` is that setting. Torch-free: composing loads no model."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from elmo_bench.base.errors import ConfigError
from elmo_bench.base.ranges import MAX_SEED, ranged
from elmo_bench.probe.declaration import ProbeCommand, ProbeDeclaration
from elmo_bench.probe.probe_cost import UD_EWT_SIZES
from elmo_bench.probe.settings import TAG_COLUMNS, UdSettings, choice

#: the probes ``probe.probe`` may name: the converged L-BFGS probe and the papers' Adam-trained ones
KINDS = ("converged", "linear", "mlp1", "mlp2")
DEFAULT_L2 = (1e-2, 1e-3, 1e-4, 1e-5)


@dataclass(frozen=True)
class PosSettings(UdSettings):
    """``probe.<key>`` of probe pos (the meanings of ``elmo-bench probe-pos``'s flags, docs/probes.md)."""

    tags: str = choice("xpos", TAG_COLUMNS)                  # xpos = PTB tags (the paper's) | upos
    probe: list[str] = field(default_factory=lambda: ["converged"])   # converged | linear | mlp1 | mlp2, a list
    #                                                        (converged: L-BFGS); with any other than converged
    #                                                        alone, rows are keyed <probe>/<row>
    control: bool = False                                    # also train each probe on the control task (Hewitt &
    #                                                        Liang 2019): control and selectivity
    seeds: list[int] = field(default_factory=lambda: [1])    # control-label draws and Adam-probe seeds (mean ± sd)
    hidden: int = ranged(1000, int, 1)                       # mlp1/mlp2 hidden units
    rank: int = ranged(1000, int, 1)                         # the linear probe's rank bound
    dropout: float = ranged(0.0, float, 0, 1, high_open=True)   # the Adam probes' dropout
    weight_decay: float = ranged(0.0, float, 0)              # the Adam probes' weight decay
    max_epochs: int = ranged(40, int, 1)                     # the Adam probes' epoch cap
    batch_sentences: int = ranged(20, int, 1)                # sentences per Adam step
    l2_grid: list[float] = field(default_factory=lambda: list(DEFAULT_L2))   # the converged probe's L2
    #                                                        strengths, best on dev kept; when the weakest wins, up to
    #                                                        3 more fits go down by factors of 10
    max_iter: int = ranged(1000, int, 1)                     # L-BFGS iterations per fit at most
    tol: float = ranged(1e-4, float, 0, low_open=True)       # converged when the gradient max-norm is below this
    glove: bool = True                                       # the GloVe row
    rows: list[str] | None = None                            # only these rows (layer_<k>, average, glove); null: all
    max_dev_sentences: int | None = ranged(None, int, 1, optional=True)   # the first N dev sentences (null:
    #                                                                       all; bounds the Adam probes' dev pass)

    def check(self) -> None:
        """What a range cannot say: the sets, every value once, finite L2 strengths, seeds in numpy's range."""
        unknown = [p for p in self.probe if p not in KINDS]
        if not self.probe or unknown or len(set(self.probe)) != len(self.probe):
            raise ConfigError(f"config: probe.probe expected distinct names from {', '.join(KINDS)}, found "
                              f"{list(self.probe)}")
        if not self.seeds or len(set(self.seeds)) != len(self.seeds) or any(
                not 0 <= s <= MAX_SEED for s in self.seeds):
            raise ConfigError(f"config: probe.seeds expected distinct integers in 0..{MAX_SEED}, found "
                              f"{list(self.seeds)}")
        if not self.l2_grid or any(not math.isfinite(v) or v < 0 for v in self.l2_grid):
            raise ConfigError(f"config: probe.l2_grid expected non-negative finite numbers, found "
                              f"{list(self.l2_grid)}")


#: the probe suite (``probe_set=suite``) leaves out the GloVe row: the suite probes one encoder's layers
SUITE = {"glove": False}


@dataclass(frozen=True)
class PosControlsSettings(PosSettings):
    """Probe pos's settings with the papers' probes and the control task as defaults (probe ``pos_controls``)."""

    probe: list[str] = field(default_factory=lambda: ["linear", "mlp1"])
    control: bool = True


PROBE = ProbeDeclaration("pos", ".probe:run", PosSettings, data="ud_ewt_pos",
                         predicts="a part-of-speech tag per word", record_task="pos_probe",
                         sentences=".cost:sentences", cost=".cost:cost", documented=UD_EWT_SIZES,
                         # budget=cpu: the first 2,000 UD EWT training sentences (the converged probe: no epochs)
                         budgets={"cpu": {"max_train_sentences": 2000}}, presets={"suite": SUITE},
                         command=ProbeCommand("probe-pos", "converged linear POS probe: every layer, GloVe, most "
                                              "frequent tag (Table 6): run.py probe=pos",
                                              flags={"tags": "--tag-column", "layers": None}),
                         report=(".report:SECTION",))
#: probe ``pos_controls``: probe pos with the papers' probes (``probe.probe``: linear and MLP-1 by default) and Hewitt
#: & Liang's control task on, so accuracy, control and selectivity come per layer (the probe suite's entry); the same
#: code as probe pos (this folder), its named setting
VARIANTS = (ProbeDeclaration("pos_controls", ".probe:run", PosControlsSettings, data="ud_ewt_pos",
                             predicts="a part-of-speech tag per word, and the control task's tag per word type",
                             record_task="pos_probe", sentences=".cost:sentences", cost=".cost:cost",
                             documented=UD_EWT_SIZES,
                             # budget=cpu: 2,000 training sentences, at most 10 epochs, MLP width 256
                             budgets={"cpu": {"max_train_sentences": 2000, "max_epochs": 10, "hidden": 256}},
                             presets={"suite": SUITE}, report=(".controls_report:SECTION",)),)
