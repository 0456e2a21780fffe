"""conlleval semantics on hand-made cases; the expected counts were worked out by hand from conlleval's rules."""
from __future__ import annotations

import pytest

from elmo_bench.base.errors import DataError
from elmo_bench.tasks.ner.metric import count_chunks, score_files, score_sentences, sentence_rows


def counts(gold: list[str], pred: list[str]) -> tuple[int, int, int]:
    c = count_chunks(sentence_rows([gold], [pred]))
    return c.gold_chunks, c.guessed_chunks, c.correct_chunks


def test_iob1_gold_equals_bio_prediction() -> None:
    # IOB1 I-ORG / I-PER / I-LOC after O each start a chunk: the same three chunks as the BIO guess.
    assert counts(["I-ORG", "O", "I-PER", "O", "O", "I-LOC"], ["B-ORG", "O", "B-PER", "O", "O", "B-LOC"]) == (3, 3, 3)


def test_i_after_o_starts_a_chunk() -> None:
    assert counts(["O", "B-PER", "I-PER"], ["O", "I-PER", "I-PER"]) == (1, 1, 1)


def test_adjacent_entities_with_b() -> None:
    # gold PER[0-1] PER[2] LOC[4]; guess PER[0-2] LOC[4]: only LOC is right.
    assert counts(["I-PER", "I-PER", "B-PER", "O", "I-LOC"], ["I-PER", "I-PER", "I-PER", "O", "I-LOC"]) == (3, 2, 1)
    # B- between two entities of the same type, IOB1 vs BIO: identical chunks.
    assert counts(["I-MISC", "B-MISC"], ["B-MISC", "B-MISC"]) == (2, 2, 2)


def test_type_change_ends_a_chunk() -> None:
    # gold ORG[0-1] LOC[2] (I-LOC right after I-ORG starts a new chunk); guess ORG[0-2]: nothing right.
    assert counts(["B-ORG", "I-ORG", "I-LOC", "O"], ["B-ORG", "I-ORG", "I-ORG", "O"]) == (2, 1, 0)
    # invalid BIO in the guess is read as conlleval reads it: B-PER I-LOC = PER[0] LOC[1].
    assert counts(["B-PER", "B-LOC"], ["B-PER", "I-LOC"]) == (2, 2, 2)


def test_same_span_wrong_type_is_wrong() -> None:
    assert counts(["I-PER", "I-PER"], ["I-ORG", "I-ORG"]) == (1, 1, 0)


def test_ioe_tags() -> None:
    # E- closes a chunk: I-PER E-PER | E-PER = two chunks.
    assert counts(["I-PER", "E-PER", "E-PER"], ["I-PER", "I-PER", "I-PER"]) == (2, 1, 0)


def test_sentence_boundary_separates_chunks() -> None:
    assert score_sentences([["I-PER"], ["I-PER"]], [["B-PER"], ["B-PER"]]) == {"precision": 100.0, "recall": 100.0, "f1": 100.0}
    # no boundary: one chunk of two tokens against a guess of two one-token chunks
    assert counts(["I-PER", "I-PER"], ["B-PER", "B-PER"]) == (1, 2, 0)


def test_nothing_guessed_scores_zero() -> None:
    assert score_sentences([["B-PER", "O"]], [["O", "O"]]) == {"precision": 0.0, "recall": 0.0, "f1": 0.0}


FILE = """-DOCSTART- -X- O O

U.N. NNP I-ORG B-ORG
official NN O O
Ekeus NNP I-PER B-PER
heads VBZ O O
for IN O O
Baghdad NNP I-LOC B-LOC

Anna NNP I-PER I-PER
Berg NNP I-PER I-PER
Carl NNP B-PER I-PER
met VBD O O
Oslo NNP I-LOC I-LOC
-DOCSTART- -X- O O
Acme NNP B-ORG B-ORG
Corp NNP I-ORG I-ORG
Paris NNP I-LOC I-ORG
"""


def test_score_files_hand_values(tmp_path) -> None:
    # sentence 1: 3 gold, 3 guessed, 3 right; 2: 3 / 2 / 1 (LOC); 3 (after a -DOCSTART- token line, which
    # ends chunks like a boundary): 2 / 1 / 0.  Totals 8 gold, 6 guessed, 4 right:
    # P = 4/6 = 66.67 %, R = 4/8 = 50 %, F1 = 2PR/(P+R) = 4/7 = 57.14 %.
    path = tmp_path / "out.txt"
    path.write_text(FILE)
    got = score_files(str(path))
    assert set(got) == {"precision", "recall", "f1"}
    assert got["precision"] == pytest.approx(400 / 6)
    assert got["recall"] == pytest.approx(50.0)
    assert got["f1"] == pytest.approx(400 / 7)


def test_score_files_two_files_concatenate(tmp_path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_text("x NNP I-PER I-PER\n\n")
    b.write_text("y NNP I-PER O\n")
    assert score_files(str(a), str(b)) == pytest.approx({"precision": 100.0, "recall": 50.0, "f1": 200 / 3})


def test_score_files_column_count_error(tmp_path) -> None:
    path = tmp_path / "bad.txt"
    path.write_text("a NN O O\nb O O\n")
    with pytest.raises(DataError, match=r"bad\.txt:2: expected 4 columns"):
        score_files(str(path))
