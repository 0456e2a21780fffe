"""``encoder=transformers``: any Hugging Face ``AutoModel`` as a frozen encoder of words.

Every hidden state is a layer: the embedding output, then one per block (BERT-base: 13 layers of 768). Encoder-only
and decoder-only models are used whole; of an encoder-decoder model (T5, BART) only its encoder. Words are the
tasks' own tokens: each sentence goes through the fast tokenizer pre-split (``is_split_into_words=True``; byte-level
BPE tokenizers, GPT-2 and RoBERTa, are loaded with ``add_prefix_space=True`` so that a word inside a sentence is
tokenised as it would be in running text), ``word_ids()`` maps subwords to words, and a word's vector is its first
subword's (``pooling=first``, the default, as BERT's NER recipe), its last (``last``, natural for left-to-right
models) or the mean of its subwords (``mean``). A word the tokenizer turns into no subword at all (a lone control
character) is given the unknown token.

Long sequences: a sentence whose tokens (with the model's special tokens) exceed the model window is encoded in
overlapping windows of whole words, each holding at most ``content`` subwords (``content`` = window minus the
special tokens, which every window gets), each starting at the first word at least ``content // 2`` subwords after
the previous start, the last one ending at the sentence's end (elmo_bench.encoders.transformers.word_windows).
Rule: **each word is taken from the window in which it has the most context, i.e. which maximises min(subwords
before it, subwords after it) within the window; ties go to the earlier window.** A word of more than
``content // 2`` subwords is given the unknown token (so every word fits whole in some window). A sentence that fits
is tokenised and encoded exactly once, as one window: windowing never changes a sequence the model can see whole.

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

from elmo_bench.base.device import AMP_DTYPES, normalise_amp
from elmo_bench.base.errors import ConfigError, DataError

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


class TransformersEncoder:
    """A frozen Hugging Face model as an Encoder (see the module docstring for pooling, windows, precision)."""

    whole_sequences = True  # windows are this encoder's own business: the cache never cuts its sequences
    #: set by elmo_bench.encoders.random_init on a model rebuilt with random weights (random_init, random_seed)
    randomised: dict[str, Any] = {}

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
        self.specials = len(self.tokenizer([["a"]], is_split_into_words=True)["input_ids"][0]) - len(
            self.tokenizer([["a"]], is_split_into_words=True, add_special_tokens=False)["input_ids"][0])
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
                "model_type": getattr(self.model.config, "model_type", None), **self.randomised}

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    def to(self, device: torch.device | str) -> "TransformersEncoder":
        self.model.to(device)
        return self

    def _tokenize(self, sentences: Sequence[Sequence[str]]) -> list[tuple[list[int], list[int | None]]]:
        """(input ids with the model's special tokens, word index per position) of each word list, in one call."""
        encoded = self.tokenizer([list(s) for s in sentences], is_split_into_words=True, add_special_tokens=True)
        return [(list(encoded["input_ids"][i]), list(encoded.word_ids(i))) for i in range(len(sentences))]

    def _words_fit(self, words: list[str], word_ids: list[int | None]) -> list[str] | None:
        """``words`` with the unknown token standing for every word of no subword (a lone control character) or of
        more than ``content // 2`` subwords (so that each word fits whole in some window); None when none does."""
        counts = [0] * len(words)
        for w in word_ids:
            if w is not None:
                counts[w] += 1
        limit = max(1, self.content // 2)
        bad = [i for i, c in enumerate(counts) if c == 0 or c > limit]
        if not bad:
            return None
        unk = self.tokenizer.unk_token
        if unk is None:
            raise DataError(f"encoder=transformers: word {words[bad[0]]!r} has {counts[bad[0]]} subwords and the "
                            f"tokenizer has no unknown token to stand for it")
        return [unk if i in bad else w for i, w in enumerate(words)]

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
        sentences = [list(s) for s in sentences]
        tokenized = self._tokenize(sentences)
        for row, (words, (_, word_ids)) in enumerate(zip(sentences, tokenized)):
            replaced = self._words_fit(words, word_ids)
            if replaced is not None:
                sentences[row] = replaced
                tokenized[row] = self._tokenize([replaced])[0]
        windows: list[list[int]] = []
        picks: list[tuple[int, int, int, int, int]] = []
        long_rows: list[tuple[int, list[tuple[int, int]], list[int]]] = []
        for row, (words, (ids, word_ids)) in enumerate(zip(sentences, tokenized)):
            if not words:
                continue
            if len(ids) <= self.window:  # the whole sentence in one window
                spans = self._spans(word_ids, len(words))
                picks.extend((row, w, len(windows), a, b) for w, (a, b) in sorted(spans.items()))
                windows.append(ids)
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
            pieces = [sentences[row][a:b] for row, plan, _ in long_rows for a, b in plan]
            encoded = self._tokenize(pieces)
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
        return windows, picks

    @torch.no_grad()
    def layers(self, sentences: Sequence[Sequence[str]]) -> tuple[torch.Tensor, torch.Tensor]:
        """(batch, layers, words, dim) float32 and (batch, words) mask on the model's device."""
        device = self.device
        longest = max((len(s) for s in sentences), default=0)
        out = torch.zeros(len(sentences), self.num_layers, longest, self.dim, device=device)
        mask = torch.zeros(len(sentences), longest, dtype=torch.bool, device=device)
        for row, words in enumerate(sentences):
            mask[row, : len(words)] = True
        windows, picks = self.plan(sentences)
        if not picks:
            return out, mask
        hidden = self._run(windows)  # (windows, layers, positions, dim)
        index = torch.tensor(picks, device=device)
        sentence, word, rows, first, last = index.unbind(1)
        if self.pooling == "first":
            vectors = hidden[rows, :, first]
        elif self.pooling == "last":
            vectors = hidden[rows, :, last]
        else:  # mean over positions [first, last] through prefix sums
            sums = torch.nn.functional.pad(hidden.cumsum(dim=2), (0, 0, 1, 0))
            count = (last - first + 1).to(hidden.dtype)[:, None, None]
            vectors = (sums[rows, :, last + 1] - sums[rows, :, first]) / count
        out[sentence, :, word] = vectors
        return out, mask

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
