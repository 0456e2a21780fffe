"""The GloVe text reader (embedder.glove_source=file, embedder.glove_path=...) on tiny invented files in the format
of glove.840B.300d.txt: ``word v1 ... vd`` a line, cased words, a few words that contain spaces."""
from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest
import torch

from elmo_bench.base.errors import DataError
from elmo_bench.data.glove import load_glove, lookup
from elmo_bench.modules.token_embedders import UNK, build_glove

# 4-d vectors; ". . ." and "at name@domain.com" contain spaces as in the 840B file; "1.5" is a numeric word;
# "Paris" is listed twice (the first vector wins); "river" is never asked for
TINY = """, 0.1 0.2 0.3 0.4
Paris 1 2 3 4
paris -1 -2 -3 -4
. . . 0.5 0.5 0.5 0.5
at name@domain.com 9 8 7 6
1.5 0.25 -0.25 1e-3 -2E2
river 7 7 7 7
Paris 5 5 5 5
"""


def _write(tmp_path: Path, text: str, name: str = "glove.tiny.4d.txt") -> Path:
    path = tmp_path / name
    if name.endswith(".gz"):
        with gzip.open(path, "wt", encoding="utf-8") as handle:
            handle.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_reads_vectors_words_with_spaces_and_numeric_words(tmp_path: Path) -> None:
    path = _write(tmp_path, TINY)
    vectors, dim = load_glove([",", "Paris", ". . .", "at name@domain.com", "1.5"], source="file", path=str(path))
    assert dim == 4
    assert set(vectors) == {",", "Paris", "paris", ". . .", "at name@domain.com", "1.5"}  # "paris": Paris's lower case
    np.testing.assert_array_equal(vectors["Paris"], [1, 2, 3, 4])              # first of the two lines
    np.testing.assert_array_equal(vectors[". . ."], [0.5, 0.5, 0.5, 0.5])
    np.testing.assert_array_equal(vectors["at name@domain.com"], [9, 8, 7, 6])
    np.testing.assert_allclose(vectors["1.5"], [0.25, -0.25, 0.001, -200.0])
    assert vectors[","].dtype == np.float32


def test_lookup_is_cased_first_then_lower_case(tmp_path: Path) -> None:
    vectors, _ = load_glove(["PARIS", "paris", "Paris"], source="file", path=str(_write(tmp_path, TINY)))
    np.testing.assert_array_equal(lookup(vectors, "Paris"), [1, 2, 3, 4])
    np.testing.assert_array_equal(lookup(vectors, "PARIS"), [-1, -2, -3, -4])   # no "PARIS": its lower case
    assert lookup(vectors, "London") is None


def test_gzip_and_word2vec_header(tmp_path: Path) -> None:
    plain, _ = load_glove(["Paris", ","], source="file", path=str(_write(tmp_path, TINY)))
    gz, dim = load_glove(["Paris", ","], source="file", path=str(_write(tmp_path, "8 4\n" + TINY, "g.txt.gz")))
    assert dim == 4 and plain.keys() == gz.keys()
    for word in plain:
        np.testing.assert_array_equal(plain[word], gz[word])


def test_build_glove_table_rows_and_unknown_row(tmp_path: Path) -> None:
    vocab, table = build_glove({"Paris", "London", "."}, "file", str(_write(tmp_path, TINY)), seed=0)
    assert vocab.words == ["@@PADDING@@", "@@UNKNOWN@@", "Paris"]                # words without a vector share UNK
    assert table.shape == (3, 4)
    assert torch.equal(table[vocab.index["Paris"]], torch.tensor([1.0, 2.0, 3.0, 4.0]))
    assert torch.equal(table[0], torch.zeros(4)) and 0 < table[UNK].abs().max() < 0.1
    assert vocab.ids(["Paris", "London"]) == [vocab.index["Paris"], UNK]


@pytest.mark.parametrize("text, message", [
    (", 0.1 0.2 0.3 0.4\ncat 1 2\n", r"glove.tiny.4d.txt: line 2: expected a word and 4 numbers, found 3 fields"),
    (", 0.1 0.2 0.3 0.4\ncat 1 2 x 4\n", r"glove.tiny.4d.txt: line 2: expected 4 numbers after the word 'cat'"),
    ("", r"glove.tiny.4d.txt: empty GloVe file"),
])
def test_bad_files_fail_with_file_and_line(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(DataError, match=message):
        load_glove(["cat", ","], source="file", path=str(_write(tmp_path, text)))


def test_missing_path_and_file(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="embedder.glove_path: expected a GloVe text file path"):
        load_glove(["cat"], source="file", path=None)
    with pytest.raises(DataError, match="nowhere.txt: GloVe file not found"):
        load_glove(["cat"], source="file", path=str(tmp_path / "nowhere.txt"))
    with pytest.raises(DataError, match="embedder.glove_source: expected 'kumo' or 'file', found 'web'"):
        load_glove(["cat"], source="web")
