"""POS readers on invented CoNLL-U / CoNLL-2000 text, errors with file:line, and counts on the real files."""
from __future__ import annotations

import gzip
import logging

import pytest

from elmo_bench.base.errors import DataError
from elmo_bench.tasks.pos import reader
from tests.conftest import DATA, needs_data

CONLLU = """# newdoc id = invented-1
# sent_id = inv-1
# text = Kim's cats don't nap.
1\tKim\tKim\tPROPN\tNNP\t_\t3\tnmod:poss\t_\t_
2\t's\t's\tPART\tPOS\t_\t1\tcase\t_\t_
3\tcats\tcat\tNOUN\tNNS\t_\t6\tnsubj\t_\t_
4-5\tdon't\t_\t_\t_\t_\t_\t_\t_\t_
4\tdo\tdo\tAUX\tVBP\t_\t6\taux\t_\t_
5\tn't\tnot\tPART\tRB\t_\t6\tadvmod\t_\t_
6\tnap\tnap\tVERB\tVB\t_\t0\troot\t_\t_
6.1\tnap\tnap\tVERB\tVB\t_\t_\t_\t3:nsubj\t_
7\t.\t.\tPUNCT\t.\t_\t6\tpunct\t_\t_

# sent_id = inv-2
1\tHello\thello\tINTJ\tUH\t_\t0\troot\t_\t_

"""


def test_conllu_skips_ranges_and_empty_nodes(tmp_path):
    path = tmp_path / "x.conllu.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write(CONLLU)
    xpos = reader.read_conllu(path, "xpos")
    assert [e["id"] for e in xpos] == ["inv-1", "inv-2"]
    assert xpos[0]["tokens"] == ["Kim", "'s", "cats", "do", "n't", "nap", "."]
    assert xpos[0]["tags"] == ["NNP", "POS", "NNS", "VBP", "RB", "VB", "."]
    upos = reader.read_conllu(path, "upos")
    assert upos[0]["tags"] == ["PROPN", "PART", "NOUN", "AUX", "PART", "VERB", "PUNCT"] and upos[1]["tags"] == ["INTJ"]


def test_conllu_bad_rows_name_file_and_line(tmp_path):
    path = tmp_path / "bad.conllu"
    path.write_text(CONLLU.replace("3\tcats\tcat\tNOUN\tNNS\t_\t6\tnsubj\t_\t_", "3\tcats\tcat\tNOUN"))
    with pytest.raises(DataError, match=r"bad\.conllu:6: expected 10 tab-separated"):
        reader.read_conllu(path)
    path.write_text(CONLLU.replace("1\tHello\thello\tINTJ\tUH", "1\tHello\thello\tINTJ\t_"))
    with pytest.raises(DataError, match=r"bad\.conllu:15: .*no XPOS tag"):
        reader.read_conllu(path)
    with pytest.raises(DataError, match="file not found"):
        reader.read_conllu(tmp_path / "absent.conllu")


def test_conll2000_and_brill_note(tmp_path, caplog):
    path = tmp_path / "c.txt"
    path.write_text("Ducks NNS B-NP\nswim VBP B-VP\n. . O\n\nYes UH O\n")
    train = reader.read_conll2000(path, "train")
    assert [e["tokens"] for e in train] == [["Ducks", "swim", "."], ["Yes"]]
    assert train[0]["tags"] == ["NNS", "VBP", "."]
    caplog.set_level(logging.INFO)
    splits = reader.read_splits({"format": "conll2000", "train": str(path), "dev": str(path), "tag_source": "brill",
                                 "max_train_sentences": 1})
    assert len(splits["train"]) == 1 and len(splits["dev"]) == 2 and "test" not in splits
    assert "Brill tagger" in caplog.text
    path.write_text("Ducks NNS\n")
    with pytest.raises(DataError, match=r"c\.txt:1: expected 3 columns"):
        reader.read_conll2000(path)


@needs_data
def test_real_ud_dev_counts():
    dev = reader.read_conllu(DATA / "pos" / "ud_english_ewt" / "en_ewt-ud-dev.conllu")
    assert len(dev) == 2001 and sum(len(e["tokens"]) for e in dev) == 25147  # SOURCES.md: syntactic words


@needs_data
def test_real_conll2000_test_counts():
    test = reader.read_conll2000(DATA / "pos" / "conll2000" / "test.txt")
    assert len(test) == 2012 and sum(len(e["tokens"]) for e in test) == 47377
