"""Issue 56 item 9: CoNLL-U's integer columns (ID, HEAD) are read one way by the task readers (tasks/edge_dep,
tasks/pos) and the structural probes' trees (elmo_bench/data/conllu.py): ASCII digits. ``"¹".isdigit()`` is True
but ``int("¹")`` fails (edge_dep's run was a ValueError traceback); ``int("٣")`` is 3 (edge_dep read Arabic-Indic
digits as numbers while the probes refused them). Each is now one line naming the file, the line and what was
expected; ``python run.py task=edge_dep`` exits 2 with it and writes no results or cache."""
from __future__ import annotations

from pathlib import Path

import pytest

from elmo_bench.base.errors import DataError
from elmo_bench.data.conllu import ascii_number, read_conllu
from elmo_bench.probe.lib.conllu_trees import read_trees
from elmo_bench.tasks.edge_dep.reader import read_dependencies
from tests.conftest import REPO
from tests.warm_python import run_python

ROWS = [("It", "PRON", "PRP", "2", "nsubj"), ("runs", "VERB", "VBZ", "0", "root"), (".", "PUNCT", ".", "2", "punct")]


def write(tmp_path: Path, rows=ROWS, ids=("1", "2", "3")) -> Path:
    """One sentence: its comment on line 1, word k on line k + 1."""
    lines = ["# sent_id = s1"] + [f"{i}\t{form}\t_\t{upos}\t{xpos}\t_\t{head}\t{rel}\t_\t_"
                                  for i, (form, upos, xpos, head, rel) in zip(ids, rows)]
    path = tmp_path / "one.conllu"
    path.write_text("\n".join(lines) + "\n\n", encoding="utf-8")
    return path


def with_head(head: str) -> list[tuple[str, ...]]:
    return [ROWS[0][:3] + (head, ROWS[0][4]), *ROWS[1:]]


def test_ascii_digits_only():
    assert [ascii_number(t) for t in ("0", "12", "007")] == [0, 12, 7]
    assert [ascii_number(t) for t in ("¹", "٣", "-1", "", "1.0", " 1", "x")] == [None] * 7
    assert "¹".isdigit() and "٣".isdigit() and int("٣") == 3   # why str.isdigit() is not the test


def test_a_good_file_reads_the_same_heads_in_the_task_and_the_probe(tmp_path):
    path = write(tmp_path)
    [tree] = read_trees(path)
    [example] = read_dependencies(path, "train")
    assert tree.heads == [2, 0, 2]
    # edge_dep: (dependent, head) spans, the root paired with itself
    assert [(t["span1"], t["span2"], t["labels"]) for t in example["targets"]] == [
        ([0, 1], [1, 2], ["nsubj"]), ([1, 2], [1, 2], ["root"]), ([2, 3], [1, 2], ["punct"])]
    assert read_conllu(path, "xpos")[0]["tags"] == ["PRP", "VBZ", "."]


@pytest.mark.parametrize("head", ["¹", "٣", "-1", "x"])
def test_a_head_in_other_than_ascii_digits_is_one_line_in_both_readers(tmp_path, head):
    path = write(tmp_path, with_head(head))
    expected = f"{path}:2: expected an integer HEAD in column 7 (ASCII digits), found {head!r}"
    for read in (lambda: read_dependencies(path, "train"), lambda: read_trees(path)):
        with pytest.raises(DataError) as info:
            read()
        assert str(info.value) == expected


@pytest.mark.parametrize("word", ["¹", "١"])
def test_a_word_id_in_other_than_ascii_digits_is_one_line_in_every_reader(tmp_path, word):
    path = write(tmp_path, ids=(word, "2", "3"))
    for read in (lambda: read_dependencies(path, "train"), lambda: read_trees(path)):
        with pytest.raises(DataError) as info:
            read()
        assert str(info.value) == f"{path}:2: expected word ID 1 (IDs count up from 1), found {word!r}"
    with pytest.raises(DataError) as info:
        read_conllu(path, "xpos")      # the POS task's and the POS probes' reader (it keeps no IDs: digits only)
    assert str(info.value) == f"{path}:2: expected an integer word ID in column 1 (ASCII digits), found {word!r}"


@pytest.mark.parametrize("head", ["¹", "٣"])
def test_run_py_edge_dep_refuses_a_non_ascii_head_in_one_line_and_writes_nothing(tmp_path, head):
    path = write(tmp_path, with_head(head))
    results, cache = tmp_path / "results", tmp_path / "cache"
    done = run_python(["run.py", "task=edge_dep", "data=edge_dep_sample", "embedder=elmo", "data.format=conllu",
                       f"data.train={path}", f"data.dev={path}", f"data.test={path}", f"paths.results_dir={results}",
                       f"paths.cache_dir={cache}", "logger=disabled"], cwd=REPO, timeout=300)
    assert done.returncode == 2, done.stderr[-3000:]       # was a ValueError traceback ("¹") or a run ("٣")
    assert done.stderr.strip() == f"error: {path}:2: expected an integer HEAD in column 7 (ASCII digits), found {head!r}"
    assert not cache.exists() and not any(p.name == "results.json" for p in results.rglob("*"))
