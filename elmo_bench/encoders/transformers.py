"""``encoder=transformers``: any Hugging Face ``AutoModel`` as a frozen encoder of words.

Every hidden state is a layer: the embedding output, then one per block (BERT-base: 13 layers of 768). Encoder-only
and decoder-only models are used whole; of an encoder-decoder model (T5, BART) only its encoder. Words are the
tasks' own tokens: each sentence goes through the fast tokenizer pre-split (``is_split_into_words=True``; byte-level
BPE tokenizers, GPT-2 and RoBERTa, are loaded with ``add_prefix_space=True`` so that a word inside a sentence is
tokenised as it would be in running text), ``word_ids()`` maps subwords to words, and a word's vector is its first
subword's (``pooling=first``, the default, as BERT's NER recipe), its last (``last``, natural for left-to-right
models) or the mean of its subwords (``mean``). A word the tokenizer turns into no subword at all (a lone control
character) is given the unknown token.

Long sequences: a sentence whose subwords (plus the model's special tokens) exceed the model window is encoded in
overlapping windows of ``window`` positions whose starts are ``stride = content // 2`` apart (``content`` = window
minus the special tokens), the last window ending at the sequence's end. Rule: **each word is taken from the window
in which it has the most context, i.e. which maximises min(subwords before it, subwords after it) within the window;
ties go to the earlier window.** A word is only ever taken from a window that holds all its subwords (a word longer
than ``content // 2`` subwords keeps its first ``content // 2``). A sentence that fits is encoded in one window, so
windowing never changes the vectors of a sequence the model can see whole.

Precision: fp32 unless ``amp`` (the run's ``amp`` by default: ``bf16`` / ``fp16`` run the model under autocast);
layers always come back as float32. Device: wherever :meth:`TransformersEncoder.to` put the model.

Offline use: a hub name is looked up in the local Hugging Face cache only when ``HF_HUB_OFFLINE`` is set, or after
the online look-up failed; a model that is in neither is one line naming it and suggesting ``encoder.path=DIR``.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any, Sequence

import torch

from elmo_bench.device import AMP_DTYPES, normalise_amp
from elmo_bench.errors import ConfigError, DataError

POOLINGS = ("first", "last", "mean")
#: weight, config and tokenizer files that decide a local model's vectors (hashed for its identity)
_MODEL_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt",
                "vocab.json", "merges.txt", "spiece.model", "sentencepiece.bpe.model", "model.safetensors",
                "pytorch_model.bin", "model.safetensors.index.json", "pytorch_model.bin.index.json")
_hashes: dict[tuple[str, int, int], str] = {}


def _file_hash(path: Path) -> str:
    stat = path.stat()
    memo = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if memo not in _hashes:
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 22), b""):
                digest.update(block)
        _hashes[memo] = digest.hexdigest()
    return _hashes[memo]


def directory_hash(directory: Path) -> str:
    """sha256 over the files that decide a local model's vectors (weights, shards, config, tokenizer)."""
    digest = hashlib.sha256()
    names = set(_MODEL_FILES) | {p.name for p in directory.glob("model-*.safetensors")} | {
        p.name for p in directory.glob("pytorch_model-*.bin")}
    for name in sorted(names):
        path = directory / name
        if path.is_file():
            digest.update(f"{name}\0{_file_hash(path)}\n".encode())
    return digest.hexdigest()[:16]


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def _load(loader: Any, name: str, revision: str | None, local: bool, **kwargs: Any) -> Any:
    """``loader.from_pretrained`` of a directory, or of a hub name: from the local cache when offline, else online
    with a local-cache retry; a name in neither is one ConfigError line."""
    if local:
        return loader.from_pretrained(name, **kwargs)
    attempts = [True] if _offline() else [False, True]
    for local_only in attempts:
        try:
            return loader.from_pretrained(name, revision=revision, local_files_only=local_only, **kwargs)
        except (OSError, ValueError) as exc:
            failure = exc
    where = f"revision {revision}" if revision else "default revision"
    raise ConfigError(f"encoder=transformers: hub model {name!r} ({where}) is not in the local Hugging Face cache "
                      f"and could not be downloaded ({type(failure).__name__}); download it where there is internet "
                      f"or give a local copy: encoder.path=DIR") from None


def load_tokenizer(name: str, revision: str | None = None, local: bool = True) -> Any:
    """The model's fast tokenizer, byte-level BPE ones with ``add_prefix_space=True`` (needed for pre-split words)."""
    from transformers import AutoTokenizer

    tokenizer = _load(AutoTokenizer, name, revision, local, use_fast=True)
    if not getattr(tokenizer, "is_fast", False):
        raise ConfigError(f"encoder=transformers: {name} has no fast tokenizer (tokenizer.json); word alignment "
                          f"(word_ids) needs one")
    if getattr(tokenizer, "add_prefix_space", None) is False:
        tokenizer = _load(AutoTokenizer, name, revision, local, use_fast=True, add_prefix_space=True)
    return tokenizer


def model_window(model: Any, tokenizer: Any) -> int:
    """Longest input the model takes: the tokenizer's ``model_max_length`` when it states one, else the position
    table (RoBERTa-style tables hold two more rows than positions: the padding offset)."""
    stated = getattr(tokenizer, "model_max_length", None)
    if isinstance(stated, int) and 0 < stated < 1_000_000:
        return stated
    config = model.config
    for key in ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length"):
        value = getattr(config, key, None)
        if isinstance(value, int) and value > 0:
            return value - 2 if "roberta" in str(getattr(config, "model_type", "")) else value
    return 512


def plan_windows(length: int, content: int) -> list[tuple[int, int]]:
    """Windows [start, end) over ``length`` subwords, at most ``content`` long, ``content // 2`` apart, the last one
    ending at ``length``; one window when everything fits."""
    if length <= content:
        return [(0, length)]
    stride = max(1, content // 2)
    starts = list(range(0, length - content, stride)) + [length - content]
    return [(s, s + content) for s in starts]


def best_window(windows: Sequence[tuple[int, int]], first: int, end: int) -> int:
    """Index of the window holding subwords [first, end) with the most context: max of min(before, after)."""
    best, score = -1, -1
    for index, (a, b) in enumerate(windows):
        if a <= first and end <= b:
            context = min(first - a, b - end)
            if context > score:
                best, score = index, context
    return best


class TransformersEncoder:
    """A frozen Hugging Face model as an Encoder (see the module docstring for pooling, windows, precision)."""

    whole_sequences = True  # windows are this encoder's own business: the cache never cuts its sequences

    def __init__(self, path: str, pooling: str = "first", revision: str | None = None, amp: Any = "off",
                 max_length: int | None = None, batch_size: int = 32) -> None:
        from transformers import AutoModel

        if pooling not in POOLINGS:
            raise ConfigError(f"config: encoder.pooling expected one of {', '.join(POOLINGS)}, found {pooling!r}")
        if not path:
            raise ConfigError("config: encoder=transformers needs encoder.path (a model directory or a hub name)")
        self.path, self.pooling, self.revision = str(path), pooling, revision
        self.amp = normalise_amp(amp, "encoder.amp")
        local = Path(self.path).is_dir()
        self.tokenizer = load_tokenizer(self.path, revision, local)
        model = _load(AutoModel, self.path, revision, local)
        if getattr(model.config, "is_encoder_decoder", False):
            model = model.get_encoder()  # T5, BART: the encoder's hidden states are the layers
        self.model = model.eval().float()
        for parameter in self.model.parameters():
            parameter.requires_grad_(False)
        self.window = int(max_length) if max_length else model_window(self.model, self.tokenizer)
        self.specials = self.tokenizer.num_special_tokens_to_add(pair=False)
        self.content = self.window - self.specials
        if self.content < 2:
            raise ConfigError(f"config: encoder.max_length {self.window} leaves no room for words after "
                              f"{self.specials} special tokens")
        config = self.model.config
        self.num_layers = int(config.num_hidden_layers) + 1
        self.dim = int(config.hidden_size)
        self.batch_size = batch_size
        self.pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        self.model_hash = directory_hash(Path(self.path)) if local else str(
            getattr(config, "_commit_hash", None) or revision or "unknown")

    def identity(self) -> dict[str, Any]:
        return {"kind": "transformers", "model": self.path if not Path(self.path).is_dir() else Path(self.path).name,
                "revision": self.revision, "hash": self.model_hash, "pooling": self.pooling, "window": self.window,
                "precision": self.amp if self.amp != "off" else "fp32",
                "model_type": getattr(self.model.config, "model_type", None)}

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def to(self, device: torch.device | str) -> "TransformersEncoder":
        self.model.to(device)
        return self

    def _subwords(self, sentences: Sequence[Sequence[str]]) -> list[tuple[list[int], list[tuple[int, int]]]]:
        """Per sentence: its subword ids (no special tokens) and each word's [first, end) subword span."""
        encoded = self.tokenizer([list(s) for s in sentences], is_split_into_words=True, add_special_tokens=False)
        unk = self.tokenizer.unk_token_id
        out = []
        limit = max(1, self.content // 2)
        for row, words in enumerate(sentences):
            ids, word_ids = encoded["input_ids"][row], encoded.word_ids(row)
            pieces: list[list[int]] = [[] for _ in words]
            for token, word in zip(ids, word_ids):
                if word is not None:
                    pieces[word].append(token)
            flat: list[int] = []
            spans = []
            for index, piece in enumerate(pieces):
                if not piece:  # no subword at all: the unknown token stands for it
                    if unk is None:
                        raise DataError(f"encoder=transformers: word {words[index]!r} has no subword and the "
                                        f"tokenizer has no unknown token")
                    piece = [unk]
                piece = piece[:limit]
                spans.append((len(flat), len(flat) + len(piece)))
                flat.extend(piece)
            out.append((flat, spans))
        return out

    @torch.no_grad()
    def layers(self, sentences: Sequence[Sequence[str]]) -> tuple[torch.Tensor, torch.Tensor]:
        """(batch, layers, words, dim) float32 and (batch, words) mask on the model's device."""
        device = self.device
        longest = max((len(s) for s in sentences), default=0)
        out = torch.zeros(len(sentences), self.num_layers, longest, self.dim, device=device)
        mask = torch.zeros(len(sentences), longest, dtype=torch.bool, device=device)
        # every window of every sentence, and which window each word is read from
        windows: list[list[int]] = []
        picks: list[tuple[int, int, int, int, int]] = []  # (sentence, word, window row, first pos, end pos)
        for row, (ids, spans) in enumerate(self._subwords(sentences)):
            plan = plan_windows(len(ids), self.content)
            base = len(windows)
            offsets = []
            for a, b in plan:
                with_specials = self.tokenizer.build_inputs_with_special_tokens(ids[a:b])
                windows.append(with_specials)
                offsets.append(self._content_offset(ids[a:b], with_specials))
            for word, (first, end) in enumerate(spans):
                w = best_window(plan, first, end)
                shift = offsets[w] - plan[w][0]
                picks.append((row, word, base + w, first + shift, end + shift))
            mask[row, : len(spans)] = True
        if not picks:
            return out, mask
        hidden = self._run(windows)  # (windows, layers, positions, dim)
        rows = torch.tensor([p[2] for p in picks], device=device)
        first = torch.tensor([p[3] for p in picks], device=device)
        last = torch.tensor([p[4] - 1 for p in picks], device=device)
        if self.pooling == "first":
            vectors = hidden[rows, :, first]
        elif self.pooling == "last":
            vectors = hidden[rows, :, last]
        else:  # mean over [first, last] through prefix sums along positions
            sums = torch.nn.functional.pad(hidden.cumsum(dim=2), (0, 0, 1, 0))
            count = (last - first + 1).to(hidden.dtype)[:, None, None]
            vectors = (sums[rows, :, last + 1] - sums[rows, :, first]) / count
        sentence = torch.tensor([p[0] for p in picks], device=device)
        word = torch.tensor([p[1] for p in picks], device=device)
        out[sentence, :, word] = vectors
        return out, mask

    @staticmethod
    def _content_offset(content: list[int], with_specials: list[int]) -> int:
        """Where the content starts inside the window (after a [CLS] or <s>, 0 for GPT-2)."""
        n = len(content)
        for offset in range(len(with_specials) - n + 1):
            if with_specials[offset: offset + n] == content:
                return offset
        raise ValueError("the tokenizer's special tokens do not keep the content contiguous")

    def _run(self, windows: list[list[int]]) -> torch.Tensor:
        """Hidden states of token windows, ``batch_size`` windows at a time, right-padded: (n, layers, T, dim)."""
        device = self.device
        width = max(len(w) for w in windows)
        out = torch.zeros(len(windows), self.num_layers, width, self.dim, device=device)
        dtype = AMP_DTYPES[self.amp]
        for start in range(0, len(windows), self.batch_size):
            chunk = windows[start: start + self.batch_size]
            longest = max(len(w) for w in chunk)
            ids = torch.full((len(chunk), longest), self.pad_id, dtype=torch.long)
            attention = torch.zeros(len(chunk), longest, dtype=torch.long)
            for row, window in enumerate(chunk):
                ids[row, : len(window)] = torch.tensor(window, dtype=torch.long)
                attention[row, : len(window)] = 1
            ids, attention = ids.to(device), attention.to(device)
            if dtype is None:
                result = self.model(input_ids=ids, attention_mask=attention, output_hidden_states=True)
            else:
                with torch.autocast(device_type=device.type, dtype=dtype):
                    result = self.model(input_ids=ids, attention_mask=attention, output_hidden_states=True)
            states = torch.stack([h.float() for h in result.hidden_states], dim=1)  # (chunk, layers, T, dim)
            out[start: start + len(chunk), :, :longest] = states
        return out
