"""Corpus reading, raw-text preparation and the vocabulary of biLM pretraining."""
from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from elmo_bench.base.errors import DataError
from elmo_bench.pretrain.corpus import expand_paths, litbank_eval_books, prepare, read_sentences, split_sentences
from elmo_bench.pretrain.data import load_corpus
from elmo_bench.pretrain.vocab import Vocab, build_vocab, count_tokens

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"


def test_reads_plain_gz_and_globs(tmp_path):
    (tmp_path / "a.txt").write_text("the cat sat\n\n a  dog \n")
    with gzip.open(tmp_path / "b.txt.gz", "wt") as handle:
        handle.write("one two\n")
    assert list(read_sentences([str(tmp_path / "*.txt*")])) == [["the", "cat", "sat"], ["a", "dog"], ["one", "two"]]


def test_empty_file_is_an_error(tmp_path):
    (tmp_path / "empty.txt").write_text("\n  \n")
    with pytest.raises(DataError, match=r"empty\.txt: empty corpus file"):
        list(read_sentences([str(tmp_path / "empty.txt")]))


def test_binary_file_is_an_error_naming_the_line(tmp_path):
    (tmp_path / "bin.txt").write_bytes(b"fine line\n\x00\x01\x02garbage\n")
    with pytest.raises(DataError, match=r"bin\.txt: line 2: binary data"):
        list(read_sentences([str(tmp_path / "bin.txt")]))
    (tmp_path / "latin.txt").write_bytes("ok\ncaf\xe9\n".encode("latin-1"))
    with pytest.raises(DataError, match=r"latin\.txt: line 2: not UTF-8"):
        list(read_sentences([str(tmp_path / "latin.txt")]))


def test_missing_path_and_empty_glob_are_errors(tmp_path):
    with pytest.raises(DataError, match=r"nope\.txt: corpus file not found"):
        expand_paths([str(tmp_path / "nope.txt")])
    with pytest.raises(DataError, match="no file matches"):
        expand_paths([str(tmp_path / "*.nothing")])
    with pytest.raises(DataError, match="directory"):
        expand_paths([str(tmp_path)])


def test_sentence_split_rules():
    text = 'Mr. Smith went to Paris. He said "Yes!" Then J. Doe left. It cost 5 dollars. "Why?" she asked.'
    assert split_sentences(text) == ["Mr. Smith went to Paris.", 'He said "Yes!"', "Then J. Doe left.",
                                     "It cost 5 dollars.", '"Why?" she asked.']
    assert split_sentences("no end punctuation here") == ["no end punctuation here"]


def test_prepare_joins_wrapped_lines_tokenises_and_excludes(tmp_path):
    (tmp_path / "1_book.txt").write_text("It was a dark night.  The rain\nfell--hard.\n\nChapter 2\n")
    (tmp_path / "2_skip.txt").write_text("Never seen.\n")
    stats = prepare([str(tmp_path / "*.txt")], tmp_path / "out.txt.gz", exclude=["2_skip"])
    with gzip.open(tmp_path / "out.txt.gz", "rt") as handle:
        lines = handle.read().splitlines()
    assert lines == ["It was a dark night .", "The rain fell -- hard .", "Chapter 2"]
    assert stats == {"files": 1, "sentences": 3, "tokens": 6 + 6 + 2}


def test_litbank_eval_books(tmp_path):
    fold = tmp_path / "0"
    fold.mkdir()
    (fold / "dev.ids").write_text("1023_bleak_house_brat.tsv\n")
    (fold / "test.ids").write_text("60_the_scarlet_pimpernel_brat.tsv\n\n")
    assert litbank_eval_books(tmp_path, 0) == ["1023_bleak_house", "60_the_scarlet_pimpernel"]
    (fold / "test.ids").write_text("oops.txt\n")
    with pytest.raises(DataError, match=r"test\.ids: line 1"):
        litbank_eval_books(tmp_path, 0)


@pytest.mark.skipif(not DATA.exists(), reason="../shared/data not present")
def test_real_litbank_fold0_excludes_twenty_gutenberg_files():
    books = litbank_eval_books(DATA / "coref/litbank/litbank_tenfold_splits", 0)
    assert len(books) == 20 and "1023_bleak_house" in books
    for stem in books:
        assert (DATA / "lm_corpus/gutenberg_litbank_originals" / f"{stem}.txt.gz").exists()


def test_vocab_order_counts_and_limits():
    counts, n = count_tokens([["b", "a", "b"], ["c", "b", "a"], ["d"]])
    vocab = build_vocab(counts, n, min_count=2)
    assert vocab.tokens == ["<S>", "</S>", "<UNK>", "b", "a"]
    assert vocab.counts == [3, 3, 2, 3, 2]  # <UNK> = c + d
    assert build_vocab(counts, n, max_size=4).tokens == ["<S>", "</S>", "<UNK>", "b"]
    assert vocab.encode(["a", "zzz"]) == [4, 2]


def test_vocab_file_round_trip_and_errors(tmp_path):
    vocab = Vocab(["<S>", "</S>", "<UNK>", "the", "cat"])
    vocab.save(tmp_path / "vocab.txt")
    assert Vocab.load(tmp_path / "vocab.txt").tokens == vocab.tokens
    (tmp_path / "bad.txt").write_text("the\ncat\n")
    with pytest.raises(DataError, match="lacks the special tokens"):
        Vocab.load(tmp_path / "bad.txt")
    (tmp_path / "dup.txt").write_text("<S>\n</S>\n<UNK>\nthe\nthe\n")
    with pytest.raises(DataError, match=r"dup\.txt: line 5: duplicate"):
        Vocab.load(tmp_path / "dup.txt")


def test_given_vocab_file_counts_the_corpus(tmp_path):
    (tmp_path / "c.txt").write_text("the cat\nthe dog\n")
    (tmp_path / "v.txt").write_text("<S>\n</S>\n<UNK>\nthe\n")
    corpus = load_corpus([str(tmp_path / "c.txt")], vocab=tmp_path / "v.txt")
    assert corpus.vocab.counts == [2, 2, 2, 2]
    assert corpus.table.to_vocab[corpus.table.types.index("dog")] == 2
