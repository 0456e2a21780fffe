"""Each of the six tasks trains an epoch on tiny invented data (the readers' own test samples) with each tiny
Hugging Face model (BERT, RoBERTa, GPT-2 from tests/hf_tiny.py) as its frozen encoder; results.json records it.
The samples serve as train, dev and test at once (data.allow_identical_splits=true), and SQuAD's sample has a
deliberately misaligned answer (data.answer_offsets=count): the subject here is the encoder, not the data checks."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("transformers", reason="transformers is not installed (pip install -e '.[dev]')")

from tests.hf_tiny import KINDS, tiny_models  # noqa: E402


def _snli(root: Path) -> list[str]:
    from tests.test_snli_reader import _pair, _write

    pairs = [_pair(f"p{i}", label, s1, s2) for i, (label, s1, s2) in enumerate([
        ("entailment", "A dog runs .", "An animal moves ."), ("contradiction", "A cat sleeps .", "A cat runs fast ."),
        ("neutral", "Two men talk .", "Two friends talk ."), ("entailment", "Kids play outside .", "Kids play .")])]
    files = {split: _write(root / f"{split}.jsonl", pairs) for split in ("train", "dev", "test")}
    return ["task=snli", "data=snli_sandbox", "data.dev_from_train=null",
            *(f"data.{split}={path}" for split, path in files.items())]


def _squad(root: Path) -> list[str]:
    from tests.test_squad_reader import SAMPLE

    files = {}
    for split in ("train", "dev", "test"):
        files[split] = root / f"{split}.json"
        files[split].write_text(json.dumps(SAMPLE))
    return ["task=squad", "data=squad_sandbox", "data.split_by_article=null", "data.answer_offsets=count",
            *(f"data.{split}={path}" for split, path in files.items())]


def _srl(root: Path) -> list[str]:
    from tests.test_srl_reader import PROPS, WORDS, make_split

    dirs = {split: make_split(root / split, WORDS, PROPS) for split in ("train", "dev", "test")}
    return ["task=srl", "data=conll2005", "data.test_brown=null", *(f"data.{s}={p}" for s, p in dirs.items())]


def _sst(root: Path) -> list[str]:
    from tests.test_sst_reader import TREE

    trees = [TREE, "(3 (2 A) (4 (4 great) (2 film)))", "(0 (0 Awful) (2 .))", "(2 (2 It) (2 (2 is) (2 here)))"]
    files = {}
    for split in ("train", "dev", "test"):
        files[split] = root / f"{split}.txt"
        files[split].write_text("\n".join(trees) + "\n")
    return ["task=sst", "data=sst", *(f"data.{s}={p}" for s, p in files.items())]


def _pos(root: Path) -> list[str]:
    from tests.test_pos_reader import CONLLU

    files = {}
    for split in ("train", "dev", "test"):
        files[split] = root / f"{split}.conllu"
        files[split].write_text(CONLLU)
    return ["task=pos", "data=ud_ewt_pos", *(f"data.{s}={p}" for s, p in files.items())]


def _coref(root: Path) -> list[str]:
    from tests.test_coref_reader import ONTO

    files = {}
    for split in ("train", "dev", "test"):
        files[split] = root / f"{split}.gold_conll"
        files[split].write_text(ONTO)
    return ["task=coref", "data=conll2012_coref", "data.source=local", *(f"data.{s}={p}" for s, p in files.items())]


def _ner(root: Path) -> list[str]:
    return ["task=ner", "data=ner_sample"]


TASKS = {"ner": _ner, "snli": _snli, "squad": _squad, "srl": _srl, "sst": _sst, "pos": _pos, "coref": _coref}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("task", sorted(TASKS))
def test_every_task_trains_an_epoch_with_every_model(tmp_path, task, kind):
    from elmo_bench.engine.config_door import run_config
    from elmo_bench.engine.experiment import run_experiment
    from tests.engine_helpers import compose_run

    model = tiny_models()[kind]
    cfg = compose_run(tmp_path, *TASKS[task](tmp_path), "embedder=elmo", "encoder=transformers",
                      f"encoder.path={model}", "trainer.max_epochs=1",
                      "data.allow_identical_splits=true", tiny=False)  # one invented sample serves every split
    results = run_experiment(run_config(cfg), tmp_path / "run")
    assert results["task"] == task and results["epochs"]["run"] == 1
    assert results["encoder"]["kind"] == "transformers" and results["encoder"]["model_type"] == kind
    assert results["encoder"]["layers"] == 3 and results["bilm"] is None
    assert all(len(m["weights"]) == 3 for m in results["mixes"].values()) and results["mixes"]
    main = results["metrics"]["test"][results["main_metric"]]
    assert main == main and 0.0 <= main <= 100.0  # a number, not NaN
