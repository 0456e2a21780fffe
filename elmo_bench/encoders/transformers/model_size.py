"""A Hugging Face model priced from its ``config.json`` alone, for ``elmo-bench plan`` (issue 46): parameters (the
model built on torch's ``meta`` device: shapes, no memory, no weights read), weight bytes in ``encoder.dtype``, the
layers ``encoder.layers`` keeps, and forward FLOPs per subword token counted only over the blocks that run (the pass
stops after the deepest requested block; the last index runs them all).

Subword counts come from the model's tokenizer when its files are there (no weights are needed for that); without
one they are estimated at :data:`SUBWORDS_PER_WORD` a word plus two special tokens a sentence, and the cost says so
in its note.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from elmo_bench.base.errors import ConfigError
from elmo_bench.encoders.layer_select import all_or, layer_indices
from elmo_bench.encoders.transformers.devices import device_rows
from elmo_bench.encoders.transformers.meta import meta_model

#: the estimate of subword tokens a word when no tokenizer is at hand (English BPE / WordPiece: about 1.3)
SUBWORDS_PER_WORD = 1.3
#: bytes a weight in each ``encoder.dtype``
DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}
#: files whose presence means a directory holds weights
WEIGHT_GLOBS = ("*.safetensors", "pytorch_model*.bin", "*.safetensors.index.json", "pytorch_model.bin.index.json")
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "vocab.json", "spiece.model", "sentencepiece.bpe.model")
#: the sizes a config.json must state for plan to price it: (key, largest accepted, required). The bounds are far
#: past any model this benchmark could run (the largest open models: ~130 layers, width ~16k, ~1M positions)
SIZE_KEYS = (("num_hidden_layers", 1000, True), ("hidden_size", 65536, True), ("num_attention_heads", 65536, False),
             ("intermediate_size", 1_048_576, False), ("max_position_embeddings", 16_777_216, False),
             ("vocab_size", 16_777_216, False))
SIZE_MEANING = {"num_hidden_layers": "blocks", "hidden_size": "width", "num_attention_heads": "attention heads",
                "intermediate_size": "feed-forward width", "max_position_embeddings": "longest input",
                "vocab_size": "vocabulary"}


@dataclass(frozen=True)
class ModelSize:
    """``params`` (all), ``non_embedding`` (outside embedding tables), ``blocks`` (L), ``hidden`` (d_model)."""

    params: int
    non_embedding: int
    blocks: int
    hidden: int
    window: int
    config: Any = None  # the model's config (plan's memory per device builds from it)


def has_weights(directory: Path) -> bool:
    return any(any(directory.glob(pattern)) for pattern in WEIGHT_GLOBS)


def config_only(spec: Mapping[str, Any]) -> Path | None:
    """The model directory of a transformers ``spec`` that holds a config.json and no weights (price it from the
    config), else None."""
    path = Path(str(spec.get("path") or "")).expanduser()
    if spec.get("kind") != "transformers" or not (path / "config.json").is_file() or has_weights(path):
        return None
    return path


def check_sizes(path: Path) -> None:
    """The sizes plan prices a config.json by (:data:`SIZE_KEYS`), each an integer in its range, the required ones
    present under their own name or the model type's (``n_layer``: GPT-2's ``num_hidden_layers``, from the type's
    config class's ``attribute_map``): one ConfigError line naming the file and key. Without the check a missing key
    was priced as the class's default, 0 layers divided by zero, a string or a float was AutoConfig's traceback,
    and a million layers were built for a quarter of an hour."""
    import json

    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: not readable as JSON ({str(exc).splitlines()[0]})") from None
    from transformers import CONFIG_MAPPING  # lazy: transformers

    kind = raw.get("model_type") if isinstance(raw, dict) else None
    if not isinstance(kind, str) or kind not in CONFIG_MAPPING:
        return           # no model type transformers knows: AutoConfig's own line (encoders.transformers._load)
    aliases = getattr(CONFIG_MAPPING[kind], "attribute_map", {}) or {}
    for key, high, required in SIZE_KEYS:
        names = [k for k in dict.fromkeys((key, aliases.get(key, key))) if k in raw]
        expected = f"an integer in 1..{high:,}"
        if not names:
            if required:
                raise ConfigError(f"{path}: no {'/'.join(dict.fromkeys((key, aliases.get(key, key))))}; expected "
                                  f"{expected} (the model's {SIZE_MEANING[key]}), not its class's default")
            continue
        value = raw[names[0]]
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= high:
            raise ConfigError(f"{path}: {names[0]} expected {expected} (the model's {SIZE_MEANING[key]}), "
                              f"found {value!r}")


def model_size(directory: Path) -> ModelSize:
    """Parameter counts of the model ``directory``'s config.json describes, built on the meta device (its sizes
    checked first: :func:`check_sizes`; a config the model class refuses is one ConfigError line too)."""
    import torch  # lazy: torch
    from transformers import AutoConfig  # lazy: transformers

    from elmo_bench.encoders.transformers.loading import _load, position_limit  # lazy: torch

    check_sizes(directory / "config.json")      # before AutoConfig: its strict fields raise tracebacks
    config = _load(AutoConfig, str(directory), None, True)
    try:
        model = meta_model(config)
    except (ValueError, TypeError, RuntimeError, ZeroDivisionError, AttributeError, KeyError) as exc:
        first = next((line for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
        raise ConfigError(f"{directory / 'config.json'}: the model cannot be built from it ({first[:200]})") from None
    embedding = {id(p) for m in model.modules() if isinstance(m, torch.nn.Embedding) for p in m.parameters()}
    params = list(model.parameters())
    return ModelSize(sum(p.numel() for p in params), sum(p.numel() for p in params if id(p) not in embedding),
                     int(config.num_hidden_layers), int(config.hidden_size), position_limit(config) or 512, config)


def blocks_run(indices: Sequence[int] | None, blocks: int) -> int:
    """How many blocks a pass runs: up to the deepest index asked (index k is block k's input), all for the last."""
    deepest = blocks if indices is None else max(indices)
    return blocks if deepest >= blocks else deepest


def flops_per_token(non_embedding: int, blocks: int, ran: int, n_ctx: float, hidden: int) -> int:
    """Kaplan et al. (2020) forward, over the blocks that run: 2 N ran/L + 2 ran n_ctx d_model."""
    return int(round(2 * non_embedding * ran / blocks + 2 * ran * n_ctx * hidden))


def subword_counts(directory: Path, sentences: Sequence[Sequence[str]]) -> tuple[list[int], str | None]:
    """Subword tokens (special tokens included) of each sentence, from the model's tokenizer when its files are
    there, else estimated; and the note that says they were estimated (None when counted)."""
    if any((directory / name).is_file() for name in TOKENIZER_FILES):
        from elmo_bench.encoders.transformers.loading import load_tokenizer  # lazy: torch

        tokenizer = load_tokenizer(str(directory))
        encoded = tokenizer([list(s) for s in sentences], is_split_into_words=True) if sentences else None
        return ([len(ids) for ids in encoded["input_ids"]] if encoded else []), None
    return ([round(SUBWORDS_PER_WORD * len(s)) + 2 for s in sentences],
            f"no tokenizer in {directory.name}: subword counts estimated at {SUBWORDS_PER_WORD:g} a word plus 2 "
            f"special tokens a sentence")


def config_cost_numbers(directory: Path, spec: Mapping[str, Any], sentences: Sequence[Sequence[str]]
                        ) -> dict[str, Any]:
    """Everything ``plan`` prices a config-only transformers encoder by: parameters, weight bytes in the dtype,
    the layer indices kept, FLOPs per word position, and a note when subword counts were estimated."""
    size = model_size(directory)
    indices = layer_indices(spec.get("layers"), size.blocks + 1, model=f"{directory.name} ({size.blocks + 1} layers)")
    window = min(size.window, int(spec.get("max_length") or size.window))
    sentences = [list(s) for s in sentences if s]
    counts, note = subword_counts(directory, sentences)
    words = sum(len(s) for s in sentences)
    n_ctx = sum(min(c, window) for c in counts) / len(counts) if counts else float(window)
    per_token = flops_per_token(size.non_embedding, size.blocks, blocks_run(indices, size.blocks), n_ctx,
                                size.hidden)
    per_word = sum(counts) / words if words else SUBWORDS_PER_WORD
    dtype = str(spec.get("dtype") or "float32")
    kept = all_or(indices, size.blocks + 1)
    longest = min(max(counts, default=window), window)
    passed = int(spec.get("max_tokens") or int(spec.get("batch_size") or 32) * longest)
    return {"params": size.params, "weight_bytes": size.params * DTYPE_BYTES[dtype], "dtype": dtype,
            "layer_indices": kept, "dim": size.hidden, "flops_per_position": int(round(per_token * per_word)),
            "note": note, "devices": device_rows(size.config, spec, passed, longest, kept)}
