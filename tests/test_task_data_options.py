"""Issue 35 item 2 for the tasks' own ``data`` keys: each default is written once, in the task's ``DataOptions``
(tasks/<task>/config.py, declared as ``TaskDeclaration.data``); the composed config carries it
(conf/config.yaml's ``task_data@data``), a dataset file or the command line overrides it, the reader reads it
typed, and run identity treats it as every other key (a run directory made before the declarations, whose
identity lacks the key, still matches the default; squad's ``answer_offsets`` never changes a number)."""
from __future__ import annotations

from dataclasses import asdict, fields

import pytest

from elmo_bench.data.data_options import data_options, identity_free_keys
from elmo_bench.engine.live_identity import added_defaults, flat_identity
from elmo_bench.tasks.pos.config import DataOptions as PosData
from elmo_bench.tasks.registry import registered
from elmo_bench.tasks.squad.config import DataOptions as SquadData
from elmo_bench.tasks.srl.config import DataOptions as SrlData
from elmo_bench.tasks.sst.reader import read_splits as read_sst
from tests.config_snapshot import composed

#: the tasks whose readers take keys of their own, and those keys' defaults (as the readers' fallbacks had them)
DECLARED = {"pos": {"format": "conllu", "tag_column": "xpos", "tag_source": "gold"},
            "srl": {"format": "conll05", "words_glob": "words/*.words.gz", "props_glob": "props/*.props.gz"},
            "sst": {"train_phrases": "min4"},
            "squad": {"answer_offsets": "refuse"}}


def test_the_tasks_declare_their_data_keys_with_the_defaults_the_readers_had():
    found = {name: asdict(d.data()) for name, d in registered().items() if d.data is not None}
    assert found == DECLARED


@pytest.mark.parametrize("task", sorted(DECLARED))
def test_the_composed_config_carries_the_declared_defaults(task):
    data = composed([f"task={task}"])["data"]
    assert {key: data[key] for key in DECLARED[task]} == DECLARED[task]


def test_a_dataset_file_and_the_command_line_override_the_declared_default():
    assert {k: composed(["task=pos", "data=conll2000_pos"])["data"][k] for k in DECLARED["pos"]} == {
        "format": "conll2000", "tag_column": "xpos", "tag_source": "brill"}
    assert composed(["task=squad", "data.answer_offsets=count"])["data"]["answer_offsets"] == "count"
    assert composed(["task=srl", "data=conll2012_srl"])["data"]["words_glob"] == "words/*.words.gz"


def test_a_task_without_data_options_has_none_of_their_keys():
    """squad's answer_offsets was the root config's, in every task's data; it is squad's now."""
    data = composed(["task=ner"])["data"]
    assert not {key for keys in DECLARED.values() for key in keys} & set(data)


def test_data_options_take_the_given_keys_and_the_defaults_for_the_rest():
    assert data_options(PosData, {"format": "conll2000", "name": "x"}) == PosData(format="conll2000")
    assert data_options(SrlData, {}) == SrlData()
    assert [spec.name for spec in fields(SquadData)] == ["answer_offsets"]


def test_the_sst_reader_adds_the_default_phrases_when_the_mapping_names_none(tmp_path):
    """A hand-made data mapping without train_phrases: the declared default (min4) applies, as the reader's
    fallback did. The tree has 5 tokens; its one subtree of 4 or more tokens is the only phrase added."""
    trees = tmp_path / "train.txt"
    trees.write_text("(3 (2 It) (4 (3 is) (4 (3 a) (4 (4 good) (2 film)))))\n")
    assert len(read_sst({"source": "local", "train": str(trees)})["train"]) == 2
    assert len(read_sst({"source": "local", "train": str(trees), "train_phrases": "none"})["train"]) == 1
    # all: the root and its 8 subtrees (3 inner phrases and 5 words)
    assert len(read_sst({"source": "local", "train": str(trees), "train_phrases": "all"})["train"]) == 9


def test_run_identity_fills_a_missing_task_data_key_with_its_declared_default():
    """A run directory made before the declarations lacks ``data.words_glob`` where its dataset file did not set
    it (conll2012_srl): it matches today's identity, which holds the default; another task gets no srl keys."""
    srl = added_defaults({"task.name": "srl"})
    assert srl["data.words_glob"] == "words/*.words.gz" and srl["data.format"] == "conll05"
    assert srl["amp"] == "off"                               # the run-wide added defaults stay
    assert not any(key.startswith("data.") for key in added_defaults({"task.name": "ner"}))


def test_answer_offsets_never_enters_run_identity():
    assert identity_free_keys(SquadData) == ("answer_offsets",) and identity_free_keys(PosData) == ()
    flat = {"task.name": "squad", "data.answer_offsets": "count", "data.name": "squad", "seed": 1}
    assert flat_identity(flat, None, None) == {"task.name": "squad", "data.name": "squad", "seed": 1}
    pos = {"task.name": "pos", "data.format": "conllu"}
    assert flat_identity(pos, None, None) == pos
