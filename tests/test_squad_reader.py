"""SQuAD reader: offsets, answer alignment counts, errors naming record and file, article splits, real data."""
from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path

import pytest

from elmo_bench.base.errors import DataError
from elmo_bench.tasks.squad.reader import read_file
from elmo_bench.tasks.squad.task import SquadTask
from elmo_bench.tasks.squad.tokenize import char_span_to_tokens, tokenize_with_offsets

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"

CTX1 = "The Broncos won 24\u201310 in Santa Clara, California. It cost $1,000.5 in total."
CTX2 = "Zebras graze. Lions hunt at night."
SAMPLE = {"version": "1.1", "data": [
    {"title": "Game", "paragraphs": [{"context": CTX1, "qas": [
        {"id": "q1", "question": "Who won?", "answers": [{"text": "Broncos", "answer_start": 4},
                                                         {"text": "The Broncos", "answer_start": 0}]},
        {"id": "q2", "question": "Where was it?", "answers": [{"text": "Santa Clara, California",
                                                                "answer_start": 25}]},
        {"id": "q3", "question": "Cost?", "answers": [{"text": "000.5", "answer_start": 61},   # inside a token
                                                      {"text": "WRONG", "answer_start": 0}]},  # text mismatch
    ]}]},
    {"title": "Zoo", "paragraphs": [{"context": CTX2, "qas": [
        {"id": "q4", "question": "What do lions do?", "answers": [{"text": "hunt at night", "answer_start": 20}]},
    ]}]},
]}


def _write(tmp_path: Path, obj: object, name: str = "s.json") -> Path:
    path = tmp_path / name
    text = obj if isinstance(obj, str) else json.dumps(obj)
    if name.endswith(".gz"):
        with gzip.open(path, "wt", encoding="utf-8") as h:
            h.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_tokenize_keeps_offsets() -> None:
    tokens, offsets = tokenize_with_offsets("It cost $1,000.5 (approx.)\u200b now")
    assert tokens == ["It", "cost", "$", "1,000.5", "(", "approx", ".", ")", "now"]
    assert all("It cost $1,000.5 (approx.)\u200b now"[s:e] == t for t, (s, e) in zip(tokens, offsets))
    assert char_span_to_tokens(offsets, 9, 14) == (3, 3)      # "1,000" lies inside token 3
    assert char_span_to_tokens(offsets, 26, 27) is None        # only the zero-width space


def test_read_spans_and_counts(tmp_path: Path) -> None:
    examples, stats = read_file(_write(tmp_path, SAMPLE, "s.json.gz"))
    assert [e["id"] for e in examples] == ["q1", "q2", "q3", "q4"]
    q1, q2, q3, q4 = examples
    assert q1["context"][:3] == ["The", "Broncos", "won"] and q1["question"] == ["Who", "won", "?"]
    assert q1["spans"] == [(1, 1), (0, 1)] and q1["span"] == (1, 1)
    assert q2["span"] == (7, 10)                                            # Santa Clara , California
    text = q2["context_text"][q2["offsets"][7][0]:q2["offsets"][10][1]]
    assert text == "Santa Clara, California"
    assert q3["spans"][1] is None and q3["answers"] == ["000.5", "WRONG"]   # kept for the metric, not aligned
    assert q4["span"] == (4, 6) and q4["article"] == 1
    assert stats.as_dict() == {"articles": 2, "paragraphs": 2, "questions": 4, "answers": 6, "unalignable": 1,
                               "inexact": 1, "questions_without_span": 0, "truncated_contexts": 0,
                               "lost_to_truncation": 0}


@pytest.mark.parametrize("edit, message", [
    (lambda d: d["data"][0]["paragraphs"][0]["qas"][1].pop("question"), r"question id q2: missing field 'question'"),
    (lambda d: d["data"][0]["paragraphs"][0]["qas"][0]["answers"][0].pop("answer_start"),
     r"question id q1: missing field 'answer_start'"),
    (lambda d: d["data"][1]["paragraphs"][0].pop("context"), r"article 1 paragraph 0: missing field 'context'"),
    (lambda d: d["data"][1]["paragraphs"][0]["qas"][0]["answers"][0].update(answer_start=30),
     r"question id q4: answer_start 30 .* outside the context"),
    (lambda d: d["data"][1]["paragraphs"][0]["qas"][0]["answers"][0].update(answer_start="20"),
     r"question id q4: field 'answer_start' is str; expected int"),
])
def test_errors_name_record_and_file(tmp_path: Path, edit, message: str) -> None:
    obj = copy.deepcopy(SAMPLE)
    edit(obj)
    with pytest.raises(DataError, match=r"bad\.json: " + message):
        read_file(_write(tmp_path, obj, "bad.json"))


def test_malformed_json_names_file_and_line(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"broken\.json:2: malformed JSON"):
        read_file(_write(tmp_path, '{"data": [\n{"title": ,}]}', "broken.json"))


def test_task_split_by_article_and_truncation(tmp_path: Path) -> None:
    path = str(_write(tmp_path, SAMPLE))
    task = SquadTask()
    splits = task.read({"source": "local", "train": path, "test": path,
                        "split_by_article": {"train": [0, 1], "test": [1, 2]}, "max_context_tokens": 9,
                        "answer_offsets": "count"})                  # q3's WRONG answer: audited, not refused
    assert [e["id"] for e in splits["train"]] == ["q1", "q2", "q3"]
    with pytest.raises(DataError, match="q3: answer 'WRONG' disagrees with its offsets"):
        task.read({"source": "local", "train": path})                 # a run's default, as conf/config.yaml's
    assert [e["id"] for e in splits["test"]] == ["q4"]
    # CTX1 keeps 9 tokens: q2's span (7, 10) and q3's (15, 15) are cut off and counted; CTX2 (8 tokens) untouched
    assert splits["train"][1]["span"] is None and len(splits["train"][0]["context"]) == 9
    assert task.stats["train"]["truncated_contexts"] == 1 and task.stats["train"]["lost_to_truncation"] == 2
    assert task.stats["train"]["questions_without_span"] == 2
    assert task.stats["test"]["truncated_contexts"] == 0
    targets = task.targets(splits["train"])
    assert targets["span_start"].tolist() == [1, -100, -100] and targets["span_end"].tolist() == [1, -100, -100]


@pytest.mark.skipif(not DATA.exists(), reason="../shared/data not present")
def test_real_squad_dev_counts_and_sandbox_split() -> None:
    path = DATA / "squad" / "dev-v1.1.json.gz"
    examples, stats = read_file(path)
    assert (stats.articles, stats.paragraphs, stats.questions, stats.answers) == (48, 2067, 10570, 34726)
    assert stats.unalignable == 0 and stats.questions_without_span == 0
    assert stats.inexact == 79          # token boundary inside the answer, e.g. gold "gold" in "golden"
    assert all(e["context_text"][e["offsets"][s][0]:e["offsets"][t][1]].strip()
               for e in examples for s, t in [e["span"]])
    task = SquadTask()
    splits = task.read({"source": "local", "train": str(path), "dev": str(path), "test": str(path),
                        "split_by_article": {"train": [0, 21], "dev": [21, 24], "test": [24, 48]}})
    assert sum(len(v) for v in splits.values()) == 10570
    assert {e["article"] for e in splits["test"]} == set(range(24, 48))
