"""``elmo-bench embed``: biLM layers for a file of sentences, in the hdf5 layout of AllenNLP's old ``elmo`` command.

Dataset ``"i"`` holds line i's layers — (L+1, n_tokens, dim) for ``all``, (n_tokens, dim) for ``top`` / ``average``
— with the sentence boundaries removed, and ``sentence_to_index`` holds a JSON string mapping each sentence to its
index. Sentences are batched by length (less padding, same results: the biLM is stateless) and the output file
appears only when complete.
"""
from __future__ import annotations

import json
from pathlib import Path

import h5py
import numpy as np
import torch
from tqdm import tqdm

from elmo_bench.base.atomic import atomic_path
from elmo_bench.bilm.chars import batch_to_ids
from elmo_bench.bilm.model import BiLM
from elmo_bench.base.errors import ConfigError, DataError

LAYER_CHOICES = ("all", "top", "average")


def read_sentences(path: str | Path) -> list[list[str]]:
    """One whitespace-tokenised sentence a line; an empty line or undecodable bytes is an error naming the line."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DataError(f"{path}: cannot read input ({exc.strerror})") from None
    lines = raw.split(b"\n")
    if lines[-1] == b"":
        lines.pop()  # the final newline
    sentences = []
    offset = 0
    for number, line in enumerate(lines, start=1):
        try:
            text = line.decode("utf-8").rstrip("\r")
        except UnicodeDecodeError as exc:
            raise DataError(f"{path}: line {number}: byte offset {offset + exc.start}: not valid UTF-8 "
                            f"(expected UTF-8 text, one sentence a line)") from None
        offset += len(line) + 1
        tokens = text.split()
        if not tokens:
            raise DataError(f"{path}: line {number}: empty line (expected one whitespace-tokenised sentence)")
        sentences.append(tokens)
    if not sentences:
        raise DataError(f"{path}: no sentences (expected one whitespace-tokenised sentence a line)")
    return sentences


def select_layers(layers: torch.Tensor, which: str) -> torch.Tensor:
    """(L+1, time, dim) → itself (``all``), the top layer or the layer average (time, dim)."""
    if which == "all":
        return layers
    if which == "top":
        return layers[-1]
    if which == "average":
        return layers.mean(dim=0)
    raise ValueError(f"--layers expected one of {LAYER_CHOICES}, found {which!r}")


def embed_file(bilm: BiLM, input_path: str | Path, output_path: str | Path, layers: str = "all",
               batch_size: int = 64, progress: bool = True) -> int:
    """Embed every line of ``input_path`` into ``output_path``; returns the number of sentences."""
    if layers not in LAYER_CHOICES:
        raise ConfigError(f"--layers expected one of {LAYER_CHOICES}, found {layers!r}")
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ConfigError(f"--batch-size expected an integer >= 1, found {batch_size!r}")
    sentences = read_sentences(input_path)
    order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
    bilm.eval()
    device = next(bilm.parameters()).device  # the biLM computes where it lives (--device)
    with atomic_path(output_path, suffix=".hdf5") as tmp, h5py.File(tmp, "w") as out, torch.no_grad():
        bar = tqdm(total=len(sentences), desc="embed", unit="sent", disable=not progress)
        for start in range(0, len(order), batch_size):
            rows = order[start: start + batch_size]
            result = bilm(batch_to_ids([sentences[i] for i in rows]).to(device))
            for j, i in enumerate(rows):
                n = len(sentences[i])
                chosen = select_layers(result.layers[j, :, :n], layers)
                out.create_dataset(str(i), data=chosen.float().cpu().numpy())
            bar.update(len(rows))
        bar.close()
        index = {" ".join(s): str(i) for i, s in enumerate(sentences)}
        dataset = out.create_dataset("sentence_to_index", (1,), dtype=h5py.string_dtype())
        dataset[0] = json.dumps(index)
    return len(sentences)
