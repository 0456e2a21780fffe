"""Loading a Hugging Face model for ``encoder=transformers`` (elmo_bench.encoders.transformers.encoder): the model
directory or hub name checked, the fast tokenizer (byte-level BPE ones made to add the prefix space) and the model
loaded in ``encoder.dtype`` and frozen, the window the model takes.

Offline use: a hub name is looked up in the local Hugging Face cache only when ``HF_HUB_OFFLINE`` is set, when the
hub cannot be reached (a 3 s connection test, so no minute of retries), or after the online look-up failed; a model
that is in neither is one line naming it and suggesting ``encoder.path=DIR``.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Mapping

import torch

from elmo_bench.base.errors import ConfigError
from elmo_bench.encoders.settings import DEFAULT_DTYPE, path_like

#: ``encoder.dtype`` → the torch dtype the weights are loaded in
TORCH_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}

def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def hub_reachable(timeout: float = 3.0) -> bool:
    """True when the hub's endpoint (huggingface_hub's, ``HF_ENDPOINT`` when set) answers one HTTP request within
    ``timeout`` (any status): an unreachable hub is then skipped at once instead of after a minute of retries."""
    import urllib.error
    import urllib.request

    from huggingface_hub import constants  # lazy: huggingface_hub

    try:
        urllib.request.urlopen(urllib.request.Request(constants.ENDPOINT, method="HEAD"), timeout=timeout).close()
    except urllib.error.HTTPError:
        return True  # it answered
    except (OSError, ValueError):  # URLError, refused, timeout, no name; ValueError: an endpoint that is no URL
        return False
    return True


def check_model_directory(name: str) -> Path | None:
    """The local model directory ``name`` names (its config.json valid JSON), None for a hub name; ConfigError
    for a path that is not a directory."""
    if not path_like(name):
        return None
    path = Path(name).expanduser()
    if not path.is_dir():
        found = "is a file" if path.exists() else "no such directory"
        raise ConfigError(f"encoder=transformers: encoder.path {name}: {found} (expected a model directory in the "
                          f"save_pretrained layout, or a hub name such as bert-base-cased)")
    config = path / "config.json"
    if config.is_file():
        try:
            json.loads(config.read_text(encoding="utf-8"))
        except (ValueError, OSError) as exc:
            raise ConfigError(f"encoder=transformers: {config}: not valid JSON ({exc}); expected the model's "
                              f"config as save_pretrained writes it") from None
    return path


def _one_line(exc: BaseException) -> str:
    return f"{type(exc).__name__}: " + " ".join(line.strip() for line in str(exc).splitlines() if line.strip())


def _load(loader: Any, name: str, revision: str | None, local: bool, **kwargs: Any) -> Any:
    """``loader.from_pretrained`` of a directory, or of a hub name: from the local cache when offline or when the
    hub cannot be reached, else online with a local-cache retry; a name in neither is one ConfigError line."""
    if local:
        try:
            return loader.from_pretrained(name, **kwargs)
        except (OSError, ValueError, KeyError, TypeError) as exc:  # no config.json, a config of no known model...
            raise ConfigError(f"encoder=transformers: {name}: cannot be loaded ({_one_line(exc)[:300]})") from None
    attempts = [True] if _offline() or not hub_reachable() else [False, True]
    for local_only in attempts:
        try:
            return loader.from_pretrained(name, revision=revision, local_files_only=local_only, **kwargs)
        except (OSError, ValueError) as exc:
            failure = exc
    where = f"revision {revision}" if revision else "default revision"
    raise ConfigError(f"encoder=transformers: hub model {name!r} ({where}) is not in the local Hugging Face cache "
                      f"and could not be downloaded ({type(failure).__name__}); download it where there is internet "
                      f"or give a local copy: encoder.path=DIR") from None


def _byte_level_prefix_space(tokenizer: Any) -> None:
    """Make every ByteLevel step of a fast tokenizer's pre-tokenizer add the prefix space (a byte-level BPE saved as a
    generic fast tokenizer keeps ``add_prefix_space=False`` there whatever the loader was told)."""
    from tokenizers import Tokenizer  # lazy: tokenizers

    backend = tokenizer.backend_tokenizer
    whole = json.loads(backend.to_str())

    def fix(node: Any) -> bool:
        changed = False
        if isinstance(node, dict):
            if node.get("type") == "ByteLevel" and node.get("add_prefix_space") is False:
                node["add_prefix_space"], changed = True, True
            for value in node.values():
                changed = fix(value) or changed
        elif isinstance(node, list):
            for value in node:
                changed = fix(value) or changed
        return changed

    if whole.get("pre_tokenizer") and fix(whole["pre_tokenizer"]):
        backend.pre_tokenizer = Tokenizer.from_str(json.dumps(whole)).pre_tokenizer


def _byte_level(tokenizer: Any) -> bool:
    return '"ByteLevel"' in json.dumps(json.loads(tokenizer.backend_tokenizer.to_str()).get("pre_tokenizer"))


def check_tokenizer_files(name: str, local: bool) -> None:
    """ConfigError (one line) for a model directory holding ``tokenizer.json`` without ``tokenizer_config.json``:
    the class the tokenizer was saved with is then unknown, and Hugging Face would build the class of config.json's
    model type around it (BertTokenizer re-lowercases a cased vocabulary): other ids, other layers, no error."""
    directory = Path(name)
    if local and (directory / "tokenizer.json").is_file() and not (directory / "tokenizer_config.json").is_file():
        raise ConfigError(f"encoder=transformers: {directory} has tokenizer.json but no tokenizer_config.json: the "
                          f"tokenizer class it was saved with is unknown (loading it as another class gives other "
                          f"ids); copy tokenizer_config.json from the model's source (save_pretrained writes both)")


def load_tokenizer(name: str, revision: str | None = None, local: bool = True) -> Any:
    """The model's fast tokenizer, byte-level BPE ones adding the prefix space (needed for pre-split words), checked:
    a vocabulary of special tokens only, or a byte-level one that still encodes a word inside a sentence as at its
    start, is one ConfigError line."""
    from transformers import AutoTokenizer

    check_tokenizer_files(name, local)
    tokenizer = _load(AutoTokenizer, name, revision, local, use_fast=True)
    if not getattr(tokenizer, "is_fast", False):
        raise ConfigError(f"encoder=transformers: {name} has no fast tokenizer (tokenizer.json); word alignment "
                          f"(word_ids) needs one")
    plain = len(set(tokenizer.get_vocab().values()) - set(tokenizer.all_special_ids))
    if plain == 0:
        raise ConfigError(f"encoder=transformers: {name}: the tokenizer has no token but its {len(tokenizer)} special "
                          f"ones (are the tokenizer files, tokenizer.json or vocab.txt / vocab.json, missing?)")
    if getattr(tokenizer, "add_prefix_space", None) is False:
        tokenizer = _load(AutoTokenizer, name, revision, local, use_fast=True, add_prefix_space=True)
    if _byte_level(tokenizer):
        _byte_level_prefix_space(tokenizer)
        inside = tokenizer([["a", "the"]], is_split_into_words=True, add_special_tokens=False)
        running = tokenizer(["a the"], add_special_tokens=False)["input_ids"][0]
        if list(inside["input_ids"][0]) != list(running):
            raise ConfigError(f"encoder=transformers: {name}: its byte-level tokenizer encodes a word inside a "
                              f"sentence as at the sentence's start (add_prefix_space cannot be applied); save it "
                              f"as its model's own tokenizer class")
    return tokenizer


def dtype_keyword() -> str:
    """The ``from_pretrained`` keyword of the weights' dtype: ``dtype`` from transformers 4.56, ``torch_dtype``
    before."""
    import transformers  # lazy: transformers

    major, minor = (int(part) for part in transformers.__version__.split(".")[:2])
    return "dtype" if (major, minor) >= (4, 56) else "torch_dtype"


def _load_model(name: str, revision: str | None, local: bool, dtype: str,
                placed: Mapping[str, Any] | None = None) -> Any:
    """The AutoModel of ``name``, its weights loaded in ``dtype`` (float32: exactly today's call, cast after);
    of an encoder-decoder model (T5, BART) only its encoder, whose hidden states are the layers. ``placed``: the
    keywords that spread it over devices (elmo_bench.encoders.transformers.dispatch.load_keywords), the dtype
    then always given (a dispatched model is not cast after)."""
    from transformers import AutoModel  # lazy: transformers

    extra = {} if dtype == DEFAULT_DTYPE and not placed else {dtype_keyword(): TORCH_DTYPES[dtype], **placed}
    try:
        model = _load(AutoModel, name, revision, local, **extra)
    except Exception as exc:  # safetensors' SafetensorError is a bare Exception; torch.load's are many
        broken = broken_weights(Path(name)) if local else None
        if broken is None:
            raise
        raise ConfigError(f"encoder=transformers: {broken}: cannot be read ({_one_line(exc)[:200]}); the weights "
                          f"file is truncated or corrupt: copy or download it again") from None
    if getattr(model.config, "is_encoder_decoder", False):
        spread = getattr(model, "hf_device_map", None)
        model = model.get_encoder()
        if spread is not None:  # its inputs go where the whole model's would (dispatch.main_device)
            model.hf_device_map = spread
    return model


def broken_weights(directory: Path) -> Path | None:
    """The first weights file of a model directory that does not open (a truncated ``model.safetensors``, a cut
    ``pytorch_model.bin``), None when they all do."""
    from safetensors import safe_open  # lazy: safetensors

    for path in sorted(directory.glob("*.safetensors")):
        try:
            with safe_open(str(path), "pt") as handle:
                handle.keys()
        except Exception:  # SafetensorError derives from Exception only
            return path
    for path in sorted(directory.glob("pytorch_model*.bin")):
        try:
            torch.load(path, map_location="cpu", weights_only=True)
        except Exception:  # RuntimeError, EOFError, UnpicklingError...
            return path
    return None


def frozen(model: Any, dtype: str = DEFAULT_DTYPE) -> Any:
    """``model`` in eval mode without gradients; float32 made sure of by ``.float()``, as always. A model loaded
    or built in another dtype is left as loaded: ``.to(dtype)`` would also round the buffers that Hugging Face
    keeps in float32 on purpose (rotary frequencies), and the layers would no longer be the model's."""
    spread = isinstance(getattr(model, "hf_device_map", None), dict)  # loaded in its dtype, where the map put it
    model = model.eval().float() if dtype == DEFAULT_DTYPE and not spread else model.eval()
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    return model


def position_limit(model: Any) -> int | None:
    """The model's position table (RoBERTa-style tables hold two more rows than positions: the padding offset);
    None for a model without one (relative positions). ``model``: the model or its config."""
    config = getattr(model, "config", model)
    for key in ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length"):
        value = getattr(config, key, None)
        if isinstance(value, int) and value > 0:
            return value - 2 if "roberta" in str(getattr(config, "model_type", "")) else value
    return None


def model_window(model: Any, tokenizer: Any, max_length: int | None = None) -> int:
    """Longest input the model takes: ``max_length`` when given (one ConfigError line above the position table),
    else the smaller of the tokenizer's ``model_max_length`` (when it states one) and the position table; 512
    when neither states a limit."""
    positions = position_limit(model)
    if max_length:
        if positions is not None and int(max_length) > positions:
            raise ConfigError(f"config: encoder.max_length {max_length} exceeds the model's position table "
                              f"({positions} positions); expected at most {positions} or null")
        return int(max_length)
    stated = getattr(tokenizer, "model_max_length", None)
    limits = [v for v in (stated if isinstance(stated, int) and 0 < stated < 1_000_000 else None, positions) if v]
    return min(limits) if limits else 512
