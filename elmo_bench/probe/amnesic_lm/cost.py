"""What ``elmo-bench plan`` prices for probe amnesic_lm, which runs the biLM itself (erasers inside, its softmax on
top) and reads no activation cache: the UD EWT dev sentences it scores (the first ``probe.max_eval_sentences``)
and, per erased layer, the biLM's forward passes and the softmax over its vocabulary for every variant. Torch-free.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from elmo_bench.base.errors import ConfigError, DataError
from elmo_bench.encoders.costs import bilm_options, lstm_bilm_flops
from elmo_bench.encoders.kinds import kind_of
from elmo_bench.probe.amnesic_lm.config import AmnesicLmSettings
from elmo_bench.probe.lib.softmax_rows import softmax_rows
from elmo_bench.probe.lib.ud_data import read_tagged
from elmo_bench.probe.probe_cost import ProbeCost, SplitCount, probed
from elmo_bench.probe.settings import UD_EWT

WHAT = "probe amnesic_lm"
#: operations an element of the V-wide row per prediction besides the product: bias, log-softmax 5, KL 4, argmax
ROW_PASSES = 11


def sentences(settings: AmnesicLmSettings, data_root: Path) -> dict[str, list[list[str]]]:
    """The dev sentences the probe scores, read and cut as it reads them (train and test are never encoded)."""
    read = read_tagged(Path(settings.data_dir) if settings.data_dir else data_root / UD_EWT, "upos", 1,
                       settings.max_eval_sentences)
    return {"dev": [list(ex["tokens"]) for ex in read.splits["dev"]]}


def vocabulary(run: Any, options: Any) -> int:
    """The softmax's rows: ``vocab.txt`` beside the weights (as elmo_bench.bilm.lm_head reads it), else the
    options' ``n_tokens_vocab``; one DataError line when neither is here."""
    weights = run.encoder.bilm.weights
    rows = softmax_rows(weights, options)
    if rows is not None:
        return rows
    raise DataError(f"plan: {WHAT} needs the softmax's vocabulary size: no vocab.txt beside bilm.weights "
                    f"({weights}) and no n_tokens_vocab in the biLM's options")


def check_lm(run: Any) -> None:
    """The run's one line for an encoder without an LM head (elmo_bench.bilm.lm_head.head_for), at plan time."""
    spec = run.encoder.plain()
    random_init = run.encoder.bilm.random_init or ("random_init" in spec and spec["random_init"])
    has_head = kind_of(spec).lm_head
    if not has_head or random_init:
        kind = run.encoder.kind if not has_head else f"{run.encoder.kind} random_init={random_init}"
        raise ConfigError(f"{WHAT}: needs a trained biLM with its softmax (an LM head); encoder {kind} has none")


def run_cost(run: Any, sizes: Mapping[str, SplitCount]) -> ProbeCost:
    """Per erased layer k (``probe.layers``; null: 0 .. L) and v = 2 + ``probe.seeds`` variants (none, erased,
    each random seed), over N = Σ (n + 2) positions (``<S> w1 .. wn </S>``, no segmenting) and Q = Σ (n + 1)
    predictions per direction of the dev sentences:

    - encoder FLOPs: the token layer (char CNN, highway, projection) once per batch, N t; the LSTM layers below
      k once (the stack's memo) and k's and those above once per variant: N l (L + (v − 1)(L − k)), with t and l
      the biLM formula's token and per-LSTM-layer (both directions) terms (elmo_bench.encoders.costs);
    - train FLOPs (the head): for every variant and direction, the shared softmax's product and bias, 2 P V + V
      (P the projection, V the vocabulary), and the passes over the V-wide row that score it, counted as one FLOP an
      element: the log-softmax (max, subtract, exp, sum, subtract: 5 V), the KL to the un-erased row (exp,
      subtract, multiply, sum: 4 V) and top-1's argmax (V): v x 2 Q x (2 P + 11) V.

    Estimated, not counted: padding inside a batch (sentences are sorted by length; the char CNN and the softmax
    run on padded positions), the erasers (4 d r a position, < 1%) and the bootstrap. The row passes are memory-bound:
    on the project's 2-core CPU (one thread) one batch's softmax step (16 sentences of 20 words, V 20,000) took
    0.92 s against 0.34 s for its matrix product alone, so plan's CPU minutes, which price every FLOP at the head's
    rate, are low for this probe by up to that factor (2.7)."""
    check_lm(run)
    settings: AmnesicLmSettings = run.probe.settings
    options, _ = bilm_options(run.encoder.bilm.options)
    vocab = vocabulary(run, options)
    shape = (options.max_characters_per_token, options.char_dim, options.filters, options.n_highway,
             options.n_filters, options.projection_dim, options.lstm_dim)
    token = lstm_bilm_flops(*shape, 0)
    lstm = lstm_bilm_flops(*shape, 1) - token
    depth, variants = options.n_layers, 2 + settings.seeds
    dev = sizes["dev"]
    positions, predictions = dev.tokens + 2 * dev.sentences, dev.tokens + dev.sentences
    chosen = settings.layers if settings.layers is not None else list(range(depth + 1))
    encoder = sum(positions * (token + lstm * (depth + (variants - 1) * (depth - k))) for k in chosen)
    row = (2 * options.projection_dim + ROW_PASSES) * vocab
    head = probed(settings.layers, depth + 1) * variants * 2 * predictions * row
    return ProbeCost(head, f"{len(chosen)} layers x {variants} variants x softmax (2 P + {ROW_PASSES}) V (P "
                           f"{options.projection_dim}, V {vocab}) a prediction, both directions", 1, encoder)
