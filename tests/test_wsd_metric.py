"""The WSD scorer against hand-computed values with the framework Scorer.java's semantics."""
from __future__ import annotations

import json

import pytest

from elmo_bench.commands.main import main
from elmo_bench.probe.wsd.metric import score, score_files

GOLD = "d0.t0 bank%1:14:00::\nd0.t1 run%2:38:00:: run%2:38:01::\nd0.t2 old%3:00:01::\nd0.t3 go%2:38:00::\n"


def test_any_gold_key_counts_and_unanswered_lower_recall_only():
    gold = {"a": {"k1"}, "b": {"k2", "k3"}, "c": {"k4"}, "d": {"k5"}}
    # a right, b right (the second of two gold keys), c wrong, d unanswered; "zz" is not in gold: ignored
    result = score(gold, {"a": {"k1"}, "b": {"k3"}, "c": {"k9"}, "zz": {"k1"}})
    assert result["precision"] == pytest.approx(100 * 2 / 3)
    assert result["recall"] == pytest.approx(100 * 2 / 4)
    p, r = 2 / 3, 2 / 4
    assert result["f1"] == pytest.approx(100 * 2 * p * r / (p + r))


def test_several_predicted_keys_count_fractionally():
    gold = {"a": {"k1"}, "b": {"k2"}}
    # a: 1 of 2 keys right → 0.5 correct, 0.5 wrong; b: 2 of 3 keys wrong → 1/3 correct
    result = score(gold, {"a": {"k1", "x"}, "b": {"k2", "x", "y"}})
    assert result["precision"] == pytest.approx(100 * (0.5 + 1 / 3) / 2)
    assert result["recall"] == pytest.approx(100 * (0.5 + 1 / 3) / 2)


def test_nothing_answered_scores_zero():
    assert score({"a": {"k"}}, {}) == {"precision": 0.0, "recall": 0.0, "f1": 0.0}


def test_files_and_cli(tmp_path, capsys):
    gold, pred = tmp_path / "gold.key", tmp_path / "pred.key"
    gold.write_text(GOLD)
    # repeated id lines merge into one answer set; a line without a key is skipped as the Java scorer does
    pred.write_text("d0.t0 bank%1:14:00::\nd0.t1 run%2:38:01::\nd0.t2 old%3:00:02::\nd0.t2 old%3:00:01::\nd0.t3\n")
    expected = {"precision": 100 * 2.5 / 3, "recall": 100 * 2.5 / 4}
    result = score_files(str(gold), str(pred))
    assert result["precision"] == pytest.approx(expected["precision"])
    assert result["recall"] == pytest.approx(expected["recall"])
    assert main(["score", "wsd", str(gold), str(pred)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert set(printed) == {"precision", "recall", "f1"} and printed["recall"] == pytest.approx(62.5)
