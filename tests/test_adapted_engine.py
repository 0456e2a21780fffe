"""bilm=adapted through the engine on the bundled NER sample: the biLM is tuned on the run's training sentences only
(never a dev or test sentence), recorded in results.json (base and adapted hash), reused by the next run from its
cache, and Table 7's dev perplexity before -> after lands in lm_adaptation.json."""
from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from omegaconf import open_dict

from elmo_bench.commands.hydra_setup import register_resolvers
from elmo_bench.data.conll2003 import read_conll
from elmo_bench.engine.config_door import run_config
from elmo_bench.engine.experiment import run_experiment
from elmo_bench.pretrain.train import train
from elmo_bench.records import lm_adaptation

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from pretrain_helpers import tiny_config, write_lines  # noqa: E402

register_resolvers()
SAMPLES = REPO / "tasks/ner/samples"


def _sentences(split: str) -> list[list[str]]:
    return [e["tokens"] for e in read_conll(SAMPLES / f"sample.{split}")]


@pytest.fixture(scope="module")
def base_dir(tmp_path_factory) -> Path:
    """A tiny biLM pretrained on invented text (with its softmax and vocabulary: what fine-tuning needs)."""
    tmp = tmp_path_factory.mktemp("base")
    words = sorted({w for s in _sentences("train") + _sentences("dev") for w in s})[:300]
    lines = [" ".join(words[(7 * i + k) % len(words)] for k in range(8)) for i in range(200)]
    text = write_lines(tmp / "lm.txt", lines)
    train(tiny_config(text, tmp / "run", export_dir=str(tmp / "export"), max_tokens=8 * 6 * 10), progress=False)
    return tmp / "export"


def _cfg(tmp_path: Path, base: Path, *overrides: str):
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        cfg = compose("config", overrides=[
            "task=ner", "data=ner_sample", "bilm=adapted", f"bilm.base_dir={base}", "bilm.recipe.batch_size=4",
            "bilm.recipe.unroll_steps=5", "bilm.recipe.num_sampled=8", "logger=disabled", "progress=false",
            f"paths.cache_dir={tmp_path / 'cache'}", "trainer.max_epochs=1", "trainer.batch_size=16",
            "task.head.lstm_hidden=[8,8]", "task.head.char_filters=4", *overrides])
    with open_dict(cfg):
        cfg.data.name = "ner_sample"
    return cfg


def test_adapted_run_tunes_on_train_text_only_and_is_reused(tmp_path, base_dir):
    first = run_experiment(run_config(_cfg(tmp_path, base_dir, "seed=1")), tmp_path / "run1")
    record = first["bilm"]
    assert record["name"] == "adapted" and record["built_here"]
    assert record["base_hash"] != record["adapted_hash"] == record["hash"]
    adapted_dir = (tmp_path / "run1" / record["weights"]).resolve().parent  # records hold relative paths
    with gzip.open(adapted_dir / "train_text.txt.gz", "rt", encoding="utf-8") as handle:
        seen = [line.split() for line in handle.read().splitlines()]
    train_text = {tuple(s) for s in _sentences("train")}
    assert {tuple(s) for s in seen} == train_text and len(seen) == len(train_text)
    held_out = {tuple(s) for s in _sentences("dev") + _sentences("test")} - train_text
    assert held_out and not held_out & {tuple(s) for s in seen}
    table7 = lm_adaptation.read(tmp_path / "run1" / "lm_adaptation.json")  # the report's Table 7 input
    assert table7["task"] == "ner" and table7["text"] == "dev" and table7["base_bilm"] == record["base_hash"]
    assert table7["adapted_bilm"] == record["adapted_hash"]
    assert table7["tokens"] == sum(len(s) + 1 for s in {tuple(s) for s in _sentences("dev")})
    second = run_experiment(run_config(_cfg(tmp_path, base_dir, "seed=2")), tmp_path / "run2")
    assert not second["bilm"]["built_here"] and second["bilm"]["adapted_hash"] == record["adapted_hash"]


def test_a_smaller_training_fraction_adapts_on_its_own_subset(tmp_path, base_dir):
    full = run_experiment(run_config(_cfg(tmp_path, base_dir)), tmp_path / "full")
    part = run_experiment(run_config(_cfg(tmp_path, base_dir, "data.fraction=0.5")), tmp_path / "half")
    assert part["bilm"]["text_hash"] != full["bilm"]["text_hash"]
    assert part["bilm"]["adapted_hash"] != full["bilm"]["adapted_hash"]


def test_adaptation_text_is_each_training_sentence_once_without_sub_phrases():
    from elmo_bench.engine.prepare import distinct_text
    from elmo_bench.tasks.api import Task
    from elmo_bench.tasks.sst.task import SstTask

    class Pair(Task):
        text_fields = ("premise", "hypothesis")

    Pair, Phrases = Pair(), SstTask()   # the phrases are SST's own decision (SstTask.own_text), not the engine's

    pairs = [{"premise": ["a", "dog"], "hypothesis": ["it", "runs"]}, {"premise": ["a", "dog"], "hypothesis": ["no"]}]
    assert distinct_text(Pair, pairs) == [["a", "dog"], ["it", "runs"], ["no"]]
    sst = [{"tokens": ["so", "good", "."], "is_root": True}, {"tokens": ["so", "good"], "is_root": False}]
    assert distinct_text(Phrases, sst) == [["so", "good", "."]]
