"""Coreference reader: brackets, sentence boundaries, speakers, errors with file and line, LitBank counts."""
from __future__ import annotations

from pathlib import Path

import pytest

from elmo_bench.base.errors import DataError
from elmo_bench.data.conll2012_coref import iter_documents, litbank_eval_documents, read_path
from elmo_bench.tasks.coref.task import CorefTask
from elmo_bench.tasks.registry import config_files, registered
from tests.config_snapshot import composed

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
LITBANK = DATA / "coref" / "litbank"

ONTO = """#begin document (bc/cctv/00/cctv_0001); part 000
bc/cctv/00/cctv_0001   0   0   Mary   NNP  (TOP(S(NP*)  -  -  -  Anna  *  (ARG0*)  (3|(12)
bc/cctv/00/cctv_0001   0   1   's     POS  *            -  -  -  Anna  *  *        3)
bc/cctv/00/cctv_0001   0   2   cat    NN   *)           -  -  -  Anna  *  *        -
bc/cctv/00/cctv_0001   0   3   slept  VBD  (VP*))       sleep 01 1 Anna  *  (V*)   -

bc/cctv/00/cctv_0001   0   0   She    PRP  (TOP(S(NP*)  -  -  -  Ben   *  *        (12)
bc/cctv/00/cctv_0001   0   1   smiled VBD  (VP*))       -  -  -  Ben   *  *        -
#end document
"""


def test_reads_ontonotes_style_document(tmp_path: Path) -> None:
    path = tmp_path / "x.gold_conll"
    path.write_text(ONTO)
    [doc] = list(iter_documents(path))
    assert doc["id"] == "bc/cctv/00/cctv_0001;0" and doc["part"] == 0 and doc["genre"] == "bc"
    assert doc["tokens"] == ["Mary", "'s", "cat", "slept", "She", "smiled"]
    assert doc["sentence_ids"] == [0, 0, 0, 0, 1, 1]
    assert doc["speakers"] == ["Anna"] * 4 + ["Ben"] * 2
    # entity order = first appearance in the scorer's cell order (singles before openings): 12 then 3
    assert doc["clusters"] == [[(0, 0), (4, 4)], [(0, 1)]]


@pytest.mark.parametrize("cell, line, message", [
    ("3)", 2, r"x\.conll:2: closing '3\)' without an open mention"),
    ("(3", 2, r"x\.conll:2: mention of entity 3 opened here is never closed"),
    ("(3x", 2, r"x\.conll:2: bad coreference cell"),
])
def test_malformed_brackets_rejected(tmp_path: Path, cell: str, line: int, message: str) -> None:
    rows = ["#begin document (d); part 0", f"d\t0\t0\tHi\t_\t{cell}", "d\t0\t1\tyou\t_\t-", "#end document"]
    path = tmp_path / "x.conll"
    path.write_text("\n".join(rows) + "\n")
    with pytest.raises(DataError, match=message):
        list(iter_documents(path))


def test_structure_errors(tmp_path: Path) -> None:
    path = tmp_path / "y.conll"
    path.write_text("d\t0\t0\tHi\t_\t-\n")
    with pytest.raises(DataError, match=r"y\.conll:1: token row outside"):
        list(iter_documents(path))
    path.write_text("#begin document (d); part 0\nd\t0\t0\tHi\t_\t-\n")
    with pytest.raises(DataError, match=r"y\.conll: document d;0 has no '#end document'"):
        list(iter_documents(path))


def test_litbank_ids_map_to_conll_files(tmp_path: Path) -> None:
    root = tmp_path / "litbank"
    (root / "conll").mkdir(parents=True)
    for name in ("1_a_brat", "2_b_brat", "3_c_brat"):
        (root / "conll" / f"{name}.conll").write_text(
            f"#begin document ({name}); part 0\n{name}\t0\t0\tHe\t_\t_\t_\t_\t_\t_\t_\t_\t(0)\n"
            f"{name}\t0\t1\tsat\t_\t_\t_\t_\t_\t_\t_\t_\t\n\n#end document\n")
    fold = root / "litbank_tenfold_splits" / "0"
    fold.mkdir(parents=True)
    (fold / "train.ids").write_text("1_a_brat.tsv\n")
    (fold / "dev.ids").write_text("2_b_brat.tsv\n")
    (fold / "test.ids").write_text("3_c_brat.tsv\n")
    docs = read_path(fold / "train.ids")
    assert [d["doc_name"] for d in docs] == ["1_a_brat"]
    assert docs[0]["clusters"] == [[(0, 0)]] and docs[0]["speakers"] is None
    assert litbank_eval_documents(root, 0) == ["2_b_brat", "3_c_brat"]
    task = CorefTask()
    splits = task.read({"source": "local", "train": str(fold / "train.ids"), "dev": str(fold / "dev.ids"),
                        "test": None})
    assert sorted(splits) == ["dev", "train"]
    (fold / "dev.ids").write_text("2_b_brat.txt\n")
    with pytest.raises(DataError, match=r"dev\.ids:1: expected a document id ending in \.tsv"):
        read_path(fold / "dev.ids")


@pytest.mark.skipif(not DATA.exists(), reason="../shared/data not present")
def test_real_litbank_counts() -> None:
    docs = read_path(LITBANK / "conll")
    assert len(docs) == 100
    assert sum(len(c) for d in docs for c in d["clusters"]) == 29103
    assert sum(len(d["clusters"]) for d in docs) == 7927
    assert sum(len(d["tokens"]) for d in docs) == 210532
    split = {s: read_path(LITBANK / "litbank_tenfold_splits" / "0" / f"{s}.ids") for s in ("train", "dev", "test")}
    assert [len(split[s]) for s in ("train", "dev", "test")] == [80, 10, 10]
    held_out = litbank_eval_documents(LITBANK, 0)
    assert sorted(held_out) == sorted(d["doc_name"] for s in ("dev", "test") for d in split[s])
    assert not set(held_out) & {d["doc_name"] for d in split["train"]}


@pytest.mark.skipif(not DATA.exists(), reason="../shared/data not present")
def test_litbank_config_resolves_to_the_fold_files() -> None:
    from omegaconf import OmegaConf

    cfg = OmegaConf.create({"paths": {"data_root": str(DATA)}, "data": OmegaConf.load(config_files("data")["litbank"])})
    data = OmegaConf.to_container(cfg.data, resolve=True)
    splits = CorefTask().read(data)
    assert {k: len(v) for k, v in splits.items()} == {"train": 80, "dev": 10, "test": 10}
    declared = registered()[composed(["task=coref"])["task"]["name"]]
    assert declared.resolved_target() == "elmo_bench.tasks.coref.task:CorefTask"
