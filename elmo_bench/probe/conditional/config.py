"""Probe ``conditional``: for each layer ℓ and each baseline B, the bits per token ℓ adds about the labels beyond B,
H_V(Y | B) − H_V(Y | B, ℓ), with V the converged linear softmax probe at one fixed L2 (elmo_bench.probe.
conditional) and, with ``probe.probe=[linear,mlp1]``, the control-task regimen's MLP-1 (elmo_bench.probe.
conditional_mlp) as a second family. Torch-free."""
from __future__ import annotations

from dataclasses import dataclass, field

from elmo_bench.base.errors import ConfigError
from elmo_bench.base.ranges import ranged
from elmo_bench.probe.declaration import ProbeDeclaration
from elmo_bench.probe.probe_cost import UD_EWT_SIZES
from elmo_bench.probe.settings import UD_LABELS, UdSettings, check_choice

#: the labels: UD's universal POS, the PTB tags, or each word's relation to its head (the part before ":")
TAGS = UD_LABELS
#: none: the constant (training label prior); layer0: the encoder's own first layer; word: the word type as a
#: learned lookup (unknown types share one row); random: the same layer of the encoder's random_init=all twin
BASELINES = ("none", "layer0", "word", "random")
#: the probe families V: linear = the converged softmax probe (L-BFGS, fixed L2); mlp1 = the control-task regimen's
#: MLP-1 (Adam, early stopping on the dev loss), its keys prefixed ``mlp1:``
FAMILIES = ("linear", "mlp1")


@dataclass(frozen=True)
class ConditionalSettings(UdSettings):
    """``probe.<key>`` of probe conditional."""

    tags: str = "upos"
    baseline: str = "layer0"                    # a baseline of BASELINES, or several quoted: 'none,layer0,word'
    #                                             (or -m probe.baseline=none,layer0,word: one run each)
    l2: float = ranged(1e-4, float, 0)          # the probe's fixed L2 on its weights (never chosen on dev)
    max_iter: int = ranged(1000, int, 1)        # L-BFGS iterations per fit at most
    tol: float = ranged(1e-5, float, 0, low_open=True)   # converged when the gradient max-norm is below this
    bootstrap: int = ranged(1000, int, 1)       # paired bootstrap resamples of the test sentences (95% interval)
    probe: list[str] = field(default_factory=lambda: ["linear"])   # the families V, a list of FAMILIES
    hidden: int = ranged(1000, int, 1)          # mlp1: hidden units
    dropout: float = ranged(0.0, float, 0, 1, high_open=True)      # mlp1: input dropout
    weight_decay: float = ranged(0.0, float, 0)                    # mlp1: Adam's weight decay
    max_epochs: int = ranged(40, int, 1)        # mlp1: the epoch cap (early stopping on the dev loss before it)
    batch_sentences: int = ranged(20, int, 1)   # mlp1: sentences per Adam step
    max_dev_sentences: int | None = ranged(None, int, 1, optional=True)   # mlp1: the first N dev sentences

    @property
    def baselines(self) -> list[str]:
        return [b.strip() for b in self.baseline.split(",") if b.strip()]

    @property
    def encoded_splits(self) -> tuple[str, ...]:
        """The splits whose layers the run reads: dev only for MLP-1's early stopping."""
        return ("train", "dev", "test") if "mlp1" in self.probe else ("train", "test")

    def check(self) -> None:
        check_choice("tags", self.tags, TAGS)
        found = self.baselines
        if not found or any(b not in BASELINES for b in found) or len(set(found)) != len(found):
            raise ConfigError(f"config: probe.baseline expected one or a comma list of {', '.join(BASELINES)} "
                              f"(each once), found {self.baseline!r}")
        if not self.probe or any(p not in FAMILIES for p in self.probe) or len(set(self.probe)) != len(self.probe):
            raise ConfigError(f"config: probe.probe expected distinct names from {', '.join(FAMILIES)}, found "
                              f"{list(self.probe)}")


PROBE = ProbeDeclaration("conditional", ".probe:run", ConditionalSettings, data="ud_ewt",
                         predicts="bits per token a layer adds about a word's label beyond a baseline",
                         record_task="conditional_probe", sentences=".cost:sentences", cost=".cost:cost",
                         documented=UD_EWT_SIZES,
                         # budget=cpu: the first 1,000 training sentences (issue 47's evidence size); the MLP-1
                         # family at most 10 epochs, width 256 (as pos_controls under budget=cpu)
                         budgets={"cpu": {"max_train_sentences": 1000, "max_epochs": 10, "hidden": 256}},
                         report=(".report:SECTION",))
