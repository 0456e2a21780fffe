"""Issue 34 item 4: leakage between splits is measured, recorded and refused above ``data.max_overlap``; identical
splits are its 100% case. Hand-built examples, the NER sample through the engine's read_data, and the shared data's
shares (skipped when ../shared/data is absent)."""
from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from elmo_bench.base.errors import ConfigError
from elmo_bench.base.paths import DATA_ROOT
from elmo_bench.data.split_checks import split_overlap
from elmo_bench.engine.experiment import load_task
from elmo_bench.engine.live_identity import flat_identity
from elmo_bench.engine.prepare import read_data
from elmo_bench.engine.run_config import DataPart
from elmo_bench.identity.rules import flatten
from tests.conftest import REPO

SAMPLES = REPO / "tasks" / "ner" / "samples"


def _sentences(path: Path) -> list[str]:
    """A CoNLL file's sentence blocks (blank-line separated), without their trailing blank line."""
    return [block for block in path.read_text().strip("\n").split("\n\n") if block.strip()]


def _write(path: Path, blocks: list[str]) -> Path:
    path.write_text("\n\n".join(blocks) + "\n")
    return path


def _ner_cfg(tmp_path: Path, **data) -> DataPart:
    base = {"source": "local", "train": str(SAMPLES / "sample.train"), "dev": str(SAMPLES / "sample.dev"),
            "test": str(SAMPLES / "sample.test"), "fraction": 1.0}
    return DataPart.of({**base, **data})


def test_shares_count_examples_by_their_text_key():
    ner = load_task("ner")
    sentence = lambda *words: {"tokens": list(words)}  # noqa: E731
    splits = {"train": [sentence("a", "b"), sentence("c")],
              "dev": [sentence("a", "b"), sentence("d"), sentence("e"), sentence("f")],
              "test": [sentence("c"), sentence("d"), sentence("a", "b"), sentence("g", "h")]}
    assert split_overlap(splits, ner.example_key) == {"dev_in_train": 0.25, "test_in_train": 0.5,
                                                      "test_in_dev": 0.5}


def test_squad_counts_question_and_context_and_sst_counts_roots_only():
    squad = load_task("squad")
    context = ["The", "river", "flows", "north", "."]
    train = [{"question": ["Where", "does", "it", "flow", "?"], "context": context}]
    dev = [{"question": ["What", "flows", "?"], "context": context},          # same context, new question: no leak
           {"question": ["Where", "does", "it", "flow", "?"], "context": context}]   # the same example: a leak
    assert split_overlap({"train": train, "dev": dev}, squad.example_key) == {"dev_in_train": 0.5}
    sst = load_task("sst")
    root = lambda *w: {"tokens": list(w), "is_root": True}   # noqa: E731
    phrase = lambda *w: {"tokens": list(w), "is_root": False}  # noqa: E731
    splits = {"train": [root("a", "good", "film"), phrase("good", "film")],
              "dev": [root("not", "a", "good", "film"), phrase("good", "film"), phrase("a", "good", "film")]}
    assert split_overlap(splits, sst.example_key) == {"dev_in_train": 0.0}   # the phrases are not counted


@pytest.mark.parametrize("variant", ["dev minus its last sentence", "dev shuffled"])
def test_a_test_file_that_is_almost_or_reordered_dev_is_refused_naming_both_files(tmp_path, variant):
    """Both passed the identical-content check before: a leak was caught only when the files were identical."""
    dev = _sentences(SAMPLES / "sample.dev")
    blocks = dev[:-1] if variant == "dev minus its last sentence" else random.Random(1).sample(dev, len(dev))
    test = _write(tmp_path / "test.txt", blocks)
    with pytest.raises(ConfigError) as caught:
        read_data(_ner_cfg(tmp_path, test=str(test)), load_task("ner"), 1)
    line = str(caught.value)
    assert "\n" not in line
    assert line.startswith(f"data: the test split ({test}) shares ")
    assert f"with the dev split ({SAMPLES / 'sample.dev'})" in line and "data.max_overlap=0.25" in line
    assert "100.0% of its examples" in line and "data.allow_identical_splits=true" in line
    allowed = read_data(_ner_cfg(tmp_path, test=str(test), allow_identical_splits=True), load_task("ner"), 1)
    assert allowed.split_overlap["test_in_dev"] == 1.0


def test_the_limit_is_data_max_overlap_and_the_shares_are_recorded_before_the_fraction(tmp_path):
    """A test file holding 2 dev sentences and 2 new ones: 50% of test in dev; refused at 0.25, allowed at 0.5; the
    shares are the full splits' (data.fraction=0.1 takes fewer training examples, the same shares)."""
    dev = [block for block in _sentences(SAMPLES / "sample.dev") if not block.startswith("-DOCSTART-")]
    new = ["Zyxxy NNP I-NP I-PER\nwins VBZ I-VP O", "Qwerty NNP I-NP I-ORG\nloses VBZ I-VP O"]
    test = _write(tmp_path / "test.txt", [dev[0], dev[1], *new])
    with pytest.raises(ConfigError, match=r"shares 50\.0% of its examples with the dev split"):
        read_data(_ner_cfg(tmp_path, test=str(test)), load_task("ner"), 1)
    full = read_data(_ner_cfg(tmp_path, test=str(test), max_overlap=0.5), load_task("ner"), 1)
    part = read_data(_ner_cfg(tmp_path, test=str(test), max_overlap=0.5, fraction=0.1), load_task("ner"), 1)
    assert full.split_overlap == part.split_overlap
    assert full.split_overlap["test_in_dev"] == 0.5 and full.split_overlap["test_in_train"] == 0.0
    assert len(part.splits["train"]) < len(full.splits["train"])


def test_data_max_overlap_is_not_part_of_a_run_identity():
    config = {"seed": 1, "data": {"train": "x", "max_overlap": 0.25, "allow_identical_splits": False}}
    older = {"seed": 1, "data": {"train": "x"}}
    assert flat_identity(flatten(config), None, None) == flat_identity(flatten(older), None, None)


def test_shares_of_drawn_splits_are_the_share_of_drawn_sentences_seen_in_train():
    """Dev drawn from a pool of sentences that train covers almost entirely: the share is what counting by hand gives
    (the cost of this step, beside reading the splits, is measured by bench/split_overlap_speed.py)."""
    ner = load_task("ner")
    rng = random.Random(0)
    sentences = [[f"w{rng.randrange(2000)}" for _ in range(8)] for _ in range(400)]
    train = [{"tokens": rng.choice(sentences)} for _ in range(2000)]
    dev = [{"tokens": rng.choice(sentences)} for _ in range(300)]
    seen = {tuple(ex["tokens"]) for ex in train}
    expected = sum(tuple(ex["tokens"]) in seen for ex in dev) / len(dev)
    assert split_overlap({"train": train, "dev": dev}, ner.example_key)["dev_in_train"] == pytest.approx(expected)
    assert 0.9 < expected < 1.0


SHARED = {  # task, data group overrides → the shares measured on ../shared/data (percent, 2 decimals)
    ("ner", "conll2003"): {"dev_in_train": 5.94, "test_in_train": 3.65, "test_in_dev": 1.45},
    ("pos", "ud_ewt_pos"): {"dev_in_train": 3.40, "test_in_train": 4.53, "test_in_dev": 3.51},
}


@pytest.mark.parametrize("task_name,data", sorted(SHARED))
def test_the_shared_data_shares(task_name, data):
    if not DATA_ROOT.is_dir():
        pytest.skip(f"the shared data ({DATA_ROOT}) is absent")
    from hydra import compose, initialize_config_dir

    from elmo_bench.commands.hydra_setup import register_resolvers

    register_resolvers()
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        cfg = compose("config", overrides=[f"task={task_name}", f"data={data}"])
    task = load_task(task_name)
    splits = task.read(OmegaConf.to_container(cfg.data, resolve=True))
    shares = split_overlap(splits, task.example_key)
    assert {k: round(100 * v, 2) for k, v in shares.items()} == SHARED[(task_name, data)]
    assert max(shares.values()) < float(cfg.data.max_overlap)    # the shipped data is not refused


def test_a_copy_of_the_ner_sample_dev_as_test_through_shutil_is_identical(tmp_path):
    copy = tmp_path / "copy.txt"
    shutil.copy(SAMPLES / "sample.dev", copy)
    with pytest.raises(ConfigError, match=r"shares 100\.0% of its examples with the dev split"):
        read_data(_ner_cfg(tmp_path, test=str(copy)), load_task("ner"), 1)


@pytest.mark.parametrize("value", [2, -0.1, "abc"])
def test_a_max_overlap_outside_zero_to_one_is_one_line(value):
    from elmo_bench.engine.run_config import check_run

    with pytest.raises(ConfigError, match=r"^config: data\.max_overlap expected a number >= 0 and <= 1, found "):
        check_run({"seed": 1, "data": {"max_overlap": value}}, {})
