"""``encoder=transformers``: any Hugging Face ``AutoModel`` as a frozen encoder of words.

Every hidden state is a layer: the embedding output, then one per block (BERT-base: 13 layers of 768;
``encoder.layers`` keeps a subset). Encoder-only and decoder-only models are used whole; of an encoder-decoder model
(T5, BART) only its encoder. Words are the tasks' own tokens: each sentence goes through the fast tokenizer
pre-split (``is_split_into_words=True``; byte-level BPE tokenizers, GPT-2 and RoBERTa, are loaded with
``add_prefix_space=True``, set on the pre-tokenizer itself, so that a word inside a sentence is tokenised as it
would be in running text; a tokenizer where that cannot be done is refused), ``word_ids()`` maps subwords to words,
and a word's vector is its first subword's (``pooling=first``, what ``auto`` gives an encoder-only model, as BERT's
NER recipe), its last (``last``, natural for left-to-right models) or the mean of its subwords (``mean``). A word
the tokenizer turns into no subword at all (a lone control character) is given the unknown token.

Long sequences: a sentence whose tokens (with the model's special tokens) exceed the model window is encoded in
overlapping windows of whole words, each holding at most ``content`` subwords (``content`` = window minus the
special tokens, which every window gets), each starting at the first word at least ``content // 2`` subwords after
the previous start, the last one ending at the sentence's end (elmo_bench.encoders.transformers.word_windows).
Rule: **each word is taken from the window in which it has the most context, i.e. which maximises min(subwords
before it, subwords after it) within the window; ties go to the earlier window.** A word of more than
``content // 2`` subwords in such a long sentence is given the unknown token (so every word fits whole in some
window); :meth:`TransformersEncoder.forced_unknown` counts them (logged, and recorded per split in results.json and
in the cache entry's meta.json). **A sentence that fits is never altered**: it is tokenised and encoded exactly
once, as one window. The window is ``encoder.max_length`` (at most the model's position table), else the smaller of
the tokenizer's ``model_max_length`` and the position table.

Checks before any layer is trusted: a path-like ``encoder.path`` (see :func:`path_like`) that is not a directory is
"no such directory", never a hub look-up; a corrupt ``config.json`` is one line; a tokenizer whose vocabulary is
special tokens only (a model directory without its tokenizer files) is refused, and so is one that turns more than
half the words of the run's first training sentence into the unknown token (:meth:`check_sentence`).

Precision: weights in ``encoder.dtype`` (float32, the default, or bfloat16 / float16: loaded in that dtype, and a
device that cannot run it is one line), and under autocast when ``amp`` says so (the run's ``amp`` by default);
layers always come back as float32. Device: wherever :meth:`TransformersEncoder.to` put the model.

Large models (issue 46): ``encoder.layers`` keeps only the model's layers asked for (indices, or ``every:K``) and
stops the forward pass after the deepest requested block (elmo_bench.encoders.hf_forward); ``encoder.max_tokens``
fills each forward pass up to that many subword tokens, shortest windows first, and every pass is pooled on the
device at once. ``pooling=auto`` (the default) is ``last`` for a model that behaves causally (changing its last
token leaves every earlier position's states bit-identical) and ``first`` otherwise. With every layer, float32 and
an encoder-only model the identity is exactly what it was before these settings existed.

Offline use: a hub name is looked up in the local Hugging Face cache only when ``HF_HUB_OFFLINE`` is set, when the
hub cannot be reached (a 3 s connection test, so no minute of retries), or after the online look-up failed; a model that is in neither is one line naming it and suggesting ``encoder.path=DIR``.
"""
from __future__ import annotations

import json
import logging
import os
from contextlib import nullcontext
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import torch

from elmo_bench.base.device import AMP_DTYPES, normalise_amp
from elmo_bench.base.errors import ConfigError, DataError
from elmo_bench.encoders.hf_forward import (
    find_blocks,
    hooked_state_list,
    hooks_match,
    is_causal,
    state_list,
    token_batches,
    without_kv_cache,
)
from elmo_bench.encoders.kinds import EncoderKind, need_path
from elmo_bench.encoders.layer_select import all_or, layer_indices
from elmo_bench.encoders.model_files import directory_hash
from elmo_bench.encoders.settings import DEFAULT_DTYPE, check_encoder_settings, path_like

log = logging.getLogger(__name__)

POOLINGS = ("auto", "first", "last", "mean")
#: ``encoder.dtype`` → the torch dtype the weights are loaded in, and the ``precision`` the identity records
TORCH_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
#: at most this many sentences' forced-unknown counts are kept between plan() and forced_unknown()
FORCED_MEMO = 200_000
DTYPE_PRECISION = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}


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


def _load_model(name: str, revision: str | None, local: bool, dtype: str) -> Any:
    """The AutoModel of ``name``, its weights loaded in ``dtype`` (float32: exactly today's call, cast after);
    of an encoder-decoder model (T5, BART) only its encoder, whose hidden states are the layers."""
    from transformers import AutoModel  # lazy: transformers

    extra = {} if dtype == DEFAULT_DTYPE else {dtype_keyword(): TORCH_DTYPES[dtype]}
    try:
        model = _load(AutoModel, name, revision, local, **extra)
    except Exception as exc:  # safetensors' SafetensorError is a bare Exception; torch.load's are many
        broken = broken_weights(Path(name)) if local else None
        if broken is None:
            raise
        raise ConfigError(f"encoder=transformers: {broken}: cannot be read ({_one_line(exc)[:200]}); the weights "
                          f"file is truncated or corrupt: copy or download it again") from None
    if getattr(model.config, "is_encoder_decoder", False):
        model = model.get_encoder()
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
    model = model.eval().float() if dtype == DEFAULT_DTYPE else model.eval()
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


def word_windows(cum: Sequence[int], content: int) -> list[tuple[int, int]]:
    """Windows [first word, end word) over a sentence whose word k has subwords [cum[k], cum[k+1]): each at most
    ``content`` subwords, each starting at the first word at least ``content // 2`` subwords after the previous
    start, the last one ending at the last word. One window when everything fits. Words must be at most
    ``content // 2`` subwords long: then every word lies whole inside some window."""
    n = len(cum) - 1
    stride = max(1, content // 2)
    windows: list[tuple[int, int]] = []
    start = 0
    while True:
        end = start
        while end < n and cum[end + 1] - cum[start] <= content:
            end += 1
        if end == n:
            # the last window ends at the last word and reaches back as far as it fits
            first = start
            while first > 0 and cum[n] - cum[first - 1] <= content:
                first -= 1
            while windows and windows[-1][0] >= first:  # a window inside the last one adds nothing
                windows.pop()
            windows.append((first, n))
            return windows
        windows.append((start, end))
        target = cum[start] + stride
        following = start + 1
        while following < n and cum[following] < target:
            following += 1
        start = following


def best_window(windows: Sequence[tuple[int, int]], cum: Sequence[int], word: int) -> int:
    """The window in which ``word`` has the most context: the largest min(subwords before it, subwords after it)
    inside the window, among the windows that hold it; ties go to the earlier window."""
    best, score = -1, -1
    for index, (a, b) in enumerate(windows):
        if a <= word < b:
            context = min(cum[word] - cum[a], cum[b] - cum[word + 1])
            if context > score:
                best, score = index, context
    return best


def fit_picks(rows: Sequence[int], word_ids: Sequence[Sequence[int | None]]) -> np.ndarray:
    """(sentence, word, window, first, last position) of every word of sentences that each fit one window (window
    k is ``rows[k]``'s, its word ids ``word_ids[k]``), in order of window then word: a word's first and last
    subword positions found for all windows at once (what :meth:`TransformersEncoder._spans` gives per window)."""
    lengths = np.array([len(ids) for ids in word_ids], dtype=np.int64)
    flat = np.array([-1 if w is None else w for ids in word_ids for w in ids], dtype=np.int64)
    window = np.repeat(np.arange(len(word_ids), dtype=np.int64), lengths)
    position = np.arange(len(flat), dtype=np.int64) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    words = flat >= 0
    flat, window, position = flat[words], window[words], position[words]
    if not len(flat):
        return np.zeros((0, 5), dtype=np.int64)
    key = window * (int(flat.max()) + 1) + flat  # ascending (window, word)
    _, first = np.unique(key, return_index=True)
    _, from_end = np.unique(key[::-1], return_index=True)
    last = len(key) - 1 - from_end
    sentence = np.asarray(rows, dtype=np.int64)[window[first]]
    return np.stack([sentence, flat[first], window[first], position[first], position[last]], axis=1)


class TransformersEncoder:
    """A frozen Hugging Face model as an Encoder (see the module docstring for pooling, windows, precision)."""

    whole_sequences = True  # windows are this encoder's own business: the cache never cuts its sequences
    #: set by elmo_bench.encoders.random_init on a model rebuilt with random weights (random_init, random_seed)
    randomised: dict[str, Any] = {}
    #: encoder.erase's identity when an eraser runs inside (elmo_bench.encoders.erasing); None = as trained
    erased: dict[str, Any] | None = None

    def __init__(self, path: str, pooling: str = "auto", revision: str | None = None, amp: Any = "off",
                 max_length: int | None = None, batch_size: int = 32, layers: Any = None,
                 dtype: str = DEFAULT_DTYPE, max_tokens: int | None = None) -> None:
        check_encoder_settings({"kind": "transformers", "path": path, "pooling": pooling, "revision": revision,
                                "max_length": max_length, "batch_size": batch_size, "layers": layers,
                                "dtype": dtype, "max_tokens": max_tokens})
        self.path, self.pooling_asked, self.revision = str(path), pooling, revision
        self.amp = normalise_amp(amp, "encoder.amp")
        self.dtype = str(dtype or DEFAULT_DTYPE)
        directory = check_model_directory(self.path)
        local = directory is not None
        if local:
            self.path = str(directory)
        self.tokenizer = load_tokenizer(self.path, revision, local)
        from transformers import AutoConfig  # lazy: transformers

        config = _load(AutoConfig, self.path, revision, local)  # every check below before any weight is read
        self._set_window(config, max_length)
        self._set_layers(config, layers, max_tokens)
        self.batch_size = int(batch_size)
        self.model = frozen(_load_model(self.path, revision, local, self.dtype), self.dtype)
        config = self.model.config
        self.pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        self.model_hash = directory_hash(Path(self.path)) if local else str(
            getattr(config, "_commit_hash", None) or revision or "unknown")
        self.causal = self._behaves_causal(torch.device("cpu"))
        self.pooling = pooling if pooling != "auto" else ("last" if self.causal else "first")
        self._hooks_checked: dict[tuple[int, str], bool] = {}
        self._blocks: dict[tuple[int, str], Any] = {}
        #: forced-unknown counts :meth:`plan` found, so that :meth:`forced_unknown` need not tokenise them again
        self._forced_seen: dict[tuple[Any, ...], int] = {}

    def _set_window(self, architecture: Any, max_length: int | None) -> None:
        """The window (tokens per forward pass of one sentence), its special tokens and the content left."""
        self.window = model_window(architecture, self.tokenizer, max_length)
        self.specials = len(self.tokenizer([["a"]], is_split_into_words=True)["input_ids"][0]) - len(
            self.tokenizer([["a"]], is_split_into_words=True, add_special_tokens=False)["input_ids"][0])
        self.content = self.window - self.specials
        if self.content < 2:
            raise ConfigError(f"config: encoder.max_length {self.window} leaves no room for words after "
                              f"{self.specials} special tokens")

    def _set_layers(self, architecture: Any, layers: Any, max_tokens: int | None) -> None:
        """The model's layer indices kept (``encoder.layers``: None = every one), their count and width, and
        ``max_tokens`` checked against the window (one ConfigError line each, before any weight is read)."""
        self.total_layers = int(architecture.num_hidden_layers) + 1
        self.indices = layer_indices(layers, self.total_layers, model=f"{Path(self.path).name} ({self.total_layers} "
                                                                        f"layers)")
        self.num_layers = len(all_or(self.indices, self.total_layers))
        self.dim = int(architecture.hidden_size)
        self.max_tokens = None if max_tokens is None else int(max_tokens)
        if self.max_tokens is not None and self.max_tokens < self.window:
            raise ConfigError(f"config: encoder.max_tokens {self.max_tokens} is smaller than the model window "
                              f"({self.window} tokens): one sentence's window must fit one forward pass; raise "
                              f"encoder.max_tokens or set encoder.max_length <= {self.max_tokens}")

    def _probe_ids(self) -> tuple[list[int], int]:
        """A short input of plain vocabulary ids (within the model's embedding) and another id for its last."""
        limit = int(getattr(self.model.config, "vocab_size", 0) or 1 << 30)
        plain = sorted(set(self.tokenizer.get_vocab().values()) - set(self.tokenizer.all_special_ids))
        plain = [i for i in plain if i < limit][:7]
        return plain[1:], plain[0]

    def _behaves_causal(self, device: torch.device) -> bool:
        """:func:`elmo_bench.encoders.hf_forward.is_causal` on a short input; doubles as the check that the model
        runs in ``encoder.dtype`` on ``device`` (one ConfigError line where it cannot)."""
        ids, other = self._probe_ids()
        try:
            return is_causal(self.model, ids, other)
        except (RuntimeError, NotImplementedError) as exc:
            raise ConfigError(f"config: encoder.dtype={self.dtype}: {Path(self.path).name} cannot run in {self.dtype} "
                              f"on {device} ({_one_line(exc)[:200]}); choose another encoder.dtype") from None

    def identity(self) -> dict[str, Any]:
        """What keys the cache and the run: today's dict exactly for every layer in float32 of an encoder-only model;
        a layer subset, a dtype other than float32 and a causal model each add their entry."""
        precision = self.amp if self.amp != "off" else DTYPE_PRECISION[self.dtype]
        ident = {"kind": "transformers", "model": self.path if not Path(self.path).is_dir() else Path(self.path).name,
                 "revision": self.revision, "hash": self.model_hash, "pooling": self.pooling, "window": self.window,
                 "precision": precision, "model_type": getattr(self.model.config, "model_type", None),
                 **self.randomised}
        if self.indices is not None:
            ident["encoder_layer_indices"] = list(self.indices)
        if self.dtype != DEFAULT_DTYPE:
            ident["dtype"] = self.dtype
        if self.causal:
            ident["causal"] = True
        if self.erased is not None:     # encoder.erase: an eraser inside the forward pass (encoders.erasing)
            ident["erase"] = dict(self.erased)
        return ident

    def extras(self) -> dict[str, Any]:
        """Facts recorded beside the identity (the cache entry's meta.json): how pooling was chosen, whether the
        model behaved causally, the model's layer indices kept."""
        return {"pooling_asked": self.pooling_asked, "pooling": self.pooling, "causal": self.causal,
                "encoder_layer_indices": all_or(self.indices, self.total_layers), "dtype": self.dtype,
                "max_tokens": self.max_tokens}

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def to(self, device: torch.device | str) -> "TransformersEncoder":
        """The encoder on ``device``; a dtype other than float32 is tried there at once (one ConfigError line
        where the device cannot run it: bfloat16 on a GPU without it, say)."""
        before = self.device
        target = torch.device(device)
        if target.type == "cuda" and self.dtype == "bfloat16" and torch.cuda.is_available() and \
                not torch.cuda.is_bf16_supported():
            raise ConfigError(f"config: encoder.dtype=bfloat16: {target} does not support bfloat16; choose "
                              f"encoder.dtype=float16 or float32")
        self.model.to(target)
        if self.dtype != DEFAULT_DTYPE and self.device != before:
            self._behaves_causal(self.device)
        return self

    def _tokenize(self, sentences: Sequence[Sequence[str]]) -> list[tuple[list[int], list[int | None]]]:
        """(input ids with the model's special tokens, word index per position) of each word list, in one call."""
        encoded = self.tokenizer([list(s) for s in sentences], is_split_into_words=True, add_special_tokens=True)
        return [(list(encoded["input_ids"][i]), list(encoded.word_ids(i))) for i in range(len(sentences))]

    def _replacements(self, words: list[str], ids: list[int], word_ids: list[int | None]) -> tuple[set[int], int]:
        """(words to give the unknown token, how many of them only because the sentence is too long). A word of no
        subword (a lone control character) always; a word of more than ``content // 2`` subwords only when the
        sentence does not fit one window (so that each word fits whole in some window): a sentence that fits is
        never altered."""
        counts = [0] * len(words)
        for w in word_ids:
            if w is not None:
                counts[w] += 1
        empty = {i for i, c in enumerate(counts) if c == 0}
        if len(ids) + len(empty) <= self.window:
            return empty, 0
        limit = max(1, self.content // 2)
        long = {i for i, c in enumerate(counts) if c > limit}
        return empty | long, len(long)

    def _words_fit(self, words: list[str], word_ids: list[int | None], ids: list[int]) -> list[str] | None:
        """``words`` with the unknown token standing for each word :meth:`_replacements` names; None when none."""
        bad, forced = self._replacements(words, ids, word_ids)
        if words and len(self._forced_seen) < FORCED_MEMO:
            self._forced_seen[(self.window, self.content, *words)] = forced
        if not bad:
            return None
        unk = self.tokenizer.unk_token
        if unk is None:
            first = min(bad)
            raise DataError(f"encoder=transformers: word {words[first]!r} cannot be encoded whole in a window of "
                            f"{self.window} tokens and the tokenizer has no unknown token to stand for it")
        return [unk if i in bad else w for i, w in enumerate(words)]

    def forced_unknown(self, sentences: Sequence[Sequence[str]]) -> list[int]:
        """Per sentence, how many of its words become the unknown token because the sentence does not fit one
        window (words longer than half a window); recorded per split in results.json and the cache entry."""
        out = [0] * len(sentences)
        rows = []
        for i, words in enumerate(sentences):  # counted already by plan(): taken from there (and forgotten)
            seen = self._forced_seen.pop((self.window, self.content, *words), None) if len(words) else 0
            if seen is None:
                rows.append(i)
            else:
                out[i] = seen
        for start in range(0, len(rows), 1024):
            chunk = [list(sentences[i]) for i in rows[start: start + 1024]]
            for i, words, (ids, word_ids) in zip(rows[start: start + 1024], chunk, self._tokenize(chunk)):
                out[i] = self._replacements(words, ids, word_ids)[1]
        return out

    def check_sentence(self, words: Sequence[str], where: str) -> None:
        """ConfigError when more than half the words of ``words`` (the run's first training sentence) become the
        unknown token: a tokenizer that does not know the language or lost its vocabulary."""
        words = [w for w in words]
        if not words or self.tokenizer.unk_token_id is None:
            return
        encoded = self.tokenizer([words], is_split_into_words=True, add_special_tokens=False)
        ids, word_ids = encoded["input_ids"][0], encoded.word_ids(0)
        pieces: dict[int, list[int]] = {}
        for token, w in zip(ids, word_ids):
            if w is not None:
                pieces.setdefault(w, []).append(token)
        unknown = sum(1 for w in range(len(words)) if all(t == self.tokenizer.unk_token_id for t in pieces.get(w, [])))
        if unknown * 2 > len(words):
            raise ConfigError(f"encoder=transformers: {self.path}: {unknown} of the {len(words)} words of {where} "
                              f"become the unknown token {self.tokenizer.unk_token!r}; this tokenizer does not fit "
                              f"the data (wrong model, or its vocabulary files are missing)")

    @staticmethod
    def _spans(word_ids: list[int | None], words: int, offset: int = 0) -> dict[int, tuple[int, int]]:
        """{word index + offset: (first position, last position)} from a window's word ids."""
        spans: dict[int, tuple[int, int]] = {}
        for position, w in enumerate(word_ids):
            if w is not None and w < words:
                first, _ = spans.get(w + offset, (position, position))
                spans[w + offset] = (first, position)
        return spans

    def plan(self, sentences: Sequence[Sequence[str]]) -> tuple[list[list[int]], list[tuple[int, int, int, int, int]]]:
        """Windows (token ids with special tokens) and, per word, (sentence, word, window, first, last position)."""
        windows, picks = self._plan(sentences)
        return windows, [tuple(p) for p in picks.tolist()]

    def _plan(self, sentences: Sequence[Sequence[str]]) -> tuple[list[list[int]], np.ndarray]:
        """:meth:`plan` with the picks as one (words, 5) int64 array: those of the sentences that fit one window
        found for all of them at once (:func:`fit_picks`), then those of the long ones."""
        sentences = [list(s) for s in sentences]
        tokenized = self._tokenize(sentences)
        for row, (words, (ids, word_ids)) in enumerate(zip(sentences, tokenized)):
            replaced = self._words_fit(words, word_ids, ids)
            if replaced is not None:
                sentences[row] = replaced
                tokenized[row] = self._tokenize([replaced])[0]
        fit = [row for row, (words, (ids, _)) in enumerate(zip(sentences, tokenized)) if words and
               len(ids) <= self.window]  # the whole sentence in one window
        windows = [tokenized[row][0] for row in fit]
        picks = [fit_picks(fit, [tokenized[row][1] for row in fit])]
        long_rows: list[tuple[int, list[tuple[int, int]], list[int]]] = []
        for row, (words, (ids, word_ids)) in enumerate(zip(sentences, tokenized)):
            if not words or len(ids) <= self.window:
                continue
            counts = [0] * len(words)
            for w in word_ids:
                if w is not None:
                    counts[w] += 1
            cum = [0]
            for c in counts:
                cum.append(cum[-1] + c)
            long_rows.append((row, word_windows(cum, self.content), cum))
        if long_rows:  # every window of every long sentence, tokenised in one call
            picks.append(self._long_picks(sentences, long_rows, windows))
        return windows, np.concatenate(picks).reshape(-1, 5)

    def _long_picks(self, sentences: list[list[str]], long_rows: list[tuple[int, list[tuple[int, int]], list[int]]],
                    windows: list[list[int]]) -> np.ndarray:
        """The picks of sentences longer than a window, their windows appended to ``windows``."""
        pieces = [sentences[row][a:b] for row, plan, _ in long_rows for a, b in plan]
        encoded = self._tokenize(pieces)
        picks: list[tuple[int, int, int, int, int]] = []
        k = 0
        for row, plan, cum in long_rows:
            base = len(windows)
            spans_by_window = []
            for a, b in plan:
                ids, word_ids = encoded[k]
                k += 1
                windows.append(ids)
                spans_by_window.append(self._spans(word_ids, b - a, offset=a))
            for word in range(len(sentences[row])):
                w = best_window(plan, cum, word)
                first, last = spans_by_window[w][word]
                picks.append((row, word, base + w, first, last))
        return np.array(picks, dtype=np.int64).reshape(-1, 5)

    @torch.no_grad()
    def layers(self, sentences: Sequence[Sequence[str]]) -> tuple[torch.Tensor, torch.Tensor]:
        """(batch, layers, words, dim) float32 and (batch, words) mask on the model's device; ``layers`` counts the
        kept layers only (``encoder.layers``), in the order asked: :meth:`packed_layers` spread over the padding."""
        device = self.device
        longest = max((len(s) for s in sentences), default=0)
        out = torch.zeros(len(sentences), self.num_layers, longest, self.dim, device=device)
        lengths = torch.tensor([len(s) for s in sentences], dtype=torch.long)
        mask = (torch.arange(longest) < lengths[:, None]).to(device)
        packed = self.packed_layers(sentences)
        if len(packed):
            sentence = torch.repeat_interleave(torch.arange(len(sentences)), lengths).to(device)
            word = torch.arange(len(packed)) - torch.repeat_interleave(lengths.cumsum(0) - lengths, lengths)
            out[sentence, :, word.to(device)] = packed
        return out, mask

    @torch.no_grad()
    def packed_layers(self, sentences: Sequence[Sequence[str]]) -> torch.Tensor:
        """(words, layers, dim) float32 on the model's device: every sentence's words one after another, no padding
        (the activation cache's own row layout, so a cache fill copies no padded tensor; protocol.py). Each forward
        pass is pooled on the device at once, so no more than one pass's hidden states (``max_tokens`` tokens when
        set) are ever held."""
        device = self.device
        lengths = np.array([len(s) for s in sentences], dtype=np.int64)
        out = torch.zeros(int(lengths.sum()), self.num_layers, self.dim, device=device)
        windows, picks = self._plan(sentences)
        if not len(picks):
            return out
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        index = torch.from_numpy(picks).to(device)  # (words, 5): sentence, word, window, first, last
        row_of = torch.from_numpy(starts[picks[:, 0]] + picks[:, 1]).to(device)  # each pick's row of ``out``
        slot = torch.full((len(windows),), -1, dtype=torch.long, device=device)
        for batch in token_batches([len(w) for w in windows], self.max_tokens, self.batch_size):
            hidden = self._forward([windows[i] for i in batch])  # per layer (passes' windows, T, dim)
            slot.fill_(-1)
            slot[torch.tensor(batch, device=device)] = torch.arange(len(batch), device=device)
            mine = (slot[index[:, 2]] >= 0).nonzero().squeeze(1)
            _, _, window, first, last = index[mine].unbind(1)
            out.index_copy_(0, row_of[mine], self._pool(hidden, slot[window], first, last))
        return out

    def _pool(self, states: list[torch.Tensor], rows: torch.Tensor, first: torch.Tensor,
              last: torch.Tensor) -> torch.Tensor:
        """Words' vectors (words, layers, dim) float32 from one pass's hidden states (per layer (windows, T, dim)):
        ``first`` and ``last`` pick each layer's positions by one flat row index (every layer never stacked
        whole)."""
        if self.pooling in ("first", "last"):
            position = first if self.pooling == "first" else last
            flat = rows * states[0].shape[1] + position
            return torch.stack([state.reshape(-1, state.shape[-1]).index_select(0, flat) for state in states],
                               dim=1).float()
        hidden = torch.stack(states, dim=1).float()  # mean over positions [first, last] through prefix sums
        sums = torch.nn.functional.pad(hidden.cumsum(dim=2), (0, 0, 1, 0))
        count = (last - first + 1).to(hidden.dtype)[:, None, None]
        return (sums[rows, :, last + 1] - sums[rows, :, first]) / count

    def _forward(self, chunk: list[list[int]]) -> list[torch.Tensor]:
        """The kept hidden states of one forward pass over token windows, right-padded: per layer (windows, T, dim)
        in the model's dtype."""
        device = self.device
        lengths = np.array([len(w) for w in chunk], dtype=np.int64)
        real = np.arange(int(lengths.max())) < lengths[:, None]  # (windows, longest): not padding
        ids = np.full(real.shape, self.pad_id, dtype=np.int64)
        ids[real] = np.fromiter((token for window in chunk for token in window), dtype=np.int64, count=lengths.sum())
        inputs = {"input_ids": torch.from_numpy(ids).to(device), "attention_mask": torch.from_numpy(
            real.astype(np.int64)).to(device), **without_kv_cache(self.model)}
        dtype = AMP_DTYPES[self.amp]
        autocast = torch.autocast(device_type=device.type, dtype=dtype) if dtype is not None else nullcontext()
        with torch.inference_mode(), autocast:   # the frozen model's pass: no autograd bookkeeping at all (pooling,
            return self._states(inputs)         # outside, reads these states and makes ordinary tensors)

    def _states(self, inputs: dict[str, torch.Tensor]) -> list[torch.Tensor]:
        """Every hidden state (no subset asked), or the subset through block hooks when they were found to give
        exactly what ``output_hidden_states`` gives on this model (else selected from the full pass)."""
        if self.indices is None:
            return state_list(self.model, None, **inputs)
        memo = (id(self.model), str(self.device))
        if memo not in self._hooks_checked:  # once per model and device (a random twin is another model)
            self._blocks[memo] = find_blocks(self.model)
            self._hooks_checked[memo] = hooks_match(self.model, self._blocks[memo], self.indices,
                                                    self._probe_ids()[0])
        if self._hooks_checked[memo]:
            return hooked_state_list(self.model, self._blocks[memo], self.indices, **inputs)
        return state_list(self.model, self.indices, **inputs)


def from_spec(spec: Mapping[str, Any], amp: Any = "off") -> TransformersEncoder:
    """``encoder=transformers``: ``encoder.path`` (a directory or hub name) and its options; the run's ``amp`` is
    the default precision."""
    return TransformersEncoder(need_path(spec), pooling=str(spec.get("pooling") or "auto"),
                               revision=spec.get("revision"), amp=spec.get("amp") if spec.get("amp") is not None
                               else amp, max_length=spec.get("max_length"),
                               batch_size=int(spec.get("batch_size") or 32), layers=spec.get("layers"),
                               dtype=str(spec.get("dtype") or DEFAULT_DTYPE), max_tokens=spec.get("max_tokens"))


#: ``encoder=transformers`` (elmo_bench.encoders.kinds)
ENCODER_KIND = EncoderKind("transformers", from_spec)
