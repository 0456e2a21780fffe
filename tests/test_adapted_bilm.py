"""bilm=adapted: built once from the base biLM and the task's training text, then served from its cache; a new
text or recipe builds a new model; a killed build leaves nothing that counts as finished."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import h5py
import numpy as np
import pytest

from elmo_bench.pretrain.adapted_bilm import ensure_adapted
from elmo_bench.pretrain.train import train

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pretrain_helpers import grammar_sentences, tiny_config, write_lines  # noqa: E402

RECIPE = {"epochs": 1, "batch_size": 4, "unroll_steps": 5, "num_sampled": 8, "dropout": 0.0}


@pytest.fixture(scope="module")
def base_dir(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("base")
    text = write_lines(tmp / "train.txt", grammar_sentences(120, seed=0))
    train(tiny_config(text, tmp / "run", export_dir=str(tmp / "export"), max_tokens=8 * 6 * 20), progress=False)
    return tmp / "export"


def _task_text(swap: bool = True, n: int = 30) -> list[list[str]]:
    return [s.split() for s in grammar_sentences(n, seed=5, swap=swap)]


def test_builds_once_then_hits_its_cache(base_dir, tmp_path):
    first = ensure_adapted(base_dir, _task_text(), tmp_path, RECIPE, progress=False,
                           heldout=[s.split() for s in grammar_sentences(10, seed=9, swap=True)])
    assert first.built
    info = json.loads((first.weights.parent / "adapted.json").read_text())
    assert info["base_hash"] == first.base_hash != first.adapted_hash == info["adapted_hash"]
    assert info["tokens_seen"] >= info["tokens"]  # one epoch of the task text
    # the held-out (dev) text got more likely under the adapted model: it is in the task's domain
    assert info["heldout_perplexity"]["after"]["average"] < info["heldout_perplexity"]["before"]["average"]
    with h5py.File(base_dir / "weights.hdf5") as a, h5py.File(first.weights) as b:
        assert not np.array_equal(a["softmax/W"][...], b["softmax/W"][...])
    stamp = first.weights.stat().st_mtime_ns
    second = ensure_adapted(base_dir, _task_text(), tmp_path, RECIPE, progress=False)
    assert not second.built and second.adapted_hash == first.adapted_hash
    assert second.weights.stat().st_mtime_ns == stamp


def test_other_text_or_recipe_builds_another_model(base_dir, tmp_path):
    a = ensure_adapted(base_dir, _task_text(), tmp_path, RECIPE, progress=False)
    b = ensure_adapted(base_dir, _task_text(n=20), tmp_path, RECIPE, progress=False)
    c = ensure_adapted(base_dir, _task_text(), tmp_path, {**RECIPE, "seed": 1}, progress=False)
    assert b.built and c.built
    assert len({a.weights.parent, b.weights.parent, c.weights.parent}) == 3


def test_a_killed_build_is_cleaned_and_redone(base_dir, tmp_path):
    done = ensure_adapted(base_dir, _task_text(), tmp_path, RECIPE, progress=False)
    key_dir = done.weights.parent
    import shutil

    from tests.test_owned_temporaries import dead_pid, fake_owned_dir

    shutil.rmtree(key_dir)
    stale = fake_owned_dir(key_dir.parent, key_dir.name, dead_pid())  # what a build killed with SIGKILL leaves
    (stale / "weights.hdf5").write_bytes(b"half written")
    again = ensure_adapted(base_dir, _task_text(), tmp_path, RECIPE, progress=False)
    assert again.built and not stale.exists() and again.adapted_hash == done.adapted_hash
