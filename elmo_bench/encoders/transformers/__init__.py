"""``encoder=transformers``: any Hugging Face ``AutoModel`` as a frozen encoder of words, every hidden state a layer.

The kind's folder: loading.py (model directory or hub name, tokenizer, weights in ``encoder.dtype``), windows.py
(long sentences in overlapping windows of whole words), encoder.py (the Encoder: pooling, forward passes),
hf_forward.py (hidden states, stopping after the deepest block kept), model_size.py and cost.py (``plan``'s
price), random.py (``encoder.random_init=all``), erase.py (``encoder.erase`` inside the forward pass),
placement.py and dispatch.py (``encoder.device_map``: a model spread over devices by accelerate), devices.py
(``plan``'s memory per device). This module
declares the kind and its hooks (elmo_bench.encoders.kinds) and imports none of them until a hook runs.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from elmo_bench.base.errors import ConfigError
from elmo_bench.base.overrides import quoted
from elmo_bench.encoders.erase_settings import OFF as ERASE_OFF
from elmo_bench.encoders.kinds import EncoderKind, Erasure
from elmo_bench.encoders.layer_select import all_or, layer_indices
from elmo_bench.encoders.settings import path_like
from elmo_bench.encoders.transformers.cost import price
from elmo_bench.encoders.transformers.placement import check as check_placement

NAME = "transformers"


def build(spec: Mapping[str, Any], amp: Any = "off") -> Any:
    """``encoder=transformers``: ``encoder.path`` (a directory or hub name) and its options; the run's ``amp`` is
    the default precision."""
    from elmo_bench.encoders.transformers.encoder import from_spec  # lazy: torch

    return from_spec(spec, amp)


def check_path(spec: Mapping[str, Any]) -> None:
    """A path that looks like a path (``path_like``) but is no directory: one line. Hub names are left to the hub."""
    path = str(spec["path"])
    found = Path(path).expanduser()
    if path_like(path) and not found.is_dir():
        raise ConfigError(f"encoder={NAME}: encoder.path {path}: "
                          f"{'is a file' if found.exists() else 'no such directory'} (expected a model directory in "
                          f"the save_pretrained layout, or a hub name such as bert-base-cased)")


def layer_ids(spec: Mapping[str, Any], files: Any, quick: bool) -> list[int] | None:
    """A model directory's layers from its config.json (no weight read; ``quick``: not at all, it needs the
    transformers library)."""
    directory = Path(str(spec.get("path")))
    if quick or not (directory / "config.json").is_file():
        return None
    from transformers import AutoConfig  # lazy: transformers

    total = int(AutoConfig.from_pretrained(str(directory)).num_hidden_layers) + 1
    return all_or(layer_indices(spec.get("layers"), total, model=f"{directory.name} ({total} layers)"), total)


def cli_settings(args: Any, layers: Any) -> dict[str, Any]:
    """``--pooling``, ``--revision`` and embed's ``--layers`` as encoder settings."""
    return {"pooling": args.pooling, "revision": args.revision, "layers": layers}


def overrides(args: Any) -> list[str]:
    """``--pooling`` and ``--revision`` as a run's overrides."""
    return [f"encoder.pooling={args.pooling}"] + ([f"encoder.revision={quoted(args.revision)}"] if args.revision
                                                  else [])


def _top(encoder: Any) -> int:
    """The block below the last hidden state: nothing runs after the last one."""
    return int(getattr(encoder, "total_layers", encoder.num_layers)) - 2


def _widths(encoder: Any, layer: int) -> list[int]:
    """One stream of the model's width."""
    return [int(encoder.dim)]


def _install(encoder: Any, eraser: Any) -> None:
    from elmo_bench.encoders.transformers.erase import install_hook  # lazy: torch

    install_hook(encoder, eraser)


def _top_from_files(spec: Mapping[str, Any], bilm_options: str | None) -> int | None:
    """The block below the last hidden state, from a model directory's config.json (None without one)."""
    import json

    config = Path(str(spec["path"] if "path" in spec else "")) / "config.json"
    if not config.is_file():
        return None
    blocks = json.loads(config.read_text())
    return int(blocks["num_hidden_layers"]) - 1 if "num_hidden_layers" in blocks else None


def _randomise(encoder: Any, mode: str, seed: int) -> Any:
    from elmo_bench.encoders.transformers.random import randomise_transformer  # lazy: torch

    return randomise_transformer(encoder, mode, seed)


#: ``encoder=transformers`` (elmo_bench.encoders.kinds)
ENCODER_KIND = EncoderKind(
    "transformers", build, conf={
        # Any Hugging Face AutoModel: every hidden state is a layer.
        #   python run.py task=ner embedder=glove_elmo encoder=transformers encoder.path=DIR [encoder.pooling=first]
        "path": "???",          # a model directory (save_pretrained layout) or a hub name such as bert-base-cased
        "revision": None,       # hub revision (branch, tag or commit); null = the default branch
        "pooling": "auto",      # auto (last for a causal model, first otherwise) | first | last | mean
        "amp": "${amp}",        # off = fp32 (default, follows the run's amp) | bf16 | fp16 (autocast on the model)
        "max_length": None,     # window in tokens; null = the tokenizer's model_max_length or the position table
        "batch_size": 32,       # windows per forward pass
        "cache_dtype": "fp16",  # activation cache storage: fp16 (default) | fp32 (layers beyond +-65504, e.g. T5)
        "random_init": None,    # all = the model built from its config with random weights (a baseline)
        "random_seed": None,    # the seed of those weights (null = 0)
        "layers": None,         # null = every layer | [0,8,16] (layer indices, 0 = embedding output) | every:K
        "dtype": "float32",     # the weights' dtype: float32 | bfloat16 | float16
        # max_tokens bounds memory; the vectors stay the same up to rounding (one fp16 step in a few values)
        "max_tokens": None,     # null = batch_size windows per forward pass | N = each pass up to N subword tokens
        "erase": dict(ERASE_OFF),  # amnesic probing inside the forward pass (docs/bits-and-erasure.md): off
        # a model larger than one device, spread by Hugging Face accelerate (placement only: not in the identity)
        "device_map": None,     # null = whole on the run's device | auto | balanced | sequential | {"module": device}
        "max_memory": None,     # null = what each device has | {"0": "70GiB", "1": "80GiB", "cpu": "100GiB"}
        "offload_folder": None,  # null = no disk offload | DIR: weights beyond max_memory kept on disk there
    }, path="a model directory or a hub name", check_path=check_path, check=check_placement, model_keys=True,
    random_modes=("all",), randomise=_randomise, erasure=Erasure(
        _top, _top_from_files, _widths, _install, "; its last layer feeds no block"),
    price=price, layer_ids=layer_ids, cli_settings=cli_settings, overrides=overrides, causal_head=True)
