"""What a frozen encoder costs to fill the activation cache, for ``elmo-bench plan``: forward FLOPs per word
position (the positions the cache stores) and the layers and width the cache keeps, for every encoder kind.

- ``bilm``: the biLM formula (:func:`bilm_flops_per_position`) from its options.json;
- ``manylangs``: the same formula from the model's own config (char CNN, highway, projection, LSTMs);
- ``transformers``: counted from the model itself: Kaplan et al. (2020)'s forward count per subword token,
  2 x (non-embedding parameters) + 2 x n_layers x n_ctx x d_model (attention over a window of n_ctx tokens), with
  n_ctx the mean window the encoder builds on the sample, times the subword tokens it runs per word; over the
  blocks that run when ``encoder.layers`` keeps a subset; a directory of a config.json and no weights is priced
  from the config alone (elmo_bench.encoders.model_size: parameters on the meta device, subwords estimated without
  a tokenizer, and said so);
- ``hdf5``: 0 (the layers were computed elsewhere); the cache is the file, so its size is the cache's bytes;
- ``python``: unknown (None) with a note: nothing in a user class says what it computes.
Layers and width are the encoder's own (``num_layers``, ``dim``); for a biLM the options' (L + 1, 2 x projection).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from elmo_bench.bilm.options import BiLMOptions
from elmo_bench.encoders.model_size import blocks_run, config_cost_numbers, config_only, flops_per_token

#: the cost kinds this module prices (elmo_bench.encoders.build.KINDS)
PRICED = ("bilm", "manylangs", "transformers", "hdf5", "python")


@dataclass(frozen=True)
class EncoderCost:
    """One encoder's cost: ``flops_per_position`` per word position the cache stores (None: unknown)."""

    kind: str
    flops_per_position: int | None
    num_layers: int
    dim: int
    source: str
    note: str | None = None
    file_bytes: int | None = None       # hdf5: the cache is this file
    segment_markers: bool = False       # bilm, manylangs: each segment adds <S> and </S> positions
    params: int | None = None           # transformers: the model's parameters (None: not counted)
    weight_bytes: int | None = None     # transformers: its weights in encoder.dtype
    layer_indices: tuple[int, ...] | None = None  # the model's layers the cache keeps (None: 0..num_layers-1)

    def indices(self) -> list[int]:
        """The model's layer indices the cache keeps (``encoder_layer_indices`` in plan's JSON)."""
        return list(self.layer_indices) if self.layer_indices is not None else list(range(self.num_layers))


def segment_positions(length: int, max_segment: int) -> int:
    """Positions the biLM computes for one sequence: its tokens plus <S> and </S> around every segment."""
    if length == 0:
        return 0
    return length + 2 * math.ceil(length / max_segment)


def bilm_options(path: Any) -> tuple[Any, str]:
    """The biLM's options (the file at ``path``, or the public ELMo architecture when it is not readable here)."""
    from elmo_bench.bilm.public import public_options  # lazy: torch

    if path and Path(str(path)).exists():
        return BiLMOptions.load(str(path)), str(path)
    return BiLMOptions.from_dict(public_options(), "public ELMo options"), \
        "public ELMo 2x4096_512_2048cnn_2xhighway (bilm.options not readable here)"


def lstm_bilm_flops(chars: int, char_dim: int, filters: Sequence[Sequence[int]], n_highway: int, token_width: int,
                    projection: int, hidden: int, layers: int) -> int:
    """Forward FLOPs of a char-CNN biLM for one position, matrix products only (2 FLOPs a multiply-add): the
    char CNN's every valid window of each filter bank, ``n_highway`` highway layers over the F filters, the
    projection of the ``token_width``-wide token vector to P, and per layer and direction the LSTM's 4 gates over
    [input P ; recurrent P] and its H → P cell projection."""
    cnn = sum(2 * (chars - w + 1) * w * char_dim * n for w, n in filters)
    f = sum(n for _, n in filters)
    highway = n_highway * 2 * (2 * f * f)
    lstm = layers * 2 * (2 * (projection + projection) * 4 * hidden + 2 * hidden * projection)
    return cnn + highway + 2 * token_width * projection + lstm


def bilm_flops_per_position(options: Any) -> int:
    """Forward FLOPs of the biLM for one token position, from its options (elmo_bench.bilm.options.BiLMOptions).

    With C = max_characters_per_token, e = char dim, filters (w_i, n_i), F = sum n_i, P = projection_dim,
    H = lstm dim, L = n_layers, K = n_highway: char CNN sum_i 2 (C - w_i + 1) w_i e n_i; highway K 2 (2 F F);
    projection 2 F P; LSTMs L 2 (2 (P + P) 4H + 2 H P). Public ELMo (C 50, e 16, F 2048, P 512, H 4096, L 2,
    K 2): 17,616,896 + 33,554,432 + 2,097,152 + 150,994,944 = 204,263,424 FLOPs a position. The token layer's
    per-word-type cache (bilm.token_encoder) makes the real char-CNN work smaller on repetitive text: this counts
    every position.
    """
    return lstm_bilm_flops(options.max_characters_per_token, options.char_dim, options.filters, options.n_highway,
                           options.n_filters, options.projection_dim, options.lstm_dim, options.n_layers)


def bilm_cost(options: Any, source: str) -> EncoderCost:
    return EncoderCost("bilm", bilm_flops_per_position(options), options.n_layers + 1, options.output_dim, source,
                       segment_markers=True)


def manylangs_cost(encoder: Any) -> EncoderCost:
    """An ELMoForManyLangs model: the biLM formula over its config (the word embedding is a lookup, no FLOPs)."""
    te, enc = encoder.config["token_embedder"], encoder.config["encoder"]
    char_dim = int(te["char_dim"])
    filters = [tuple(f) for f in te["filters"]] if char_dim > 0 else []
    width = (int(te["word_dim"]) if int(te["word_dim"]) > 0 else 0) + sum(n for _, n in filters)
    flops = lstm_bilm_flops(int(te["max_characters_per_token"]), char_dim, filters,
                            int(te["n_highway"]) if filters else 0, width, int(enc["projection_dim"]),
                            int(enc["dim"]), int(enc["n_layers"]))
    return EncoderCost("manylangs", flops, encoder.num_layers, encoder.dim, f"ELMoForManyLangs {encoder.path}",
                       segment_markers=True)


def transformer_flops_per_token(model: Any, n_ctx: float, indices: Sequence[int] | None = None) -> int:
    """Kaplan et al. (2020), forward: 2 N + 2 n_layer n_ctx d_model, N the parameters outside embedding tables,
    over the blocks a pass runs when only ``indices`` are kept (elmo_bench.encoders.model_size.blocks_run)."""
    from torch import nn  # lazy: torch

    embedding = {id(p) for m in model.modules() if isinstance(m, nn.Embedding) for p in m.parameters()}
    n = sum(p.numel() for p in model.parameters() if id(p) not in embedding)
    config = model.config
    blocks = int(config.num_hidden_layers)
    return flops_per_token(n, blocks, blocks_run(indices, blocks), n_ctx, int(config.hidden_size))


def transformers_cost(encoder: Any, sentences: Sequence[Sequence[str]]) -> EncoderCost:
    """A Hugging Face model: per subword token from its parameters, times the subword positions (specials and
    window overlap included) the encoder runs per word of ``sentences`` (the run's sample)."""
    sentences = [list(s) for s in sentences if s]
    windows = encoder.plan(sentences)[0] if sentences else []
    words = sum(len(s) for s in sentences)
    tokens = sum(len(w) for w in windows)
    n_ctx = tokens / len(windows) if windows else float(encoder.window)
    indices = getattr(encoder, "indices", None)
    per_token = transformer_flops_per_token(encoder.model, n_ctx, indices)
    per_word = tokens / words if words else 1.0
    note = None if words else "no sample text: one subword token a word assumed"
    params = list(encoder.model.parameters())
    return EncoderCost("transformers", int(round(per_token * per_word)), encoder.num_layers, encoder.dim,
                       f"transformers {encoder.identity().get('model', '')}".strip(), note,
                       params=sum(p.numel() for p in params),
                       weight_bytes=sum(p.numel() * p.element_size() for p in params),
                       layer_indices=None if indices is None else tuple(indices))


def config_transformers_cost(directory: Path, spec: Mapping[str, Any],
                             sentences: Sequence[Sequence[str]]) -> EncoderCost:
    """A Hugging Face model directory of a config.json and no weights: priced from the config alone
    (elmo_bench.encoders.model_size), without loading or needing any weight."""
    numbers = config_cost_numbers(directory, spec, sentences)
    indices = numbers["layer_indices"]
    note = "priced from config.json alone (no weights read)" + (f"; {numbers['note']}" if numbers["note"] else "")
    return EncoderCost("transformers", numbers["flops_per_position"], len(indices), numbers["dim"],
                       f"transformers {directory.name} (config.json)", note, params=numbers["params"],
                       weight_bytes=numbers["weight_bytes"], layer_indices=tuple(indices))


def encoder_cost(spec: Mapping[str, Any], options: Any, options_source: str,
                 sentences: Sequence[Sequence[str]], amp: Any = "off") -> EncoderCost:
    """The cost of the run's encoder (``spec``: the encoder group, its kind set; ``kind: bilm``: the biLM of
    ``options``). Other kinds are built (elmo_bench.encoders.build) to read their layers and width."""
    kind = str(spec["kind"])
    if kind == "bilm":
        return bilm_cost(options, options_source)
    bare = config_only(spec)
    if bare is not None:  # config.json only: no tokenizer or weights needed, none loaded
        return config_transformers_cost(bare, spec, sentences)
    from elmo_bench.encoders.build import build_encoder  # lazy: torch

    encoder = build_encoder(spec, amp=amp)
    if kind == "manylangs":
        return manylangs_cost(encoder)
    if kind == "transformers":
        return transformers_cost(encoder, sentences)
    if kind == "hdf5":
        return EncoderCost("hdf5", 0, encoder.num_layers, encoder.dim, f"hdf5 {spec['path']}",
                           "layers computed elsewhere: no encoder FLOPs; the cache is the file",
                           file_bytes=Path(str(spec["path"])).stat().st_size)
    return EncoderCost(kind, None, encoder.num_layers, encoder.dim, f"python {spec.get('_target_')}",
                       "a python encoder's FLOPs are not known from its config: not counted in gpu_hours")


def cache_numbers(cost: EncoderCost, positions: int, distinct_tokens: int, words_per_pass: int, cache: bool
                  ) -> dict[str, Any]:
    """``encoder_flops`` (None when unknown) and ``cache_bytes`` of a run that uses the encoder: with the cache,
    one pass over the distinct sequences (``positions`` with segment markers for a biLM, else their words) and
    fp16 rows of (layers x dim) per distinct word (an hdf5 file: its size); without it, ``words_per_pass``
    positions (every epoch's)."""
    counted = positions if cost.segment_markers else distinct_tokens
    if not cache:
        counted = words_per_pass
    flops = None if cost.flops_per_position is None else cost.flops_per_position * counted
    if cost.file_bytes is not None:
        cache_bytes = cost.file_bytes
    else:
        cache_bytes = distinct_tokens * cost.num_layers * cost.dim * 2 if cache else 0
    return {"encoder_flops": flops, "cache_bytes": cache_bytes}
