"""Each task's official-format writer and file scorer are one plugin point: predictions written with
``Task.write_official`` and scored by ``Task.score_files`` (what ``elmo-bench score`` prints) against the split's
official gold file give exactly ``Task.metric`` of the same predictions."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from elmo_bench.commands.main import file_scorers, main
from elmo_bench.engine.experiment import load_task
from tests.test_report_golden import TEST_TREES
from tests.test_srl_reader import PROPS, WORDS, make_split


def _round_trip(name: str, gold: list[str], predictions, examples, tmp_path: Path) -> tuple[dict, dict]:
    task = load_task(name)
    task.write_official(tmp_path / "pred", predictions, examples)
    return task.score_files(*gold, str(tmp_path / "pred")), task.metric(predictions, examples)


def test_ner_conlleval_file(tmp_path):
    examples = [{"tokens": ["John", "Smith", "in", "Paris"], "tags": ["B-PER", "I-PER", "O", "B-LOC"]},
                {"tokens": ["EU", "rejects"], "tags": ["B-ORG", "O"]}]
    predictions = [["B-PER", "I-PER", "O", "O"], ["B-ORG", "B-MISC"]]
    scored, metric = _round_trip("ner", [], predictions, examples, tmp_path)
    assert scored == pytest.approx(metric) and scored["f1"] == pytest.approx(100 * 2 * (2 / 3 * 2 / 3) / (4 / 3))


def test_srl_props_files(tmp_path):
    from elmo_bench.data.srl_conll import read_conll05_split

    examples = read_conll05_split(make_split(tmp_path / "devel", WORDS, PROPS))
    load_task("srl").write_official(tmp_path / "gold.props", [e["tags"] for e in examples], examples)
    predictions = [list(e["tags"]) for e in examples]
    predictions[0] = ["O" if t.endswith("A1") else t for t in predictions[0]]       # one argument missed
    scored, metric = _round_trip("srl", [str(tmp_path / "gold.props")], predictions, examples, tmp_path)
    assert {k: scored[k] for k in ("precision", "recall", "f1")} == pytest.approx(
        {k: metric[k] for k in ("precision", "recall", "f1")})
    assert scored["recall"] == pytest.approx(200 / 3)


def test_squad_snli_and_sst_prediction_files(tmp_path):
    gold = {"version": "1.1", "data": [{"title": "t", "paragraphs": [{"context": "The cat sat on the mat.", "qas": [
        {"id": "q1", "question": "Who sat?", "answers": [{"text": "The cat", "answer_start": 0}]},
        {"id": "q2", "question": "Where?", "answers": [{"text": "on the mat", "answer_start": 12}]}]}]}]}
    (tmp_path / "squad.json").write_text(json.dumps(gold))
    examples = load_task("squad").read({"source": "local", "test": str(tmp_path / "squad.json")})["test"]
    scored, metric = _round_trip("squad", [str(tmp_path / "squad.json")], ["cat", "the mat"], examples, tmp_path)
    assert scored == pytest.approx(metric) and scored["exact_match"] == 50.0

    pairs = [{"pairID": f"p{i}", "gold_label": label, "sentence1": "A man sleeps .", "sentence2": "He rests .",
              "sentence1_binary_parse": "", "sentence2_binary_parse": ""}
             for i, label in enumerate(["entailment", "neutral", "contradiction", "neutral"])]
    (tmp_path / "snli.jsonl").write_text("".join(json.dumps(p) + "\n" for p in pairs))
    examples = load_task("snli").read({"source": "local", "test": str(tmp_path / "snli.jsonl")})["test"]
    predictions = ["entailment", "neutral", "neutral", "neutral"]
    scored, metric = _round_trip("snli", [str(tmp_path / "snli.jsonl")], predictions, examples, tmp_path)
    assert scored == pytest.approx(metric) and scored["accuracy"] == 75.0

    (tmp_path / "sst.txt").write_text("\n".join(TEST_TREES) + "\n")
    examples = load_task("sst").read({"source": "local", "test": str(tmp_path / "sst.txt")})["test"]
    predictions = [e["label"] if i % 4 else (e["label"] + 1) % 5 for i, e in enumerate(examples)]
    scored, metric = _round_trip("sst", [str(tmp_path / "sst.txt")], predictions, examples, tmp_path)
    assert scored == pytest.approx(metric)
    assert scored["accuracy"] == pytest.approx(100 * sum(bool(i % 4) for i, e in enumerate(examples)
                                                         if e.get("is_root", True)) / 20)


def test_the_score_command_lists_the_registry_tasks_that_score_files_and_the_wsd_probe(capsys):
    assert sorted(file_scorers()) == ["coref", "ner", "snli", "squad", "srl", "sst", "wsd"]
    assert main(["score", "pos", "a", "b"]) == 2                     # POS has no file scorer: not a choice
    assert "invalid choice: 'pos' (choose from 'coref', 'ner', 'snli', 'squad', 'srl', 'sst', 'wsd')" in \
        capsys.readouterr().err


def test_coref_response_file_copies_the_key_rows(tmp_path):
    from elmo_bench.base.errors import DataError
    from tests.test_coref_metric import KEY_A, conll

    (tmp_path / "key.conll").write_text(conll([("docA", KEY_A), ("docB", [[("Rain", "(4)"), ("fell", "(4)")]])]))
    examples = load_task("coref").read({"source": "local", "test": str(tmp_path / "key.conll")})["test"]
    predictions = [[[(0, 0), (2, 2)], [(4, 4), (6, 6)]], []]
    scored, metric = _round_trip("coref", [str(tmp_path / "key.conll")], predictions, examples, tmp_path)
    assert scored["conll_f1"] == pytest.approx(metric["conll_f1"]) and 0 < scored["conll_f1"] < 100
    assert scored["muc"]["f1"] == pytest.approx(metric["muc_f1"])
    with pytest.raises(DataError, match="copies the rows of one key file"):
        load_task("coref").write_official(tmp_path / "x", predictions, [{**e, "path": None} for e in examples])
