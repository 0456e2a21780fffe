"""What ``elmo-bench plan`` prices for probe lens, which runs the model itself (its head on every layer) and reads
no activation cache: the UD EWT sentences it reads (the first ``probe.max_train_sentences`` training sentences
for the tuned lens, the first ``probe.max_eval_sentences`` dev sentences scored) and, for the biLM, its forward
passes and the softmax over its vocabulary on every layer read. Torch-free."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from elmo_bench.base.errors import ConfigError
from elmo_bench.encoders.costs import bilm_options, lstm_bilm_flops
from elmo_bench.encoders.kinds import kind_of
from elmo_bench.probe.lib.softmax_rows import softmax_rows
from elmo_bench.probe.lib.ud_data import read_tagged
from elmo_bench.probe.probe_cost import ProbeCost, SplitCount, probed
from elmo_bench.probe.settings import UD_EWT

from .config import LensSettings

WHAT = "probe lens"
#: operations an element of the V-wide row per prediction besides the product: bias, log-softmax 5, KL 4, argmax 1
ROW_PASSES = 11
#: the tuned lens's backward pass and step, as a multiple of a forward pass through the head
TRAIN_PASSES = 3


def sentences(settings: LensSettings, data_root: Path) -> dict[str, list[list[str]]]:
    """The sentences the probe reads, cut as it cuts them (train only for the tuned lens; test never)."""
    read = read_tagged(Path(settings.data_dir) if settings.data_dir else data_root / UD_EWT, "upos",
                       settings.max_train_sentences, settings.max_eval_sentences)
    out = {"dev": [list(ex["tokens"]) for ex in read.splits["dev"]]}
    if "tuned" in settings.lenses:
        out["train"] = [list(ex["tokens"]) for ex in read.splits["train"]]
    return out


def vocabulary(run: Any, options: Any) -> int:
    """The softmax's rows: ``vocab.txt`` beside the weights, else the options' ``n_tokens_vocab``."""
    weights = run.encoder.bilm.weights
    rows = softmax_rows(weights, options)
    if rows is not None:
        return rows
    raise ConfigError(f"plan: {WHAT} needs the softmax's vocabulary size: no vocab.txt beside bilm.weights "
                      f"({weights}) and no n_tokens_vocab in the biLM's options")


def run_cost(run: Any, sizes: Mapping[str, SplitCount]) -> ProbeCost:
    """For the biLM over N = Σ (n + 2) positions and Q = Σ (n + 1) predictions per direction: the encoder once per
    dev sentence and once per training sentence and epoch (tuned lens), N (t + L l) each (t, l: the biLM formula's
    token and per-LSTM-layer terms, elmo_bench.encoders.costs); the head on every layer read (and the last),
    both directions, per lens: (2 P + 11) V a prediction on dev, 3 times that per training prediction and epoch.
    The random twin (``probe.baseline=random``) doubles both. A Hugging Face causal LM is not priced here (its
    encoder FLOPs show as "?"). Estimated, not counted: padding, the translators (2 P² a prediction) and the
    bootstrap."""
    settings: LensSettings = run.probe.settings
    kind = kind_of(run.encoder.spec)
    if not (kind.lm_head or kind.causal_head):
        raise ConfigError(f"{WHAT}: needs an encoder with an LM head (a biLM with its softmax, or a *ForCausalLM "
                          f"model); encoder {kind.name} has none")
    if not kind.lm_head:
        return ProbeCost(0.0, f"{WHAT}: the head over {kind.name} layers is not priced", 1, None)
    options, _ = bilm_options(run.encoder.bilm.options)
    vocab = vocabulary(run, options)
    shape = (options.max_characters_per_token, options.char_dim, options.filters, options.n_highway,
             options.n_filters, options.projection_dim, options.lstm_dim)
    per_position = lstm_bilm_flops(*shape, options.n_layers)
    epochs = settings.max_epochs if "tuned" in settings.lenses else 0
    train = sizes["train"] if "train" in sizes else SplitCount(0, 0, 0)
    dev = sizes["dev"]

    def positions(split: SplitCount) -> int:
        """The biLM's positions: each sentence with its two boundaries."""
        return split.tokens + 2 * split.sentences

    def predictions(split: SplitCount) -> int:
        """Predictions per direction: n + 1 a sentence."""
        return split.tokens + split.sentences

    encoder = per_position * (positions(dev) + epochs * positions(train))
    streams = 2 * (probed(settings.layers, options.n_layers + 1) + 1)
    row = (2 * options.projection_dim + ROW_PASSES) * vocab
    head = streams * row * (len(settings.lenses) * predictions(dev) + TRAIN_PASSES * epochs * predictions(train))
    twice = 2 if settings.baseline == "random" else 1                    # the twin: the same again
    return ProbeCost(twice * head, f"{streams} streams x softmax (2 P + {ROW_PASSES}) V (P {options.projection_dim}, "
                           f"V {vocab}) a prediction, {len(settings.lenses)} lens(es), tuned: {epochs} epochs",
                     1, twice * encoder)
