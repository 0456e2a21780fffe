"""Edge-probing tasks (issue 38): every reader's targets round-trip to the source annotation (counts of the shared
files stated), bad input ends in one line naming the file and line, and the metrics on hand-made cases."""
from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from conftest import DATA, REPO, needs_data

from elmo_bench.base.errors import DataError
from elmo_bench.data.edge import read_edge_splits, read_jsonl, target_count
from elmo_bench.data.edge_metric import counts, micro_f1, per_label_f1, srl_scored
from elmo_bench.data.edge_task import score_of
from elmo_bench.engine.experiment import load_task
from tests.warm_python import run_python

TASKS = ("edge_pos", "edge_chunk", "edge_dep", "edge_ner", "edge_srl", "edge_coref")


def read(task: str, **cfg):
    return load_task(task).read(cfg)


# --------------------------------------------------------------------------------------------- shared data readers

@needs_data
def test_edge_pos_round_trips_ewt_dev_tags():
    from elmo_bench.data.conllu import read_conllu
    from elmo_bench.tasks.edge_pos.reader import tags_of

    path = DATA / "pos/ud_english_ewt/en_ewt-ud-dev.conllu"
    examples = read("edge_pos", format="conllu", dev=str(path))["dev"]
    source = read_conllu(path, "xpos")
    assert len(examples) == 2001 and target_count(examples) == 25_147   # data/SOURCES.md 7b: 2,001 sentences
    assert [tags_of(ex) for ex in examples] == [ex["tags"] for ex in source]
    assert all(t["span1"][1] - t["span1"][0] == 1 for ex in examples for t in ex["targets"])


@needs_data
def test_edge_ner_round_trips_conll2003_train_entities():
    from elmo_bench.data.conll2003 import read_conll
    from elmo_bench.tasks.edge_ner.reader import bio_of

    path = DATA / "conll2003/eng.train"
    examples = read("edge_ner", format="conll2003", train=str(path))["train"]
    assert len(examples) == 14_041 and target_count(examples) == 23_499           # SOURCES.md 1
    labels = Counter(t["labels"][0] for ex in examples for t in ex["targets"])
    assert labels == {"PER": 6600, "LOC": 7140, "ORG": 6321, "MISC": 3438}
    assert [bio_of(ex) for ex in examples] == [ex["tags"] for ex in read_conll(path)]


@needs_data
def test_edge_chunk_round_trips_conll2000_test_chunks():
    from elmo_bench.data.conll2003 import iob1_to_bio
    from elmo_bench.tasks.edge_chunk.reader import chunk_targets, read_conll2000_chunks

    path = DATA / "pos/conll2000/test.txt"
    source = read_conll2000_chunks(path, "test")
    examples = read("edge_chunk", format="conll2000", test=str(path))["test"]
    assert len(examples) == 2012 and sum(len(ex["tokens"]) for ex in examples) == 47_377   # SOURCES.md 7a
    assert target_count(examples) == 23_852
    for ex, src in zip(examples, source):
        tags = ["O"] * len(ex["tokens"])
        for t in ex["targets"]:
            (s, e), kind = t["span1"], t["labels"][0]
            tags[s:e] = [f"B-{kind}"] + [f"I-{kind}"] * (e - s - 1)
        assert tags == iob1_to_bio(src["chunks"])
    assert chunk_targets(["B-NP", "I-NP", "B-VP", "O", "B-NP"]) == [
        {"span1": [0, 2], "labels": ["NP"]}, {"span1": [2, 3], "labels": ["VP"]}, {"span1": [4, 5], "labels": ["NP"]}]


@needs_data
def test_edge_dep_round_trips_ewt_test_heads_and_relations():
    path = DATA / "pos/ud_english_ewt/en_ewt-ud-test.conllu"
    examples = read("edge_dep", format="conllu", test=str(path))["test"]
    assert len(examples) == 2077 and target_count(examples) == 25_094      # one target per syntactic word
    rows = []                                                             # the file's own (id, head, deprel)
    for line in path.read_text(encoding="utf-8").splitlines():
        cols = line.split("\t")
        if len(cols) == 10 and cols[0].isdigit():
            rows.append((int(cols[0]), int(cols[6]), cols[7]))
    read_back = [(t["span1"][1], 0 if t["labels"] == ["root"] else t["span2"][1], t["labels"][0])
                 for ex in examples for t in ex["targets"]]
    assert read_back == rows
    roots = [t for ex in examples for t in ex["targets"] if t["labels"] == ["root"]]
    assert len(roots) == 2077 and all(t["span1"] == t["span2"] for t in roots)


@needs_data
def test_edge_srl_round_trips_conll2005_dev_propositions():
    from elmo_bench.data.srl_conll import read_conll05_split
    from elmo_bench.tasks.edge_srl.reader import bio_of

    root = DATA / "srl/conll05st-release/devel"
    examples = read("edge_srl", format="conll05", dev=str(root))["dev"]
    source = read_conll05_split(root)
    assert len(examples) == 3248 and target_count(examples) == 8453         # SOURCES.md 5: 3,248 propositions
    assert [bio_of(ex) for ex in examples] == [ex["tags"] for ex in source]


@needs_data
def test_edge_coref_pairs_litbank_fold0_dev_within_sentences():
    from elmo_bench.data.conll2012_coref import read_split

    cfg = {"source": "local", "format": "litbank", "conll_dir": str(DATA / "coref/litbank/conll"),
           "dev": str(DATA / "coref/litbank/litbank_tenfold_splits/0/dev.ids")}
    examples = read("edge_coref", **cfg)["dev"]
    assert len(examples) == 675 and target_count(examples) == 7194
    assert Counter(t["labels"][0] for ex in examples for t in ex["targets"]) == {"0": 5507, "1": 1687}
    same = 0                                       # the source's same-entity pairs inside one sentence
    for doc in read_split(cfg, "dev"):
        sid = doc["sentence_ids"]
        per_sentence = Counter((sid[s], k) for k, c in enumerate(doc["clusters"]) for s, e in c if sid[s] == sid[e])
        same += sum(n * (n - 1) // 2 for n in per_sentence.values())
    assert same == 1687


# ------------------------------------------------------------------------------------------------ samples, bad input

@pytest.mark.parametrize("task", TASKS)
def test_every_task_reads_its_bundled_sample(task):
    folder = REPO / "tasks" / task / "samples"
    splits = read(task, format="jsonl", **{s: str(folder / f"{s}.jsonl") for s in ("train", "dev", "test")})
    assert set(splits) == {"train", "dev", "test"} and all(target_count(v) > 0 for v in splits.values())
    two = task in ("edge_dep", "edge_srl", "edge_coref")
    assert all(("span2" in t) == two for v in splits.values() for ex in v for t in ex["targets"])


def write(tmp_path: Path, *records) -> Path:
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.mark.parametrize("record, message", [
    ({"text": "a b", "targets": [{"span1": [1, 3], "label": "X"}]}, "span1 [1, 3] is out of range"),
    ({"text": "a b", "targets": [{"span1": [1, 1], "label": "X"}]}, "out of range"),
    ({"text": "a b", "targets": [{"span1": [0, 1], "span2": [2, 3], "label": "X"}]}, "span2 [2, 3] is out of range"),
    ({"text": "a b", "targets": [{"span1": [0, 1], "span2": [0, 1], "label": []}]}, "empty label set"),
])
def test_bad_jsonl_names_file_and_line(tmp_path, record, message):
    good = {"text": "a b", "targets": [{"span1": [0, 1], "span2": [1, 2], "label": "X"}]}
    path = write(tmp_path, good, record)
    with pytest.raises(DataError, match=r"bad.jsonl:2: .*" + re.escape(message)):
        read_jsonl(path, "train", two_spans=True)


def test_a_file_without_targets_is_refused(tmp_path):
    path = write(tmp_path, {"text": "a b", "targets": []}, {"text": "c", "targets": []})
    with pytest.raises(DataError, match=r"bad.jsonl:2: no edge-probing targets in 2 sentence"):
        read_jsonl(path, "train", two_spans=False)


def test_a_dependency_naming_a_missing_word_is_refused(tmp_path):
    rows = ["# sent_id = s1", "1\tIt\tit\tPRON\tPRP\t_\t2\tnsubj\t_\t_", "2\truns\trun\tVERB\tVBZ\t_\t5\troot\t_\t_", ""]
    path = tmp_path / "bad.conllu"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"bad.conllu:3: word 2 names head 5, a word the sentence does not have"):
        read("edge_dep", format="conllu", train=str(path))
    path.write_text("\n".join(rows).replace("\t5\troot", "\t0\t_") + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"bad.conllu:3: word 2 has no relation .*empty label set"):
        read("edge_dep", format="conllu", train=str(path))


def test_a_native_file_without_targets_is_refused(tmp_path):
    path = tmp_path / "none.train"
    path.write_text("Rain NN I-NP O\nfell VBD I-VP O\n\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"none.train: no edge-probing targets in 1 sentence"):
        read("edge_ner", format="conll2003", train=str(path))


def test_max_train_sentences_keeps_every_proposition_of_the_first_sentences():
    folder = REPO / "tasks/edge_srl/samples"
    examples = [{"id": f"p{i}", "sentence_id": f"s{i // 2}", "tokens": ["a"], "targets": []} for i in range(6)]
    from elmo_bench.data.edge import first_sentences
    assert [ex["id"] for ex in first_sentences(examples, 2)] == ["p0", "p1", "p2", "p3"]
    splits = read_edge_splits({"format": "jsonl", "train": str(folder / "train.jsonl"), "max_train_sentences": 3},
                              lambda cfg, split: [], True)
    assert len(splits["train"]) == 3


# ---------------------------------------------------------------------------------------------------------- metrics

def test_micro_f1_counts_every_target_label_decision():
    predicted = [["NP"], ["VP", "NP"], [], ["PP"]]
    gold = [["NP"], ["VP"], ["NP"], ["VP"]]
    assert counts(predicted, gold) == [2, 2, 2]           # right NP, VP; extra NP, PP; missed NP, VP
    assert micro_f1(predicted, gold) == pytest.approx(100 * 4 / 8)
    assert per_label_f1(predicted, gold) == pytest.approx({"NP": 100 * 2 / 4, "PP": 0.0, "VP": 100 * 2 / 3})


def test_positive_label_f1_ignores_the_negative_label():
    predicted = [["1"], ["0"], ["1"], ["0"], ["0"]]
    gold = [["1"], ["1"], ["0"], ["0"], ["0"]]
    assert micro_f1(predicted, gold, "positive") == pytest.approx(100 * 2 / 4)   # c=1, e=1, m=1
    assert micro_f1(predicted, gold) == pytest.approx(100 * 6 / 10)             # both labels: c=3, e=2, m=2


def test_srl_role_filter_keeps_core_and_adjunct_roles_only():
    assert [r for r in ["A0", "A5", "AA", "AM-TMP", "AM-MOD", "R-A0", "C-A1", "A6", "V", "C-AM-ADV"] if srl_scored(r)] \
        == ["A0", "A5", "AA", "AM-TMP", "AM-MOD"]
    predicted = [["A0"], ["R-A0"], ["AM-LOC"], ["C-A1"]]
    gold = [["A0"], ["A1"], ["AM-TMP"], ["C-A1"]]
    # kept decisions: A0 right; R-A0 dropped, A1 missed; AM-LOC extra, AM-TMP missed; C-A1 dropped both sides
    assert micro_f1(predicted, gold, "srl_roles") == pytest.approx(100 * 2 / (2 + 1 + 2))


def test_statistics_rows_sum_to_the_metric():
    task = load_task("edge_srl")
    examples = [{"tokens": ["a", "b"], "targets": [{"span1": [0, 1], "span2": [1, 2], "labels": ["A0"]},
                                                    {"span1": [0, 1], "span2": [0, 1], "labels": ["R-A1"]}]},
                {"tokens": ["c"], "targets": [{"span1": [0, 1], "span2": [0, 1], "labels": ["AM-TMP"]}]}]
    predictions = [[["A0", "A1"], []], [["AM-TMP"]]]
    rows = task.statistics(predictions, examples)
    assert rows == [[1.0, 1.0, 0.0], [1.0, 0.0, 0.0]]
    assert score_of(rows) == pytest.approx(task.metric(predictions, examples)["f1"]) == pytest.approx(80.0)


def test_run_py_refuses_a_bad_edge_file_in_one_line_and_writes_nothing(tmp_path):

    path = write(tmp_path, {"text": "a b", "targets": [{"span1": [0, 1], "label": "X"}]},
                 {"text": "a b", "targets": [{"span1": [0, 5], "label": "X"}]})
    results = tmp_path / "results"
    done = run_python(["run.py", "task=edge_ner", "data=edge_ner_sample", "embedder=elmo",
                       f"data.train={path}", f"paths.results_dir={results}", f"paths.cache_dir={tmp_path}/c",
                       "logger=disabled"], cwd=REPO, timeout=300)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and f"{path}:2: span1 [0, 5] is out of range" in lines[0]
    assert not (tmp_path / "c").exists()
    assert not any(p.name == "results.json" for p in results.rglob("*"))
