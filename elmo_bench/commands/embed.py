"""``elmo-bench embed``: an encoder's layers for a file of sentences, in the hdf5 layout of AllenNLP's old ``elmo``
command. The encoder is any elmo_bench.encoders kind (the biLM by default; ``--encoder transformers|hdf5|manylangs``).

Dataset ``"i"`` holds line i's layers — (L+1, n_tokens, dim) for ``all``, (n_tokens, dim) for ``top`` / ``average``,
(requested layers, n_tokens, dim) for ``--layers 0,2`` (the model's layer indices in the order given, named by the
root attribute ``layer_indices``; a transformer then stops its pass after the deepest one) — always float32 whatever
``--dtype`` the model ran in, with the sentence boundaries removed, and ``sentence_to_index`` holds a JSON string
mapping each sentence to its index. Sentences are batched by length (less padding, same results: the biLM is
stateless) and the output file appears only when complete.

The output never destroys a user's file: it may not be the input (by any path spelling or symlink), not a
directory, and an existing file is replaced only if ``embed`` wrote it (the root attribute :data:`EMBED_MARK`), or
with ``--overwrite``.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import h5py
import numpy as np
import torch
from tqdm import tqdm

from elmo_bench.base.atomic import atomic_path, owned_temp_file
from elmo_bench.base.errors import ConfigError, DataError
from elmo_bench.encoders.bilm.encoder import as_encoder
from elmo_bench.encoders.layer_select import check_layer_spec, layer_indices
from elmo_bench.encoders.protocol import Encoder, check_layers, check_values

LAYER_CHOICES = ("all", "top", "average")
#: root attribute of every file embed writes: such a file may be replaced without --overwrite
EMBED_MARK = "elmo_bench_embed"


def written_by_embed(path: Path) -> bool:
    """True when ``path`` is an hdf5 file carrying :data:`EMBED_MARK`."""
    try:
        if not h5py.is_hdf5(path):
            return False
        with h5py.File(path, "r") as handle:
            return EMBED_MARK in handle.attrs
    except (OSError, ValueError):
        return False


def check_writable(output: Path) -> None:
    """ConfigError (one line) when ``output``'s directory cannot be made or written (read-only): found before any
    layer is computed, by creating and removing an owned temporary file there."""
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        owned_temp_file(output.parent, output.name, ".probe").unlink()
    except OSError as exc:
        raise ConfigError(f"--output {output}: its directory {output.parent} cannot be written "
                          f"({exc.strerror or exc}); choose another --output") from None


def check_output(input_path: str | Path, output_path: str | Path, overwrite: bool = False) -> None:
    """ConfigError (one line) when writing ``output_path`` would destroy something: the input itself (also
    through a symlink or another spelling), a directory, or a file ``embed`` did not write (unless ``overwrite``)."""
    output = Path(output_path)
    if output.is_dir():
        raise ConfigError(f"--output {output}: is a directory, expected the path of an hdf5 file to write")
    if not output.exists():
        check_writable(output)
        return
    try:
        same = os.path.samefile(input_path, output)
    except OSError:
        same = False
    if same or Path(input_path).resolve() == output.resolve():
        raise ConfigError(f"--output {output} is the input file {input_path}: the output must be another file")
    if not overwrite and not written_by_embed(output):
        raise ConfigError(f"--output {output} exists and is not an hdf5 file written by elmo-bench embed; "
                          f"pass --overwrite to replace it")
    check_writable(output)


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


def layer_choice(text: str) -> str | list[int]:
    """``--layers``: ``all``, ``top``, ``average``, ``every:K`` or comma-separated layer indices (``0,2``: a list);
    one ConfigError line for anything else, an empty list or duplicates."""
    if text in LAYER_CHOICES:
        return text
    if text.strip().startswith("every"):
        check_layer_spec(text.strip(), "--layers")
        return text.strip()
    try:
        check_layer_spec(text, "--layers")
    except ConfigError as exc:
        raise ConfigError(f"{exc} (--layers expected all, top, average, every:K or comma-separated layer indices "
                          f"such as 0,2)") from None
    return [int(part) for part in text.split(",")]


def requested_positions(encoder: Encoder, which: str | list[int]) -> tuple[list[int], list[int]] | None:
    """For ``--layers`` naming indices: (the model's indices asked for, their positions in the encoder's output),
    range-checked against the model; None for all/top/average. A transformer built with those indices returns just
    them; any other encoder returns every layer and they are picked out."""
    if which in LAYER_CHOICES:
        return None
    total = int(getattr(encoder, "total_layers", encoder.num_layers))
    asked = list(layer_indices(which, total, "--layers", "the encoder") or range(total))
    kept = list(getattr(encoder, "indices", None) or range(encoder.num_layers))
    missing = [i for i in asked if i not in kept]
    if missing:
        raise ConfigError(f"--layers names layer {missing[0]}, which the encoder does not give (layers {kept})")
    return asked, [kept.index(i) for i in asked]


def select_layers(layers: torch.Tensor, which: str | list[int]) -> torch.Tensor:
    """(L+1, time, dim) → itself (``all``), the top layer or the layer average (time, dim), or the layers at the
    given positions (positions, time, dim)."""
    if isinstance(which, list):
        return layers[which]
    if which == "all":
        return layers
    if which == "top":
        return layers[-1]
    if which == "average":
        return layers.mean(dim=0)
    raise ValueError(f"--layers expected one of {LAYER_CHOICES}, found {which!r}")


def embed_file(encoder: Encoder, input_path: str | Path, output_path: str | Path, layers: str | list[int] = "all",
               batch_size: int = 64, progress: bool = True, overwrite: bool = False) -> int:
    """Embed every line of ``input_path`` into ``output_path``; returns the number of sentences.

    ``output_path`` must pass :func:`check_output` (``overwrite`` lets it replace a file embed did not write)."""
    check_output(input_path, output_path, overwrite)
    layers = layer_choice(layers) if isinstance(layers, str) else layers
    encoder = as_encoder(encoder)  # a bare BiLM is wrapped; it computes where it lives (--device)
    chosen_layers = requested_positions(encoder, layers)
    pick = layers if chosen_layers is None else chosen_layers[1]
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ConfigError(f"--batch-size expected an integer >= 1, found {batch_size!r}")
    sentences = read_sentences(input_path)
    order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
    with atomic_path(output_path, suffix=".hdf5") as tmp, h5py.File(tmp, "w") as out, torch.no_grad():
        out.attrs[EMBED_MARK] = 1  # the layout's version; marks the file as replaceable by embed
        if chosen_layers is not None:
            out.attrs["layer_indices"] = np.asarray(chosen_layers[0], dtype=np.int64)
        bar = tqdm(total=len(sentences), desc="embed", unit="sent", disable=not progress)
        for start in range(0, len(order), batch_size):
            rows = order[start: start + batch_size]
            words = [sentences[i] for i in rows]
            result, mask = encoder.layers(words)
            check_layers(encoder, words, result, mask)  # shapes and finite values: nothing half-written is kept
            check_values(encoder, result)
            for j, i in enumerate(rows):
                n = len(sentences[i])
                chosen = select_layers(result[j, :, :n], pick)
                out.create_dataset(str(i), data=chosen.float().cpu().numpy())
            bar.update(len(rows))
        bar.close()
        index = {" ".join(s): str(i) for i, s in enumerate(sentences)}
        dataset = out.create_dataset("sentence_to_index", (1,), dtype=h5py.string_dtype())
        dataset[0] = json.dumps(index)
    return len(sentences)
