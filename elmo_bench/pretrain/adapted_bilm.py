"""Task-adapted biLMs (the paper's section 3.4 and Table 7): the base biLM fine-tuned as a language model for one
epoch on the current task's own *training* text, then used frozen like any biLM.

An adapted model is built once and cached under ``<cache_dir>/adapted_bilm/<key>/`` where the key hashes the base
biLM's files, the training text and the recipe: every run of a sweep with the same three reuses it, and changing any
of them builds a new one. The build writes into a temporary directory that is renamed into place only when complete
(a killed build leaves nothing that a later run could mistake for a finished model; the temp dir is removed on the
next build). ``train_text.txt.gz`` keeps the exact text it was tuned on; ``adapted.json`` beside the weights records the base hash, the adapted hash, the text hash and size,
the recipe, and (when the caller gives held-out text, e.g. the task's dev sentences) that text's perplexity under the
base and the adapted model: the paper's Table 7. Held-out text is only ever scored, never trained on.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from elmo_bench.base.atomic import apply_umask, owned_temp_dir, remove_stale
from elmo_bench.base.errors import DataError
from elmo_bench.bilm.weights import bilm_identity
from elmo_bench.encoders.cache import cache_directory, stream_hash
from elmo_bench.pretrain.adapted_recipe import AdaptedRecipe
from elmo_bench.pretrain.finetune import finetune
from elmo_bench.pretrain.perplexity import evaluate, load_lm
from elmo_bench.pretrain.pretrain_config import PretrainConfig

#: The default recipe: bilm-tf's training settings, one epoch of the task's text (the paper's Table 7), written once
#: on AdaptedRecipe (elmo_bench/pretrain/adapted_recipe.py), which conf/bilm/adapted.yaml's ``recipe`` is made from.
DEFAULT_RECIPE: dict[str, Any] = AdaptedRecipe().mapping()


@dataclass(frozen=True)
class AdaptedBiLM:
    options: Path
    weights: Path
    vocab: Path
    base_hash: str
    adapted_hash: str
    text_hash: str
    built: bool  # True when this call trained it, False when it came from the cache

    def record(self) -> dict[str, Any]:
        """What results.json records about the biLM a run used."""
        return {"base_hash": self.base_hash, "adapted_hash": self.adapted_hash, "text_hash": self.text_hash}


def text_hash(sentences: Sequence[Sequence[str]]) -> str:
    """The activation cache's content hash of a token stream (16 hex digits)."""
    return stream_hash(sentences)[:16]


def adapted_key(base_hash: str, sentences_hash: str, recipe: Mapping[str, Any]) -> str:
    recipe_hash = hashlib.sha256(json.dumps(dict(recipe), sort_keys=True).encode()).hexdigest()[:8]
    return f"{base_hash}-{sentences_hash}-{recipe_hash}"


def ensure_adapted(base_dir: str | Path, sentences: Sequence[Sequence[str]], cache_dir: str | Path,
                   recipe: Mapping[str, Any] | None = None, progress: bool = True,
                   heldout: Sequence[Sequence[str]] | None = None, device: str = "cpu") -> AdaptedBiLM:
    """The biLM in ``base_dir`` (options.json, weights.hdf5 with its softmax, vocab.txt) fine-tuned on
    ``sentences`` (the task's training text only), built on first use and cached."""
    base = Path(base_dir)
    for name in ("options.json", "weights.hdf5", "vocab.txt"):
        if not (base / name).exists():
            raise DataError(f"bilm=adapted: {base / name} not found (the base biLM needs options.json, "
                            "weights.hdf5 with softmax/W and vocab.txt)")
    sentences = [list(s) for s in sentences if len(s)]
    if not sentences:
        raise DataError("bilm=adapted: the task's training split has no text to adapt the biLM on")
    recipe = {**DEFAULT_RECIPE, **dict(recipe or {})}
    base_hash = bilm_identity(base / "options.json", base / "weights.hdf5")
    sentences_hash = text_hash(sentences)
    root = cache_directory(cache_dir) / "adapted_bilm"
    final = root / adapted_key(base_hash, sentences_hash, recipe)
    built = False
    if not (final / "adapted.json").exists():
        _build(base, sentences, recipe, final, base_hash, sentences_hash, progress, heldout, device)
        built = True
    info = json.loads((final / "adapted.json").read_text())
    return AdaptedBiLM(final / "options.json", final / "weights.hdf5", final / "vocab.txt", base_hash,
                       info["adapted_hash"], sentences_hash, built)


def _build(base: Path, sentences: list[list[str]], recipe: dict[str, Any], final: Path, base_hash: str,
           sentences_hash: str, progress: bool, heldout: Sequence[Sequence[str]] | None, device: str) -> None:
    import torch

    final.parent.mkdir(parents=True, exist_ok=True)
    remove_stale(final.parent, final.name)  # builds that were killed (owned temporaries of dead processes only)
    work = owned_temp_dir(final.parent, final.name)
    text = work / "train_text.txt"
    text.write_text("".join(" ".join(s) + "\n" for s in sentences), encoding="utf-8")
    cfg = PretrainConfig.of({**recipe, "init_dir": str(base), "train_files": [str(text)], "heldout_files": [],
                             "max_tokens": None, "max_train_seconds": None, "device": device, "shuffle": True,
                             "resume": False, "out_dir": str(work / "run"), "export_dir": str(work),
                             "checkpoint_every_steps": 0, "checkpoint_every_s": 0, "log_every": 50, "log_file": None})
    threads = torch.get_num_threads()
    try:
        summary = finetune(cfg, progress=progress)
    finally:
        torch.set_num_threads(threads)
    shutil.rmtree(work / "run", ignore_errors=True)
    perplexity = None
    heldout = [list(s) for s in heldout or [] if len(s)]
    if heldout:
        before = evaluate(*load_lm(base / "options.json", base / "weights.hdf5", base / "vocab.txt"), heldout)
        after = evaluate(*load_lm(work / "options.json", work / "weights.hdf5", work / "vocab.txt"), heldout)
        keep = ("forward", "backward", "average")
        perplexity = {"before": {k: before[k] for k in keep}, "after": {k: after[k] for k in keep},
                      "tokens": before["tokens"], "sentences": len(heldout)}
    info = {"base_hash": base_hash, "adapted_hash": bilm_identity(work / "options.json", work / "weights.hdf5"),
            "text_hash": sentences_hash, "sentences": len(sentences), "tokens": sum(len(s) for s in sentences),
            "recipe": recipe, "steps": summary["steps"], "tokens_seen": summary["tokens_seen"],
            "train_seconds": summary["train_seconds"],
            "heldout_perplexity": perplexity}
    (work / "adapted.json").write_text(json.dumps(info, indent=2) + "\n")
    with open(text, "rb") as raw, gzip.open(work / "train_text.txt.gz", "wb") as packed:  # what it saw, for audits
        shutil.copyfileobj(raw, packed)
    text.unlink()
    apply_umask(work, directory=True)
    try:
        work.rename(final)
    except OSError:  # another process finished the same model first: same key, same recipe and seed
        shutil.rmtree(work, ignore_errors=True)
