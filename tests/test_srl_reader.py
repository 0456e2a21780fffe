"""SRL readers: bracket → BIO conversion, errors naming file and line, and the real CoNLL-2005 counts."""
from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from elmo_bench.base.errors import DataError
from elmo_bench.data.srl_conll import read_conll05_split, read_conll2012_srl, read_props_blocks
from elmo_bench.data.srl_spans import bio_to_spans, brackets_to_spans, spans_to_bio
from elmo_bench.tasks.registry import config_files, registered
from elmo_bench.tasks.srl.metric import read_props, score_sentences
from elmo_bench.tasks.srl.task import SrlTask, props_text
from tests.config_snapshot import composed

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
CONLL05 = DATA / "srl" / "conll05st-release"

WORDS = ["The", "cat", "saw", "a", "dog", "and", "ran", "."]
PROPS = [
    "-    (A0*   (A0*",
    "-    *)     *)",
    "see  (V*)   *",
    "-    (A1*   *",
    "-    *)     *",
    "-    *      *",
    "run  *      (V*)",
    "-    *      *",
]


def make_split(root: Path, words: list[str], props: list[str], name: str = "devel.24") -> Path:
    (root / "words").mkdir(parents=True)
    (root / "props").mkdir(parents=True)
    with gzip.open(root / "words" / f"{name}.words.gz", "wt") as h:
        h.write("\n".join(words) + "\n\n")
    with gzip.open(root / "props" / f"{name}.props.gz", "wt") as h:
        h.write("\n".join(props) + "\n\n")
    return root


def test_reads_one_example_per_predicate(tmp_path: Path) -> None:
    ex = read_conll05_split(make_split(tmp_path / "devel", WORDS, PROPS))
    assert [e["predicate_index"] for e in ex] == [2, 6]
    assert [e["predicate_lemma"] for e in ex] == ["see", "run"]
    assert ex[0]["tokens"] == WORDS
    assert ex[0]["tags"] == ["B-A0", "I-A0", "B-V", "B-A1", "I-A1", "O", "O", "O"]
    assert ex[1]["tags"] == ["B-A0", "I-A0", "O", "O", "O", "O", "B-V", "O"]


def test_nested_rejected(tmp_path: Path) -> None:
    props = list(PROPS)
    props[4] = "-    (A2*   *"  # opens A2 while A1 (line 4) is open → nested, reported at line 5
    make_split(tmp_path / "d", WORDS, props)
    with pytest.raises(DataError, match=r"devel\.24\.props\.gz:5: .*nested"):
        read_conll05_split(tmp_path / "d")


def test_unclosed_and_unopened_rejected(tmp_path: Path) -> None:
    props = list(PROPS)
    props[4] = "-    *      *"  # A1 opened at line 4 never closes
    make_split(tmp_path / "a", WORDS, props)
    with pytest.raises(DataError, match=r"props\.gz:4: .*'A1' is never closed"):
        read_conll05_split(tmp_path / "a")
    props = list(PROPS)
    props[7] = "-    *)     *"  # closing bracket at line 8 without an open argument
    make_split(tmp_path / "b", WORDS, props)
    with pytest.raises(DataError, match=r"props\.gz:8: closing bracket"):
        read_conll05_split(tmp_path / "b")
    props = list(PROPS)
    props[0] = "-    (A0+   (A0*"  # not a bracket tag
    make_split(tmp_path / "c", WORDS, props)
    with pytest.raises(DataError, match=r"props\.gz:1: bad bracket tag"):
        read_conll05_split(tmp_path / "c")


def test_words_props_mismatch_rejected(tmp_path: Path) -> None:
    make_split(tmp_path / "m", WORDS[:-1], PROPS)  # words file one row short: line 8 is blank there
    with pytest.raises(DataError, match=r"words\.gz:8 / .*props\.gz:8: words and props do not line up"):
        read_conll05_split(tmp_path / "m")


def test_column_count_mismatch_rejected(tmp_path: Path) -> None:
    props = list(PROPS)
    props[2] = "see  (V*)"  # one column missing on line 3
    make_split(tmp_path / "c", WORDS, props)
    with pytest.raises(DataError, match=r"props\.gz:3: expected 3 columns"):
        read_conll05_split(tmp_path / "c")


def test_bio_roundtrip_and_closing_label_style() -> None:
    spans = brackets_to_spans(["(A0*A0)", "(V*V)", "(A1*", "*A1)"], ["f:1", "f:2", "f:3", "f:4"])
    assert spans == [("A0", 0, 0), ("V", 1, 1), ("A1", 2, 3)]
    assert bio_to_spans(spans_to_bio(spans, 4)) == spans
    with pytest.raises(DataError, match=r"f:4: closing label 'A2' does not match"):
        brackets_to_spans(["(A0*A0)", "(V*V)", "(A1*", "*A2)"], ["f:1", "f:2", "f:3", "f:4"])


def test_conll2012_reader(tmp_path: Path) -> None:
    rows = [
        "#begin document (bc/x/00/x_0); part 000",
        "bc/x_0 0 0 John NNP (TOP(S(NP*) - - - Speaker#1 (PERSON) (ARG0*) * (7)",
        "bc/x_0 0 1 said VBD (VP* say 01 1 Speaker#1 * (V*) * -",
        "bc/x_0 0 2 he PRP (SBAR(S(NP*) - - - Speaker#1 * (ARG1* (ARG0*) (7)",
        "bc/x_0 0 3 left VBD (VP*)))) leave 01 1 Speaker#1 * *) (V*) -",
        "",
        "#end document",
    ]
    path = tmp_path / "x.gold_conll"
    path.write_text("\n".join(rows) + "\n")
    ex = read_conll2012_srl(path)
    assert [(e["predicate_index"], e["predicate_lemma"]) for e in ex] == [(1, "say"), (3, "leave")]
    assert ex[0]["tags"] == ["B-ARG0", "B-V", "B-ARG1", "I-ARG1"]
    assert ex[1]["tags"] == ["O", "O", "B-ARG0", "B-V"]
    rows[4] = rows[4].replace("*) (V*)", "* (V*)")  # ARG1 never closed
    path.write_text("\n".join(rows) + "\n")
    with pytest.raises(DataError, match=r"x\.gold_conll:4: .*'ARG1' is never closed"):
        read_conll2012_srl(path)


def test_task_targets_and_labels(tmp_path: Path) -> None:
    task = SrlTask()
    ex = read_conll05_split(make_split(tmp_path / "devel", WORDS, PROPS))
    task.fit_labels({"train": ex})
    assert task.labels == ["O", "B-A0", "I-A0", "B-A1", "I-A1", "B-V", "I-V"]
    t = task.targets(ex)
    assert t["predicate_indicator"].tolist()[1] == [0, 0, 0, 0, 0, 0, 1, 0]
    assert t["tags"].tolist()[0] == [1, 2, 5, 3, 4, 0, 0, 0]
    # props written from the examples score 100 against themselves and parse back to the same sentence
    text = props_text(ex, [e["tags"] for e in ex])
    (tmp_path / "g.props").write_text(text)
    sents = read_props(tmp_path / "g.props")
    assert sents[0][0] == ["-", "-", "see", "-", "-", "-", "run", "-"]
    assert score_sentences(sents, sents)["f1"] == 100.0


@pytest.mark.skipif(not DATA.exists(), reason="../shared/data not present")
def test_real_conll05_devel_counts(tmp_path: Path) -> None:
    props_file = CONLL05 / "devel" / "props" / "devel.24.props.gz"
    assert sum(1 for _ in read_props_blocks(props_file)) == 1346
    ex = read_conll05_split(CONLL05 / "devel")
    assert len(ex) == 3248
    assert max(e["sentence_index"] for e in ex) < 1346
    # the examples written back hold exactly the gold arguments of the release file: an empty prediction
    # misses every non-V argument in both, so the missed counts agree
    gold = read_props(props_file)
    empty = [(t, [["*"] * len(t) for _ in cols]) for t, cols in gold]
    missed_release = score_sentences(gold, empty)["missed"]
    (tmp_path / "g.props").write_text(props_text(ex, [e["tags"] for e in ex]))
    written = read_props(tmp_path / "g.props")
    empty_w = [(t, [["*"] * len(t) for _ in cols]) for t, cols in written]
    assert score_sentences(written, empty_w)["missed"] == missed_release > 0


@pytest.mark.skipif(not DATA.exists(), reason="../shared/data not present")
def test_conll2005_config_reads_dev() -> None:
    from omegaconf import OmegaConf

    data = OmegaConf.load(config_files("data")["conll2005"])
    cfg = OmegaConf.create({"paths": {"data_root": str(DATA)}, "data": data})
    data = OmegaConf.to_container(cfg.data, resolve=True)
    data = {**data, "train": None, "test": None, "test_brown": None}
    splits = SrlTask().read(data)
    assert {k: len(v) for k, v in splits.items()} == {"dev": 3248}
    declared = registered()[composed(["task=srl"])["task"]["name"]]
    assert declared.resolved_target() == "elmo_bench.tasks.srl.task:SrlTask"
