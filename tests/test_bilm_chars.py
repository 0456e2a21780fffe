"""bilm-tf character ids, worked out by hand from the encoding rules."""
from __future__ import annotations

from elmo_bench.bilm.chars import batch_to_ids, word_to_ids


def test_ascii_word_ids():
    ids = word_to_ids("ab")
    # begin-of-word 258, 'a' 97, 'b' 98, end-of-word 259, then padding 260; all + 1
    assert ids[:5] == [259, 98, 99, 260, 261]
    assert ids[5:] == [261] * 45 and len(ids) == 50


def test_sentence_boundary_words():
    assert word_to_ids("<S>")[:4] == [259, 257, 260, 261]
    assert word_to_ids("</S>")[:4] == [259, 258, 260, 261]


def test_utf8_bytes_and_truncation_keeps_end_of_word():
    assert word_to_ids("é")[:4] == [259, 0xC3 + 1, 0xA9 + 1, 260]
    long = word_to_ids("x" * 80)
    assert long[0] == 259 and long[-1] == 260 and long[1:-1] == [ord("x") + 1] * 48


def test_batch_padding_rows_are_zero():
    ids = batch_to_ids([["a", "b", "c"], ["d"]])
    assert ids.shape == (2, 3, 50)
    assert ids[1, 1:].abs().sum() == 0 and ids[1, 0, 1] == ord("d") + 1
