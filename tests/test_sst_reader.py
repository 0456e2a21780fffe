"""SST PTB-tree reader and root-accuracy scorer: hand trees, errors naming file and line, real-data counts."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from elmo_bench.base.errors import DataError
from elmo_bench.tasks.sst.metric import score_files
from elmo_bench.tasks.sst.reader import parse_tree, read_splits, read_trees

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
TREE = "(1 (2 (2 The) (2 film)) (1 (2 (2 is) (1 (2 not) (3 good))) (2 .)))"


def test_parse_tree_spans() -> None:
    leaves, spans = parse_tree("(3 (2 It) (4 (3 (2 is) (4 great)) (2 .)))")
    assert leaves == ["It", "is", "great", "."]
    assert spans[-1] == (3, 0, 4)
    assert sorted(spans) == sorted([(2, 0, 1), (2, 1, 2), (4, 2, 3), (3, 1, 3), (2, 3, 4), (4, 1, 4), (3, 0, 4)])


def test_phrase_options(tmp_path: Path) -> None:
    path = tmp_path / "train.txt"
    path.write_text(TREE + "\n(4 (4 Great) (2 .))\n")
    roots = read_trees(path, "train", "none")
    assert [(e["tokens"], e["label"]) for e in roots] == [(["The", "film", "is", "not", "good", "."], 1), (["Great", "."], 4)]
    min4 = read_trees(path, "train", "min4")  # root + "is not good ." ; the second tree is too short
    assert [(e["tokens"], e["label"], e["is_root"]) for e in min4] == [
        (["The", "film", "is", "not", "good", "."], 1, True), (["is", "not", "good", "."], 1, False), (["Great", "."], 4, True)]
    every = read_trees(path, "train", "all")  # 11 nodes in the first tree, 3 in the second
    assert len(every) == 14
    assert Counter(e["label"] for e in every) == Counter({2: 8, 1: 3, 3: 1, 4: 2})
    # dev and test stay roots-only whatever the option
    splits = read_splits({"source": "local", "train": path, "dev": path, "test": None, "train_phrases": "all"})
    assert len(splits["train"]) == 14 and len(splits["dev"]) == 2 and "test" not in splits


@pytest.mark.parametrize(
    "line,message",
    [("(3 (2 It) (4 good)", r"unbalanced brackets: 1 '\(' not closed"),
     ("(3 (2 It) (4 good)))", r"unbalanced brackets: '\)' without"),
     ("(3 (7 It) (4 good))", r"bad label '7'"),
     ("(3 (2 It) (x good))", r"bad label 'x'"),
     ("(3 (2 It) (4 good)) (2 more)", r"text after the root"),
     ("(3 (2 It) (4))", r"empty node"),
     ("(3 It (4 good))", r"node '\(3 \.\.\.\)' mixes words and subtrees")],
)
def test_errors_name_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "bad.txt"
    path.write_text("(2 (2 fine) (2 .))\n" + line + "\n")
    with pytest.raises(DataError, match=r"bad\.txt:2: " + message):
        read_trees(path)


def test_score_files(tmp_path: Path) -> None:
    gold, pred = tmp_path / "gold.txt", tmp_path / "pred.txt"
    gold.write_text(TREE + "\n(4 (4 Great) (2 .))\n(0 (0 Awful) (2 .))\n")
    pred.write_text("1\n3\n0\n")
    assert score_files(str(gold), str(pred)) == pytest.approx({"accuracy": 200 / 3})
    pred.write_text("1\n9\n0\n")
    with pytest.raises(DataError, match=r"pred\.txt:2: expected a label 0\.\.4"):
        score_files(str(gold), str(pred))


@pytest.mark.skipif(not DATA.exists(), reason="../shared/data not present")
def test_real_sst_counts() -> None:
    # SOURCES.md: 8,544 / 1,101 / 2,210 trees, 318,582 labelled nodes in train, root labels 1092/2218/1624/2322/1288.
    splits = read_splits({"source": "local", "train": DATA / "sst" / "train.txt", "dev": DATA / "sst" / "dev.txt",
                          "test": DATA / "sst" / "test.txt", "train_phrases": "none"})
    assert [len(splits[s]) for s in ("train", "dev", "test")] == [8544, 1101, 2210]
    assert [Counter(e["label"] for e in splits["train"])[k] for k in range(5)] == [1092, 2218, 1624, 2322, 1288]
    assert [Counter(e["label"] for e in splits["test"])[k] for k in range(5)] == [279, 633, 389, 510, 399]
    every = read_trees(DATA / "sst" / "train.txt", "train", "all")
    assert len(every) == 318582
