"""Probe ``lens``: each layer of an LM read through the model's own output head. The logit lens applies the head as
it is; the tuned lens first maps the layer through an affine translator (identity at the start) trained to minimise
KL(final layer ‖ lens) on the training split's text (Belrose et al. 2023). The biLM: its shared softmax on layer k's
forward half (next word) and backward half (previous word); a Hugging Face ``*ForCausalLM``: the final norm and
``lm_head`` on each layer, the last layer being the model's own logits. Scored on UD EWT dev text: bits per token of
the gold word, perplexity, KL to the final layer, top-1 against gold and against the final layer, each with a paired
bootstrap 95% interval over sentences; the random twin (``random_init=all``, read through the trained head) as a
baseline. Torch-free."""
from __future__ import annotations

from dataclasses import dataclass

from elmo_bench.base.errors import ConfigError
from elmo_bench.base.ranges import ranged
from elmo_bench.probe.declaration import ProbeDeclaration
from elmo_bench.probe.probe_cost import UD_EWT_SIZES
from elmo_bench.probe.settings import UdSettings, check_choice

LENSES = ("logit", "tuned")
BASELINES = ("random", "none")


@dataclass(frozen=True)
class LensSettings(UdSettings):
    """``probe.<key>`` of probe lens (``probe.layers``: the model's layer indices read, null: every one the encoder
    gives; ``probe.max_train_sentences``: the training sentences the tuned lens is fitted on)."""

    max_train_sentences: int | None = ranged(2000, int, 1, optional=True)  # tuned lens: the first N train sentences
    lens: str = "logit,tuned"                                   # logit | tuned | logit,tuned
    max_epochs: int = ranged(3, int, 1)                          # tuned lens: passes over its training sentences
    lr: float = ranged(0.1, float, 0, low_open=True)             # tuned lens: SGD (Nesterov, momentum 0.9) step size
    max_eval_sentences: int | None = ranged(None, int, 1, optional=True)   # the first N dev sentences scored
    batch_size: int = ranged(16, int, 1)                         # sentences per forward pass and per SGD step
    bootstrap: int = ranged(1000, int, 1)                        # paired bootstrap resamples of the dev sentences
    baseline: str = "random"                                     # random: also the random twin; none: not

    @property
    def lenses(self) -> list[str]:
        """The lenses asked for, in LENSES' order."""
        asked = [name.strip() for name in str(self.lens).split(",") if name.strip()]
        return [name for name in LENSES if name in asked]

    def check(self) -> None:
        asked = [name.strip() for name in str(self.lens).split(",") if name.strip()]
        if not asked or len(set(asked)) != len(asked) or any(name not in LENSES for name in asked):
            raise ConfigError(f"config: probe.lens expected logit, tuned or logit,tuned, found {self.lens!r}")
        check_choice("baseline", self.baseline, BASELINES)


PROBE = ProbeDeclaration("lens", ".probe:run", LensSettings, data="ud_ewt",
                         predicts="the model's next (and, for the biLM, previous) word from each layer",
                         record_task="lens_probe", sentences=".cost:sentences",
                         documented={"train": UD_EWT_SIZES["train"], "dev": UD_EWT_SIZES["dev"]},
                         run_cost=".cost:run_cost", report=(".report:SECTION",))
