"""SNLI reader: binary-parse tokens, '-' dropped and counted, errors that name file and line, real-data counts."""
from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from elmo_bench.base.errors import DataError
from elmo_bench.tasks.snli.metric import majority_class_baseline, score_files
from elmo_bench.tasks.snli.reader import read_jsonl, tokens_from_binary_parse
from elmo_bench.tasks.snli.task import SnliTask

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def _pair(pid: str, label: str, s1: str = "A dog runs .", s2: str = "An animal moves .", parse: bool = True) -> dict:
    rec = {"pairID": pid, "gold_label": label, "sentence1": s1.replace(" .", "."), "sentence2": s2.replace(" .", ".")}
    if parse:
        rec["sentence1_binary_parse"] = "( ( " + " ".join(s1.split()[:2]) + " ) ( " + " ".join(s1.split()[2:]) + " ) )"
        rec["sentence2_binary_parse"] = "( " + s2 + " )"
    return rec


def _write(path: Path, records: list, gz: bool = False) -> Path:
    text = "\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n"
    if gz:
        with gzip.open(path, "wt", encoding="utf-8") as h:
            h.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_binary_parse_tokens() -> None:
    assert tokens_from_binary_parse("( ( Two women ) ( ( are ( embracing ) ) . ) )") == ["Two", "women", "are",
                                                                                          "embracing", "."]


def test_read_drops_and_counts_dash_and_reads_gz(tmp_path: Path) -> None:
    recs = [_pair("p1", "entailment"), _pair("p2", "-"), _pair("p3", "neutral", parse=False),
            _pair("p4", "-"), _pair("p5", "contradiction")]
    examples, dropped = read_jsonl(_write(tmp_path / "s.jsonl.gz", recs, gz=True))
    assert dropped == 2
    assert [e["id"] for e in examples] == ["p1", "p3", "p5"]
    assert examples[0]["premise"] == ["A", "dog", "runs", "."]          # from the parse: '.' split off
    assert examples[1]["premise"] == ["A", "dog", "runs", "."]          # no parse: the same PTB tokenizer
    assert examples[2]["label"] == "contradiction"


def test_malformed_json_names_file_and_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "bad.jsonl", [_pair("p1", "neutral"), '{"pairID": "p2", "gold_label": '])
    with pytest.raises(DataError, match=r"bad\.jsonl:2: malformed JSON"):
        read_jsonl(path)


def test_missing_field_names_field_and_line(tmp_path: Path) -> None:
    rec = _pair("p9", "neutral")
    del rec["sentence2"]
    path = _write(tmp_path / "miss.jsonl", [_pair("p1", "neutral"), _pair("p2", "neutral"), rec])
    with pytest.raises(DataError, match=r"miss\.jsonl:3: missing field 'sentence2' \(pairID='p9'\)"):
        read_jsonl(path)


def test_unknown_label_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"u\.jsonl:1: gold_label 'maybe'"):
        read_jsonl(_write(tmp_path / "u.jsonl", [_pair("p1", "maybe")]))


def test_task_dev_from_train_carves_last_pairs(tmp_path: Path) -> None:
    recs = [_pair(f"p{i}", ["entailment", "neutral", "-"][i % 3]) for i in range(9)]
    train = _write(tmp_path / "t.jsonl", recs)
    task = SnliTask()
    splits = task.read({"source": "local", "train": str(train), "dev": None, "test": str(train), "dev_from_train": 2})
    assert [e["id"] for e in splits["dev"]] == ["p6", "p7"]
    assert [e["id"] for e in splits["train"]] == ["p0", "p1", "p3", "p4"]
    assert len(splits["test"]) == 6
    assert task.dropped == {"train": 3, "test": 3}


def test_majority_baseline_and_score_files(tmp_path: Path) -> None:
    base = majority_class_baseline(["neutral", "entailment", "neutral"], ["neutral", "contradiction", "neutral",
                                                                           "entailment"])
    assert base == {"label": "neutral", "accuracy": 50.0}
    gold = _write(tmp_path / "g.jsonl", [_pair("a", "neutral"), _pair("b", "-"), _pair("c", "entailment"),
                                         _pair("d", "contradiction")])
    pred = tmp_path / "p.json"
    pred.write_text(json.dumps({"a": "neutral", "c": "neutral"}))     # d missing → wrong
    assert score_files(str(gold), str(pred)) == {"accuracy": pytest.approx(100.0 / 3)}


def test_prediction_jsonl_scores_and_names_a_malformed_line(tmp_path: Path) -> None:
    """The JSON-lines prediction form, and its errors: the gold reader's line parser (json_lines) with its own
    'expected' text."""
    gold = _write(tmp_path / "g.jsonl", [_pair("a", "neutral"), _pair("c", "entailment")])
    pred = _write(tmp_path / "p.jsonl", [{"pairID": "a", "label": "neutral"}, "", {"pairID": "c", "gold_label": "x"}])
    assert score_files(str(gold), str(pred)) == {"accuracy": 50.0}
    bad = _write(tmp_path / "bad.jsonl", [{"pairID": "a", "label": "neutral"}, '{"pairID": "c", "label": '])
    with pytest.raises(DataError, match=r"^.*bad\.jsonl:2: malformed JSON \(Expecting value at column 26\); "
                                        r"expected a \{pairID: label\} object or JSON lines with pairID and label$"):
        score_files(str(gold), str(bad))
    with pytest.raises(DataError, match=r"bad2\.jsonl:1: expected fields 'pairID' and 'label'"):
        score_files(str(gold), str(_write(tmp_path / "bad2.jsonl", ['["a", "neutral"]', '"x"'])))


@pytest.mark.skipif(not DATA.exists(), reason="../shared/data not present")
def test_real_snli_dev_counts() -> None:
    examples, dropped = read_jsonl(DATA / "snli" / "snli_1.0_dev.jsonl.gz")
    assert (len(examples), dropped) == (9842, 158)
    counts = {lab: sum(e["label"] == lab for e in examples) for lab in ("entailment", "neutral", "contradiction")}
    assert counts == {"entailment": 3329, "neutral": 3235, "contradiction": 3278}
    assert examples[0]["premise"][-1] == "."                         # binary-parse tokens split the final period
