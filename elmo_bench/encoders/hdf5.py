"""``encoder=hdf5 encoder.path=FILE``: layers computed elsewhere, read from the layout ``elmo-bench embed --layers
all`` writes (AllenNLP's old ``elmo`` command, contextual-repr-analysis): dataset ``"i"`` = line i's layers
(layers, tokens, dim), and ``sentence_to_index`` = a JSON string mapping a sentence (its tokens joined by single
spaces) to ``"i"``. A file written with ``--layers top|average`` (tokens, dim) is read as one layer; one written
with ``--layers 0,2`` holds those layers, and its root attribute ``layer_indices`` is recorded in the identity.

FILE must hold every sentence of every split a run reads; a sentence that is missing, or whose stored token count
differs from the task's, is one DataError line naming the file and the sentence. The identity is the file's sha256.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Mapping, Sequence

import h5py
import numpy as np
import torch

from elmo_bench.base.errors import ConfigError, DataError
from elmo_bench.encoders.build import build_encoder
from elmo_bench.encoders.costs import EncoderCost
from elmo_bench.encoders.kinds import EncoderKind, need_path

#: the kind's name, written once: the declaration, the identity (the cache key's part), the messages
NAME = "hdf5"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


def _show(sentence: str, limit: int = 80) -> str:
    return repr(sentence if len(sentence) <= limit else sentence[:limit] + "...")


class Hdf5Encoder:
    """Precomputed layers as an Encoder (CPU; the cache copies them once into its own entry)."""

    whole_sequences = True  # stored per whole sentence: a segment of one would never be found

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise DataError(f"encoder={NAME}: {self.path}: no such file (expected the output of "
                            f"elmo-bench embed --layers all)")
        try:
            self.file = h5py.File(self.path, "r")
        except OSError as exc:
            raise DataError(f"encoder={NAME}: {self.path}: not an hdf5 file ({exc})") from None
        if "sentence_to_index" not in self.file:
            raise DataError(f"encoder={NAME}: {self.path}: no sentence_to_index dataset (expected the layout of "
                            f"elmo-bench embed)")
        self.index = self._read_index()
        if not self.index:
            raise DataError(f"encoder={NAME}: {self.path}: sentence_to_index is empty")
        sentence, name = next(iter(self.index.items()))
        first = self._layer_array(sentence, name)
        self.one_layer = first.ndim == 2
        self.num_layers = 1 if self.one_layer else int(first.shape[0])
        self.dim = int(first.shape[-1])
        self.hash = _sha256(self.path)
        #: the model's layer indices of a file written by ``embed --layers 0,2`` (its root attribute), else None
        self.indices = ([int(i) for i in self.file.attrs["layer_indices"]] if "layer_indices" in self.file.attrs
                        else None)

    def _read_index(self) -> dict[str, str]:
        """``sentence_to_index`` as a dict of sentence -> dataset name; DataError (one line) when it is not that."""
        try:
            raw = self.file["sentence_to_index"][0]
            index = json.loads(raw.decode("utf-8") if isinstance(raw, bytes) else raw)
        except (ValueError, TypeError, IndexError, KeyError, OSError) as exc:  # JSONDecodeError, bad bytes, empty
            raise DataError(f"encoder={NAME}: {self.path}: sentence_to_index is not a JSON string mapping sentences "
                            f"to dataset names ({type(exc).__name__}: {str(exc)[:120]})") from None
        if not isinstance(index, dict):
            raise DataError(f"encoder={NAME}: {self.path}: sentence_to_index is not a JSON object mapping sentences "
                            f"to dataset names (found {type(index).__name__})")
        wrong = next(((k, v) for k, v in index.items() if not isinstance(v, str)), None)
        if wrong is not None:  # the mapping is there; one of its values is no dataset name (say which)
            raise DataError(f"encoder={NAME}: {self.path}: sentence_to_index maps sentences to dataset names (strings); "
                            f"found {type(wrong[1]).__name__} {wrong[1]!r} for sentence {_show(wrong[0])}")
        return index

    def _layer_array(self, sentence: str, key: str) -> h5py.Dataset:
        """The dataset ``sentence_to_index`` names for ``sentence``; DataError (one line) when the file does not hold
        it, or it is no layer array: numbers shaped (layers, tokens, dim), or (tokens, dim) for one layer."""
        if key not in self.file:
            raise DataError(f"encoder={NAME}: {self.path}: sentence_to_index maps sentence {_show(sentence)} to dataset "
                            f"{key!r}, which the file does not hold")
        found = self.file[key]
        if not isinstance(found, h5py.Dataset) or found.ndim not in (2, 3) or not (
                np.issubdtype(found.dtype, np.floating) or np.issubdtype(found.dtype, np.integer)):
            shown = (f"a dataset of shape {found.shape} and type {found.dtype}" if isinstance(found, h5py.Dataset)
                     else f"a {type(found).__name__.lower()}")
            raise DataError(f"encoder={NAME}: {self.path}: sentence_to_index maps sentence {_show(sentence)} to "
                            f"{key!r}, which is no layer array (numbers shaped (layers, tokens, dim) or (tokens, "
                            f"dim)): found {shown}")
        return found

    def identity(self) -> dict[str, Any]:
        """The file's name and hash; a file of some of a model's layers (``embed --layers 0,2``) adds their
        indices, so a probe over it names each layer by its index in the model."""
        ident = {"kind": NAME, "file": self.path.name, "hash": self.hash}
        if self.indices is not None:
            ident["encoder_layer_indices"] = self.indices
        return ident

    def sentence_layers(self, tokens: Sequence[str]) -> torch.Tensor:
        """(layers, tokens, dim) float32 of one sentence; DataError naming it when absent or of another length."""
        sentence = " ".join(tokens)
        key = self.index.get(sentence)
        if key is None:
            raise DataError(f"encoder={NAME}: {self.path}: sentence {_show(sentence)} is not in sentence_to_index "
                            f"(the file must hold every sentence of every split the run reads)")
        data = torch.from_numpy(self._layer_array(sentence, key)[()]).float()
        if self.one_layer:
            data = data.unsqueeze(0)
        if data.shape[1] != len(tokens) or data.shape[0] != self.num_layers or data.shape[2] != self.dim:
            raise DataError(f"encoder={NAME}: {self.path}: dataset {key} for sentence {_show(sentence)} has shape "
                            f"{tuple(data.shape)}, expected ({self.num_layers}, {len(tokens)}, {self.dim}) "
                            f"(layers, tokens, dim)")
        return data

    def layers(self, sentences: Sequence[Sequence[str]]) -> tuple[torch.Tensor, torch.Tensor]:
        longest = max((len(s) for s in sentences), default=0)
        out = torch.zeros(len(sentences), self.num_layers, longest, self.dim)
        mask = torch.zeros(len(sentences), longest, dtype=torch.bool)
        for row, tokens in enumerate(sentences):
            if tokens:
                out[row, :, : len(tokens)] = self.sentence_layers(tokens)
                mask[row, : len(tokens)] = True
        return out, mask


def _check_path(spec: Mapping[str, Any]) -> None:
    path = spec["path"]
    if not Path(str(path)).expanduser().is_file():
        raise ConfigError(f"encoder={NAME}: encoder.path {path}: no such file (expected the output of elmo-bench embed "
                          f"--layers all)")


def _price(spec: Mapping[str, Any], options: Any, options_source: str, sentences: Any, amp: Any = "off") -> Any:
    """0 FLOPs (the layers were computed elsewhere); the cache is the file, so its size is the cache's bytes."""
    encoder = build_encoder(spec, amp=amp)
    return EncoderCost(NAME, 0, encoder.num_layers, encoder.dim, f"{NAME} {spec['path']}",
                       "layers computed elsewhere: no encoder FLOPs; the cache is the file",
                       file_bytes=Path(str(spec["path"])).stat().st_size)


#: (the option's path is the file; cache_dtype: the activation cache's storage, fp16 by default, fp32 for layers beyond
#: fp16's range):   python run.py task=ner embedder=glove_elmo encoder=hdf5 encoder.path=FILE
#: ``encoder=hdf5``: ``encoder.path`` = the file ``elmo-bench embed --layers all`` writes (elmo_bench.encoders.kinds)
ENCODER_KIND = EncoderKind(NAME, lambda spec, amp="off": Hdf5Encoder(need_path(spec)),
                           conf={"path": "???", "cache_dtype": "fp16"},
                           path="the file elmo-bench embed --layers all writes", check_path=_check_path, price=_price)
