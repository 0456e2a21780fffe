"""`elmo-bench score TASK FILES`: one JSON object with the contract keys, from each task's own metric module."""
from __future__ import annotations

import json

from elmo_bench.commands.main import main


def test_score_ner_prints_the_contract_keys(tmp_path, capsys):
    # conlleval format: word, gold, predicted. Gold: PER (John Smith), LOC (Paris); predicted: PER right, LOC missed.
    (tmp_path / "out.txt").write_text("John I-PER I-PER\nSmith I-PER I-PER\nin O O\nParis I-LOC O\n\n")
    assert main(["score", "ner", str(tmp_path / "out.txt")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"precision", "recall", "f1"}
    assert out["precision"] == 100.0 and out["recall"] == 50.0 and abs(out["f1"] - 200 / 3) < 1e-9


def test_score_squad_prints_the_contract_keys(tmp_path, capsys):
    gold = {"version": "1.1", "data": [{"title": "t", "paragraphs": [{"context": "The cat sat on the mat.", "qas": [
        {"id": "q1", "question": "Who sat?", "answers": [{"text": "The cat", "answer_start": 0}]},
        {"id": "q2", "question": "Where?", "answers": [{"text": "on the mat", "answer_start": 12}]}]}]}]}
    (tmp_path / "gold.json").write_text(json.dumps(gold))
    (tmp_path / "pred.json").write_text(json.dumps({"q1": "cat", "q2": "the mat"}))
    assert main(["score", "squad", str(tmp_path / "gold.json"), str(tmp_path / "pred.json")]) == 0
    out = json.loads(capsys.readouterr().out)
    # q1: "cat" vs "The cat" → normalised equal (article removed): EM 1, F1 1. q2: "the mat" vs "on the mat" →
    # normalised "mat" vs "on mat": EM 0, F1 = 2 * (1/1 * 1/2) / (1 + 1/2) = 2/3
    assert set(out) == {"exact_match", "f1"}
    assert out["exact_match"] == 50.0 and abs(out["f1"] - 100 * (1 + 2 / 3) / 2) < 1e-9
