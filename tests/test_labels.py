"""Issue 12, labels: a tag seen in dev/test but not in train is in the label set with a logged warning; it never
crashes a run after its first epoch."""
from __future__ import annotations

import logging

from elmo_bench.engine.config_door import run_config
from elmo_bench.engine.experiment import run_experiment
from elmo_bench.modules.labels import bio_labels
from elmo_bench.tasks.ner.task import NerTask
from elmo_bench.tasks.srl.task import SrlTask
from tests.conftest import REPO, needs_fixtures
from tests.engine_helpers import compose_run


def test_types_only_in_dev_or_test_join_the_label_set_with_a_warning(caplog):
    caplog.set_level(logging.WARNING)
    splits = {"train": [{"tags": ["B-PER", "O"]}], "dev": [{"tags": ["B-LOC", "I-LOC"]}],
              "test": [{"tags": ["B-EVENT"]}]}
    assert bio_labels(splits, "ner") == ["O", "B-EVENT", "I-EVENT", "B-LOC", "I-LOC", "B-PER", "I-PER"]
    assert "ner: label types ['EVENT', 'LOC'] occur in ['dev', 'test'] but never in the training data" in caplog.text
    for task in (NerTask(), SrlTask()):
        task.fit_labels(splits)
        assert "B-EVENT" in task.labels


@needs_fixtures
def test_ner_with_a_dev_only_entity_type_trains_and_scores(tmp_path, caplog):
    caplog.set_level(logging.WARNING)
    dev = (REPO / "tasks/ner/samples/sample.dev").read_text().replace("I-MISC", "I-EVENT").replace("B-MISC", "B-EVENT")
    train = (REPO / "tasks/ner/samples/sample.train").read_text()
    train = "\n".join(line for line in train.splitlines() if "MISC" not in line and "EVENT" not in line) + "\n"
    (tmp_path / "train.txt").write_text(train)
    (tmp_path / "dev.txt").write_text(dev)
    assert "EVENT" in dev and "EVENT" not in train
    cfg = compose_run(tmp_path, "task=ner", "data=ner_sample", f"data.train={tmp_path / 'train.txt'}",
                      f"data.dev={tmp_path / 'dev.txt'}", "trainer.max_epochs=2", "trainer.batch_size=16",
                      "task.head.lstm_hidden=[8]", "task.head.char_filters=4", tiny=False)
    results = run_experiment(run_config(cfg), tmp_path / "run")
    assert results["epochs"]["run"] == 2 and "f1" in results["metrics"]["dev"]
    assert "label types ['EVENT'" in caplog.text
