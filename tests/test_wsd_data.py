"""WSD readers on invented SemCor / Raganato-format text, their errors, and counts on the real files."""
from __future__ import annotations

import gzip

import pytest

from elmo_bench.base.errors import DataError
from elmo_bench.probe.lib import semcor
from elmo_bench.probe.wsd import data as wsd_data
from tests.conftest import DATA, needs_data

SEMCOR = """<contextfile concordance="brown">
<context filename="br-z99" paras="yes">
<p pnum="1">
<s snum="1">
<wf cmd="ignore" pos="DT">The</wf>
<wf cmd="done" pos="NN" lemma="otter" wnsn="1" lexsn="1:05:00::">otters</wf>
<wf cmd="done" pos="VB" lemma="take_place" wnsn="1" lexsn="2:30:00::">took_place</wf>
<wf cmd="done" pos="RB" ot="notag">there</wf>
<wf cmd="done" pos="VB" lemma="deal" wnsn="2;1" lexsn="2:31:10::;2:32:08::">dealt</wf>
<punc>.</punc>
</s>
</p>
<p pnum="2">
<s snum="2">
<wf cmd="done" pos="JJ" lemma="recent" wnsn="2" lexsn="5:00:00:past:00">Recent</wf>
<punc>!</punc>
</s>
</p>
</context>
</contextfile>
"""

RAGANATO = """<?xml version="1.0" encoding="UTF-8" ?>
<corpus lang="en" source="toy">
<text id="d000">
<sentence id="d000.s000">
<wf lemma="the" pos="DET">The</wf>
<instance id="d000.s000.t000" lemma="otter" pos="NOUN">otter</instance>
<instance id="d000.s000.t001" lemma="belong_to" pos="VERB">belongs to</instance>
<wf lemma="us" pos="PRON">us</wf>
</sentence>
</text>
</corpus>
"""


def test_semcor_tokens_spans_and_keys(tmp_path):
    path = tmp_path / "brown1_br-z99.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write(SEMCOR)
    first, second = semcor.read_semcor_file(path)
    assert first.id == "brown1_br-z99.s1"
    assert first.tokens == ["The", "otters", "took", "place", "there", "dealt", "."]
    assert [(s.start, s.end, s.lemma, s.pos, s.keys) for s in first.spans] == [
        (1, 2, "otter", "n", ("otter%1:05:00::",)),
        (2, 4, "take_place", "v", ("take_place%2:30:00::",)),
        (5, 6, "deal", "v", ("deal%2:31:10::", "deal%2:32:08::")),
    ]
    assert second.spans[0].keys == ("recent%5:00:00:past:00",) and second.spans[0].pos == "a"
    assert len(semcor.read_semcor(tmp_path, max_sentences=1, progress=False)) == 1


def test_semcor_errors_name_the_file(tmp_path):
    path = tmp_path / "brown1_br-z98"
    path.write_text(SEMCOR.replace('lexsn="1:05:00::"', 'lexsn="9:05"'))
    with pytest.raises(DataError, match=r"brown1_br-z98: sentence brown1_br-z98\.s1, word 'otters'"):
        semcor.read_semcor_file(path)
    path.write_text(SEMCOR.replace("</s>", "", 1))
    with pytest.raises(DataError, match=r"brown1_br-z98:\d+: not well-formed XML"):
        semcor.read_semcor_file(path)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DataError, match="no SemCor tagfiles"):
        semcor.semcor_files(empty)


def test_raganato_set_and_missing_gold(tmp_path):
    root = tmp_path / "toy"
    root.mkdir()
    (root / "toy.data.xml").write_text(RAGANATO)
    (root / "toy.gold.key.txt").write_text("d000.s000.t000 otter%1:05:00::\nd000.s000.t001 belong_to%2:42:00::\n")
    sentences, gold, _ = wsd_data.read_eval_set(tmp_path, "toy")
    assert sentences[0].tokens == ["The", "otter", "belongs", "to", "us"]
    assert [(s.id, s.start, s.end, s.lemma, s.pos) for s in sentences[0].spans] == [
        ("d000.s000.t000", 1, 2, "otter", "n"), ("d000.s000.t001", 2, 4, "belong_to", "v")]
    assert gold["d000.s000.t001"] == {"belong_to%2:42:00::"}
    (root / "toy.gold.key.txt").write_text("d000.s000.t000 otter%1:05:00::\n")
    with pytest.raises(DataError, match="no gold key for 1 instance"):
        wsd_data.read_eval_set(tmp_path, "toy")
    (root / "toy.gold.key.txt").write_text("d000.s000.t000\n")
    with pytest.raises(DataError, match=r"toy\.gold\.key\.txt:1: expected 'instance_id sensekey"):
        wsd_data.read_key_file(root / "toy.gold.key.txt")


EVAL = DATA / "wsd" / "WSD_Evaluation_Framework" / "Evaluation_Datasets"


@needs_data
@pytest.mark.parametrize("name,count", [("ALL", 7253), ("semeval2007", 455)])
def test_real_eval_set_counts(name, count):
    sentences, gold, _ = wsd_data.read_eval_set(EVAL, name)
    assert semcor.count_spans(sentences) == count == len(gold)


@needs_data
def test_real_semcor_file_parses():
    sentences = semcor.read_semcor_file(DATA / "wsd" / "semcor3.0_google_original_format" / "brown1_br-a01.gz")
    first = sentences[0]
    assert first.tokens[:4] == ["The", "Fulton", "County", "Grand"]
    assert first.spans[0].keys == ("group%1:03:00::",) and (first.spans[0].start, first.spans[0].end) == (1, 5)
