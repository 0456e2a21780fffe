"""What a frozen encoder costs to fill the activation cache, for ``elmo-bench plan``: forward FLOPs per word
position (the positions the cache stores) and the layers and width the cache keeps. Each kind prices itself (its
``price`` hook, elmo_bench.encoders.kinds: the biLM by the LSTM biLM formula below over its options.json, an
ELMoForManyLangs model by the same formula over its config, a transformer from its parameters, a file of layers
computed elsewhere at 0 FLOPs, a user's class at unknown FLOPs with a note); this module holds the cost record, the
shared formula and what a run's cache costs. Layers and width are the encoder's own (``num_layers``, ``dim``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from elmo_bench.bilm.options import BiLMOptions
from elmo_bench.encoders.kinds import kind_of


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
    options_file: str | None = None     # the biLM: the options file it was priced from (plan's "bilm")
    weight_bytes: int | None = None     # transformers: its weights in encoder.dtype
    layer_indices: tuple[int, ...] | None = None  # the model's layers the cache keeps (None: 0..num_layers-1)
    devices: Mapping[str, Any] | None = None  # a model spread over devices: memory per device (plan's JSON)

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


def encoder_cost(spec: Mapping[str, Any], options: Any, options_source: str,
                 sentences: Sequence[Sequence[str]], amp: Any = "off") -> EncoderCost:
    """The cost of the run's encoder (``spec``: the encoder group, its kind set; the biLM's: of ``options``), by
    its kind's ``price`` hook; a kind that declares none is built (elmo_bench.encoders.build) to read its layers and
    width, its FLOPs unknown."""
    kind = kind_of(spec)
    if kind.price is not None:
        return kind.price(spec, options, options_source, sentences, amp)
    from elmo_bench.encoders.build import build_encoder  # lazy: torch

    encoder = build_encoder(spec, amp=amp)
    return EncoderCost(kind.name, None, encoder.num_layers, encoder.dim, f"{kind.name} {spec.get('path') or ''}".strip(),
                       f"encoder={kind.name} declares no price: its FLOPs are not counted in gpu_hours")


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
