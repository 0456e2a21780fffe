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
the previous start, the last one ending at the sentence's end (elmo_bench.encoders.transformers.windows).
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
stops the forward pass after the deepest requested block (elmo_bench.encoders.transformers.hf_forward); ``encoder.max_tokens``
fills each forward pass up to that many subword tokens, shortest windows first, and every pass is pooled on the
device at once. ``pooling=auto`` (the default) is ``last`` for a model that behaves causally (changing its last
token leaves every earlier position's states bit-identical) and ``first`` otherwise. With every layer, float32 and
an encoder-only model the identity is exactly what it was before these settings existed.

Loading (offline use included): elmo_bench.encoders.transformers.loading; windows and the word each is taken
from: elmo_bench.encoders.transformers.windows.
"""
from __future__ import annotations

import logging
from contextlib import nullcontext
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import torch

from elmo_bench.base.device import AMP_DTYPES, normalise_amp
from elmo_bench.base.errors import ConfigError
from elmo_bench.encoders.kinds import need_path
from elmo_bench.encoders.layer_select import all_or, layer_indices
from elmo_bench.encoders.model_files import directory_hash
from elmo_bench.encoders.settings import DEFAULT_DTYPE, check_encoder_settings
from elmo_bench.encoders.transformers.dispatch import (
    check_devices,
    check_room,
    is_dispatched,
    load_keywords,
    main_device,
)
from elmo_bench.encoders.transformers.hf_forward import (
    find_blocks,
    hooked_state_list,
    hooks_match,
    is_causal,
    state_list,
    token_batches,
    without_kv_cache,
)
from elmo_bench.encoders.transformers.loading import (
    _load,
    _load_model,
    _one_line,
    check_model_directory,
    frozen,
    load_tokenizer,
    model_window,
)
from elmo_bench.encoders.transformers.placement import placement
from elmo_bench.encoders.transformers.windows import WindowPlanner

log = logging.getLogger(__name__)

POOLINGS = ("auto", "first", "last", "mean")
#: ``encoder.dtype`` → the ``precision`` the identity records
DTYPE_PRECISION = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}


class TransformersEncoder(WindowPlanner):
    """A frozen Hugging Face model as an Encoder (see the module docstring for pooling, windows, precision)."""

    whole_sequences = True  # windows are this encoder's own business: the cache never cuts its sequences
    #: set by elmo_bench.encoders.random_init on a model rebuilt with random weights (random_init, random_seed)
    randomised: dict[str, Any] = {}
    #: encoder.erase's identity when an eraser runs inside (elmo_bench.encoders.erasing); None = as trained
    erased: dict[str, Any] | None = None

    def __init__(self, path: str, pooling: str = "auto", revision: str | None = None, amp: Any = "off",
                 max_length: int | None = None, batch_size: int = 32, layers: Any = None,
                 dtype: str = DEFAULT_DTYPE, max_tokens: int | None = None, device_map: Any = None,
                 max_memory: Any = None, offload_folder: str | None = None) -> None:
        where = {"device_map": device_map, "max_memory": max_memory, "offload_folder": offload_folder}
        check_encoder_settings({"kind": "transformers", "path": path, "pooling": pooling, "revision": revision,
                                "max_length": max_length, "batch_size": batch_size, "layers": layers,
                                "dtype": dtype, "max_tokens": max_tokens, **where})
        self.path, self.pooling_asked, self.revision = str(path), pooling, revision
        self.amp = normalise_amp(amp, "encoder.amp")
        self.dtype = str(dtype or DEFAULT_DTYPE)
        self.place = placement(where)  # None: the whole model on the run's device (encoder.to)
        if self.place is not None:
            check_devices(self.place)
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
        if self.place is not None:
            check_room(self.place, config, self.dtype, Path(self.path).name)
        self.model = frozen(_load_model(self.path, revision, local, self.dtype, load_keywords(self.place)),
                            self.dtype)
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
        """:func:`elmo_bench.encoders.transformers.hf_forward.is_causal` on a short input; doubles as the check that the model
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
        """Where the model takes its inputs (a dispatched model: its main device, hf_forward.main_device)."""
        return main_device(self.model)

    def to(self, device: torch.device | str) -> "TransformersEncoder":
        """The encoder on ``device``; a dtype other than float32 is tried there at once (one ConfigError line
        where the device cannot run it: bfloat16 on a GPU without it, say). A model spread over devices by
        ``encoder.device_map`` stays where the map put it."""
        if is_dispatched(self.model):
            return self
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

    @torch.no_grad()
    def layers(self, sentences: Sequence[Sequence[str]]) -> tuple[torch.Tensor, torch.Tensor]:
        """(batch, layers, words, dim) float32 and (batch, words) mask on the model's device; ``layers`` counts the
        kept layers only (``encoder.layers``), in the order asked: :meth:`packed_layers` spread over the padding."""
        packed = self.packed_layers(sentences)
        device = packed.device  # pooled on the device of the deepest kept layer
        longest = max((len(s) for s in sentences), default=0)
        out = torch.zeros(len(sentences), self.num_layers, longest, self.dim, device=device)
        lengths = torch.tensor([len(s) for s in sentences], dtype=torch.long)
        mask = (torch.arange(longest) < lengths[:, None]).to(device)
        if len(packed):
            sentence = torch.repeat_interleave(torch.arange(len(sentences)), lengths).to(device)
            word = torch.arange(len(packed)) - torch.repeat_interleave(lengths.cumsum(0) - lengths, lengths)
            out[sentence, :, word.to(device)] = packed
        return out, mask

    @torch.no_grad()
    def packed_layers(self, sentences: Sequence[Sequence[str]]) -> torch.Tensor:
        """(words, layers, dim) float32 on the device of the deepest kept layer (the model's device, unless
        ``encoder.device_map`` spread it): every sentence's words one after another, no padding (the activation
        cache's own row layout, so a cache fill copies no padded tensor; protocol.py). Each forward pass is pooled
        at once, so no more than one pass's hidden states (``max_tokens`` tokens when set) are ever held."""
        device = self.device
        lengths = np.array([len(s) for s in sentences], dtype=np.int64)
        windows, picks = self._plan(sentences)
        if not len(picks):
            return torch.zeros(int(lengths.sum()), self.num_layers, self.dim, device=device)
        out = None
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
            pooled = self._pool(hidden, slot[window], first, last)
            if out is None:  # where the deepest kept layer is: the first pass tells
                out = torch.zeros(int(lengths.sum()), self.num_layers, self.dim, device=pooled.device)
            out.index_copy_(0, row_of[mine].to(out.device), pooled)
        return out

    def _pool(self, states: list[torch.Tensor], rows: torch.Tensor, first: torch.Tensor,
              last: torch.Tensor) -> torch.Tensor:
        """Words' vectors (words, layers, dim) float32 from one pass's hidden states (per layer (windows, T, dim)):
        ``first`` and ``last`` pick each layer's positions by one flat row index (every layer never stacked
        whole), each on its layer's device, then gathered where the deepest kept layer is (a model spread over
        devices; on one device every move is none)."""
        target = states[self._deepest()].device
        if self.pooling in ("first", "last"):
            position = first if self.pooling == "first" else last
            flat = rows * states[0].shape[1] + position
            return torch.stack([state.reshape(-1, state.shape[-1]).index_select(0, flat.to(state.device)).to(target)
                                for state in states], dim=1).float()
        states = [state.to(target) for state in states]
        rows, first, last = rows.to(target), first.to(target), last.to(target)
        hidden = torch.stack(states, dim=1).float()  # mean over positions [first, last] through prefix sums
        sums = torch.nn.functional.pad(hidden.cumsum(dim=2), (0, 0, 1, 0))
        count = (last - first + 1).to(hidden.dtype)[:, None, None]
        return (sums[rows, :, last + 1] - sums[rows, :, first]) / count

    def _deepest(self) -> int:
        """The position, among the kept layers, of the deepest one (pooling happens on its device)."""
        kept = all_or(self.indices, self.total_layers)
        return kept.index(max(kept))

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
                               dtype=str(spec.get("dtype") or DEFAULT_DTYPE), max_tokens=spec.get("max_tokens"),
                               device_map=spec.get("device_map"), max_memory=spec.get("max_memory"),
                               offload_folder=spec.get("offload_folder"))
