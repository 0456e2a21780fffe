"""SQuAD EM/F1 on hand-computed cases, with the official evaluate-v1.1.py semantics."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from elmo_bench.tasks.squad.metric import evaluate, exact_match_score, f1_score, normalize_answer, score_files


@pytest.mark.parametrize("raw, normal", [
    ("The  Quick, brown fox!", "quick brown fox"),
    ("an apple a day", "apple day"),
    ("Theatre of the Absurd", "theatre of absurd"),    # articles only as whole words
    ("A", ""),
    ("U.S. $1,000", "us 1000"),                          # punctuation removed, not replaced by a space
    ("rock-n-roll", "rocknroll"),
    ("“curly” quotes", "“curly” quotes"),                # only ASCII string.punctuation is removed
])
def test_normalize_answer(raw: str, normal: str) -> None:
    assert normalize_answer(raw) == normal


def test_exact_match_ignores_case_punctuation_articles() -> None:
    assert exact_match_score("Denver Broncos.", "the denver broncos")
    assert not exact_match_score("Denver", "Denver Broncos")


def test_f1_hand_values() -> None:
    assert f1_score("the cat sat", "cat sat down") == pytest.approx(0.8)       # P 1, R 2/3
    assert f1_score("x x y", "x y y") == pytest.approx(2 / 3)                  # Counter overlap: one x, one y
    assert f1_score("", "cat") == 0.0                                          # empty prediction
    assert f1_score("the", "a") == 0.0                                         # both normalise to nothing
    assert exact_match_score("the", "a")                                       # ... yet match exactly


def test_evaluate_max_over_gold_and_missing_ids() -> None:
    gold = [("q1", ["Denver Broncos", "Broncos"]),        # EM via the second answer
            ("q2", ["February 7, 2016", "Feb 7"]),        # F1 max: "7 2016" vs first: P 1, R 2/3 → 0.8
            ("q3", ["Santa Clara"]),                      # empty prediction: 0
            ("q4", ["Levi's Stadium"])]                   # missing: 0
    scores, missing = evaluate(gold, {"q1": "the Broncos", "q2": "7, 2016", "q3": ""})
    assert missing == ["q4"]
    assert scores["exact_match"] == pytest.approx(100 * 1 / 4)
    assert scores["f1"] == pytest.approx(100 * (1 + 0.8) / 4)


def test_score_files_official_layout(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    gold = {"version": "1.1", "data": [{"title": "T", "paragraphs": [{"context": "Ann met Bob in Rome.", "qas": [
        {"id": "a", "question": "Who met Bob?", "answers": [{"text": "Ann", "answer_start": 0}]},
        {"id": "b", "question": "Where?", "answers": [{"text": "Rome", "answer_start": 15},
                                                      {"text": "in Rome", "answer_start": 12}]}]}]}]}
    (tmp_path / "gold.json").write_text(json.dumps(gold))
    (tmp_path / "pred.json").write_text(json.dumps({"b": "Rome."}))
    assert score_files(str(tmp_path / "gold.json"), str(tmp_path / "pred.json")) == {"exact_match": 50.0, "f1": 50.0}
    assert "Unanswered question a will receive score 0." in capsys.readouterr().err
