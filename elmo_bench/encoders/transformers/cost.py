"""What a transformers encoder costs, for ``elmo-bench plan`` (elmo_bench.encoders.costs): Kaplan et al. (2020)'s
forward count per subword token, 2 x (non-embedding parameters) + 2 x n_layers x n_ctx x d_model (attention over a
window of n_ctx tokens), with n_ctx the mean window the encoder builds on the sample, times the subword tokens it
runs per word; over the blocks that run when ``encoder.layers`` keeps a subset; a directory of a config.json and no
weights is priced from the config alone (elmo_bench.encoders.transformers.model_size: parameters on the meta device,
subwords estimated without a tokenizer, and said so)."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

from elmo_bench.encoders.costs import EncoderCost
from elmo_bench.encoders.layer_select import all_or
from elmo_bench.encoders.transformers.devices import device_rows
from elmo_bench.encoders.transformers.model_size import blocks_run, config_cost_numbers, config_only, flops_per_token
from elmo_bench.encoders.transformers.placement import KEYS as PLACEMENT


def transformer_flops_per_token(model: Any, n_ctx: float, indices: Sequence[int] | None = None) -> int:
    """Kaplan et al. (2020), forward: 2 N + 2 n_layer n_ctx d_model, N the parameters outside embedding tables,
    over the blocks a pass runs when only ``indices`` are kept (elmo_bench.encoders.transformers.model_size.blocks_run)."""
    from torch import nn  # lazy: torch

    embedding = {id(p) for m in model.modules() if isinstance(m, nn.Embedding) for p in m.parameters()}
    n = sum(p.numel() for p in model.parameters() if id(p) not in embedding)
    config = model.config
    blocks = int(config.num_hidden_layers)
    return flops_per_token(n, blocks, blocks_run(indices, blocks), n_ctx, int(config.hidden_size))


def transformers_cost(encoder: Any, sentences: Sequence[Sequence[str]],
                      spec: Mapping[str, Any] | None = None) -> EncoderCost:
    """A Hugging Face model: per subword token from its parameters, times the subword positions (specials and
    window overlap included) the encoder runs per word of ``sentences`` (the run's sample); with
    ``encoder.device_map`` in ``spec``, its memory per device (elmo_bench.encoders.transformers.devices)."""
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
    longest = max((len(w) for w in windows), default=encoder.window)
    spread = device_rows(encoder.model.config, spec or {}, encoder.max_tokens or encoder.batch_size * longest, longest,
                         all_or(indices, encoder.total_layers))
    return EncoderCost("transformers", int(round(per_token * per_word)), encoder.num_layers, encoder.dim,
                       f"transformers {encoder.identity().get('model', '')}".strip(), note,
                       params=sum(p.numel() for p in params),
                       weight_bytes=sum(p.numel() * p.element_size() for p in params),
                       layer_indices=None if indices is None else tuple(indices), devices=spread)


def config_transformers_cost(directory: Path, spec: Mapping[str, Any],
                             sentences: Sequence[Sequence[str]]) -> EncoderCost:
    """A Hugging Face model directory of a config.json and no weights: priced from the config alone
    (elmo_bench.encoders.transformers.model_size), without loading or needing any weight."""
    numbers = config_cost_numbers(directory, spec, sentences)
    indices = numbers["layer_indices"]
    note = "priced from config.json alone (no weights read)" + (f"; {numbers['note']}" if numbers["note"] else "")
    return EncoderCost("transformers", numbers["flops_per_position"], len(indices), numbers["dim"],
                       f"transformers {directory.name} (config.json)", note, params=numbers["params"],
                       weight_bytes=numbers["weight_bytes"], layer_indices=tuple(indices),
                       devices=numbers["devices"])


def price(spec: Mapping[str, Any], options: Any, options_source: str, sentences: Sequence[Sequence[str]],
          amp: Any = "off") -> EncoderCost:
    """The cost hook: from config.json alone when the directory has no weights (no tokenizer or weights loaded),
    else from the model built as a run builds it."""
    bare = config_only(spec)
    if bare is not None:
        return config_transformers_cost(bare, spec, sentences)
    from elmo_bench.encoders.build import build_encoder  # lazy: torch

    whole = {key: value for key, value in spec.items() if key not in PLACEMENT}  # priced the same wherever placed
    return transformers_cost(build_encoder(whole, amp=amp), sentences, spec)
