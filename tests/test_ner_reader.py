"""CoNLL-2003 reader: IOB1 → BIO, -DOCSTART- anywhere, errors naming file and line, real-data counts."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from elmo_bench.base.errors import DataError
from elmo_bench.data.conll2003 import iob1_to_bio, iter_entities, read_conll
from elmo_bench.tasks.ner.reader import read_splits

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
SAMPLES = REPO / "tasks" / "ner" / "samples"


def test_iob1_to_bio() -> None:
    assert iob1_to_bio(["I-PER", "I-PER", "B-PER", "O", "I-LOC", "I-ORG", "I-ORG"]) == [
        "B-PER", "I-PER", "B-PER", "O", "B-LOC", "B-ORG", "I-ORG"]
    bio = ["B-PER", "I-PER", "B-PER", "O", "B-LOC"]
    assert iob1_to_bio(bio) == bio  # idempotent


def test_docstart_at_end_without_newline(tmp_path: Path) -> None:
    path = tmp_path / "mini.train"
    path.write_text(
        "Ada NNP I-NP I-PER\nLovelace NNP I-NP I-PER\nvisited VBD I-VP O\nTurin NNP I-NP I-LOC\n\n"
        "-DOCSTART- -X- O O\n\n"
        "Bo NNP I-NP I-PER\nCy NNP I-NP B-PER\n\n"
        "-DOCSTART- -X- -X- O"
    )
    ex = read_conll(path, "train")
    assert [e["tokens"] for e in ex] == [["Ada", "Lovelace", "visited", "Turin"], ["Bo", "Cy"]]
    assert ex[0]["tags"] == ["B-PER", "I-PER", "O", "B-LOC"]
    assert ex[1]["tags"] == ["B-PER", "B-PER"]
    assert [e["id"] for e in ex] == ["train-0", "train-1"]


def test_wrong_column_count_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.txt"
    path.write_text("Ada NNP I-NP I-PER\n\nBo NNP I-PER\n")
    with pytest.raises(DataError, match=r"bad\.txt:3: expected 4 columns"):
        read_conll(path)


def test_bad_tag_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.txt"
    path.write_text("Ada NNP I-NP I-PER\nBo NNP I-NP X-PER\n")
    with pytest.raises(DataError, match=r"bad\.txt:2: bad NER tag 'X-PER'"):
        read_conll(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="not found"):
        read_conll(tmp_path / "nope.txt")


def test_embedded_sample_reads() -> None:
    splits = read_splits({"source": "local", "train": SAMPLES / "sample.train", "dev": SAMPLES / "sample.dev",
                          "test": SAMPLES / "sample.test"})
    assert len(splits["train"]) >= 100 and len(splits["dev"]) >= 30 and len(splits["test"]) >= 30
    kinds = Counter(k for e in splits["train"] for k, _, _ in iter_entities(e["tags"]))
    assert set(kinds) == {"PER", "LOC", "ORG", "MISC"}


@pytest.mark.skipif(not DATA.exists(), reason="../shared/data not present")
@pytest.mark.parametrize(
    "name,sentences,tokens,entities",
    [("eng.train", 14041, 203621, {"PER": 6600, "LOC": 7140, "ORG": 6321, "MISC": 3438}),
     ("eng.testa", 3250, 51362, {"PER": 1842, "LOC": 1837, "ORG": 1341, "MISC": 922}),
     ("eng.testb", 3453, 46435, {"PER": 1617, "LOC": 1668, "ORG": 1661, "MISC": 702})],
)
def test_real_conll2003_counts(name: str, sentences: int, tokens: int, entities: dict[str, int]) -> None:
    ex = read_conll(DATA / "conll2003" / name)
    assert len(ex) == sentences
    assert sum(len(e["tokens"]) for e in ex) == tokens
    assert Counter(k for e in ex for k, _, _ in iter_entities(e["tags"])) == entities
