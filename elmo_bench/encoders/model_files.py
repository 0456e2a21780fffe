"""A local model directory's content hash, without torch: the transformers encoder's identity (``hash``) and the
run-directory names (elmo_bench.commands.hydra_setup) take the same hash, computed once per process."""
from __future__ import annotations

import hashlib
from pathlib import Path

#: weight, config and tokenizer files that decide a local model's vectors (hashed for its identity)
MODEL_FILES = ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt",
               "vocab.json", "merges.txt", "spiece.model", "sentencepiece.bpe.model", "model.safetensors",
               "pytorch_model.bin", "model.safetensors.index.json", "pytorch_model.bin.index.json")
#: the files whose presence beside a config.json says "a Hugging Face model directory" (its weights)
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin", "model.safetensors.index.json",
                "pytorch_model.bin.index.json")
_hashes: dict[tuple[str, int, int], str] = {}


def file_hash(path: Path) -> str:
    """sha256 (hex) of a file's bytes, remembered per (resolved path, size, mtime) for the process."""
    stat = path.stat()
    memo = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if memo not in _hashes:
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 22), b""):
                digest.update(block)
        _hashes[memo] = digest.hexdigest()
    return _hashes[memo]


def _names(directory: Path) -> set[str]:
    return set(MODEL_FILES) | {p.name for p in directory.glob("model-*.safetensors")} | {
        p.name for p in directory.glob("pytorch_model-*.bin")}


def directory_hash(directory: Path) -> str:
    """sha256 over the files that decide a local model's vectors (weights, shards, config, tokenizer)."""
    digest = hashlib.sha256()
    for name in sorted(_names(directory)):
        path = directory / name
        if path.is_file():
            digest.update(f"{name}\0{file_hash(path)}\n".encode())
    return digest.hexdigest()[:16]


def is_model_directory(path: Path) -> bool:
    """A Hugging Face (save_pretrained) model directory: a config.json and weights beside it."""
    if not (path.is_dir() and (path / "config.json").is_file()):
        return False
    return any((path / name).is_file() for name in WEIGHT_FILES) or any(path.glob("model-*.safetensors")) or any(
        path.glob("pytorch_model-*.bin"))
