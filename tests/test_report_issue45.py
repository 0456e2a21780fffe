"""Issue 45, the report's part ("nothing silently wrong"): probe records of different training sizes or epoch caps
are never averaged as seeds, disagreeing duplicates are refused, every run read is shown or counted as skipped with
its reason, an empty denominator is null with a count, and the tables and figures say what they show."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from elmo_bench.probe import structural_metrics as sm
from elmo_bench.records.run_record import RunRecord
from elmo_bench.report.cli import build_report
from elmo_bench.report.collect import collect
from elmo_bench.report.structural_mdl import structural_mdl_table

BILM = "abcdef0123456789"
ENCODER = {"kind": "bilm", "hash": BILM, "layers": 3, "dim": 256}
SHIPPED = {"name": "shipped", "hash": BILM, "layers": 3, "dim": 256}


def probe_record(path: Path, task: str, values: dict[str, float], *, sentences: int = 2000, epochs: int = 10,
                 extra: dict[str, Any] | None = None) -> None:
    """A structural-probe or MDL results.json of the biLM: ``values`` are layer 0..2's test (structural) or train
    (MDL) metrics, the same for every layer."""
    split = "test" if task == "structural_probe" else "train"
    metrics = {split: {f"layer_{k}_{m}": v for k in range(3) for m, v in values.items()}}
    config = {"max_epochs": epochs, "probe": "linear", "random_init": None, "random_seed": 0}
    path.mkdir(parents=True, exist_ok=True)
    RunRecord(task=task, embedder="elmo", seed=0, config=config, metrics=metrics,
              data={"name": "ud_ewt", "fraction": 1.0, "train_sentences": sentences, "punct": "xpos"},
              main_metric=f"layer_1_{next(iter(values))}", mixes={}, elmo=None,
              epochs={"run": 0, "best": None, "history": []}, bilm=SHIPPED, encoder=ENCODER,
              extra=extra or {}).write(path / "results.json")


def _rows(table) -> list[list[str]]:
    return [row for row in table.rows if row[0].startswith("ELMo")]


# item 1: training sizes and epoch caps are never seeds --------------------------------------------------------------

def test_structural_records_of_two_training_sizes_are_two_labelled_rows_not_one_mean(tmp_path):
    probe_record(tmp_path / "small", "structural_probe", {"uuas": 13.35}, sentences=200)
    probe_record(tmp_path / "large", "structural_probe", {"uuas": 14.51}, sentences=1200)
    table = structural_mdl_table(collect([tmp_path]).runs)
    layer1 = [row for row in _rows(table) if row[2] == "layer_1"]
    assert [(row[1], row[3]) for row in layer1] == [("trained, 200 train sentences", "13.35"),
                                                    ("trained, 1200 train sentences", "14.51")]
    assert not any("±" in cell for row in table.rows for cell in row)          # old: "13.93 ± 0.82"


def test_mdl_bits_of_two_training_sizes_are_never_averaged(tmp_path):
    probe_record(tmp_path / "a", "mdl_probe", {"online_bits": 90000.0, "compression": 2.0}, sentences=1000, epochs=40)
    probe_record(tmp_path / "b", "mdl_probe", {"online_bits": 120000.0, "compression": 2.1}, sentences=1200, epochs=40)
    cells = {row[1]: row[3 + 4] for row in _rows(structural_mdl_table(collect([tmp_path]).runs))
             if row[2] == "layer_0"}
    assert cells == {"trained, 1000 train sentences": "90000", "trained, 1200 train sentences": "120000"}


def test_one_probe_with_two_epoch_caps_is_two_rows_and_the_other_probes_cap_stays_beside_it(tmp_path):
    probe_record(tmp_path / "s10", "structural_probe", {"uuas": 50.0}, epochs=10)
    probe_record(tmp_path / "s30", "structural_probe", {"uuas": 60.0}, epochs=30)
    probe_record(tmp_path / "mdl", "mdl_probe", {"online_bits": 30000.0, "compression": 7.0}, epochs=40)
    rows = [row for row in _rows(structural_mdl_table(collect([tmp_path]).runs)) if row[2] == "layer_0"]
    assert [(row[1], row[3]) for row in rows] == [
        ("trained, MDL linear 40 epochs; structural_probe 10 epochs", "50.00"),
        ("trained, structural_probe 30 epochs", "60.00")]
    assert rows[0][7] == "30000" and rows[1][7] == "—"


def test_one_size_and_one_cap_keep_the_plain_label(tmp_path):
    probe_record(tmp_path / "s", "structural_probe", {"uuas": 50.0})
    probe_record(tmp_path / "m", "mdl_probe", {"online_bits": 30000.0, "compression": 7.0}, epochs=40)
    assert [row[1] for row in _rows(structural_mdl_table(collect([tmp_path]).runs))] == ["trained"] * 3


# item 4: an empty denominator is null with a count ------------------------------------------------------------------

def test_uuas_and_root_accuracy_without_a_gold_edge_are_null_with_their_count():
    one_word = [np.zeros((1, 1))]
    word_and_dot = [sm.tree_distances([0, 1])]
    assert sm.uuas(one_word, one_word, [np.zeros(1, bool)]) == (None, 0)                  # old: 0.0
    assert sm.uuas(word_and_dot, word_and_dot, [np.array([False, True])]) == (None, 0)
    assert sm.root_accuracy([np.zeros(1)], [np.zeros(1)], [np.zeros(1, bool)]) == (None, 0)   # old: 100.0
    # a split with one real choice keeps the authors' number over every sentence
    two = np.asarray([1.0, 0.0])
    assert sm.root_accuracy([np.zeros(1), two], [np.zeros(1), two], [np.zeros(1, bool), np.zeros(2, bool)]) == (
        100.0, 1)


def test_the_structural_cli_records_null_and_the_count_never_a_rounded_number():
    from elmo_bench.probe.structural_cli import _scored

    assert _scored("uuas", sm.Scored(None, 0)) == {"uuas": None, "uuas_count": 0}
    assert _scored("root_acc", sm.Scored(66.666666, 3)) == {"root_acc": 66.67}


def test_the_report_shows_a_null_uuas_as_missing_not_zero(tmp_path):
    probe_record(tmp_path / "s", "structural_probe", {"uuas": None, "uuas_count": 0, "root_acc": None,
                                                      "root_acc_count": 0, "dspr": 0.5})
    table = structural_mdl_table(collect([tmp_path]).runs)
    row = _rows(table)[0]
    assert row[3] == "—" and row[5] == "—" and row[4] == "0.500"
    assert table.records[0]["test"]["uuas"] is None
