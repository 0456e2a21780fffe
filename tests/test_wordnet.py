"""WordNet through nltk's reader from a database directory: a tiny hand-made WordNet 3.0 database, and the real one
from Debian's wordnet-base when it is installed."""
from __future__ import annotations

from pathlib import Path

import pytest

from elmo_bench.base.errors import DataError
from elmo_bench.probe.wsd.wordnet import DEFAULT_SOURCE, LEXNAMES, first_sense, open_wordnet, prepare_root

nltk = pytest.importorskip("nltk", reason="nltk is a dependency of the WSD probe (pip install nltk)")
HEADER = "  1 This is a tiny invented WordNet-format database for tests.\n"


def _data_file(lines: list[str]) -> tuple[str, list[int]]:
    """A data.<pos> file: every synset line starts with its own byte offset (8 digits), as WordNet's do."""
    text, offsets = HEADER, []
    for line in lines:
        offsets.append(len(text.encode()))
        text += f"{offsets[-1]:08d} {line}\n"
    return text, offsets


def make_wordnet(root: Path) -> None:
    """bank (noun): 'sloping land' in noun.object (lexfile 17) and 'institution' in noun.group (14), the index
    listing the institution first; bank (verb): verb.possession (40); river (noun). Adjectives, adverbs: none."""
    noun, (sloping, institution, river) = _data_file([
        "17 n 01 bank 1 000 | sloping land beside water",
        "14 n 02 bank 0 depository_financial_institution 0 000 | a financial institution",
        "17 n 01 river 0 000 | a large natural stream of water",
    ])
    verb, (deposit,) = _data_file(["40 v 01 bank 0 000 01 + 08 00 | put into a bank account"])
    root.mkdir(parents=True)
    files = {
        "data.noun": noun, "data.verb": verb, "data.adj": HEADER, "data.adv": HEADER,
        "index.noun": HEADER + f"bank n 2 0 2 1 {institution:08d} {sloping:08d}  \n"
                               f"depository_financial_institution n 1 0 1 0 {institution:08d}  \n"
                               f"river n 1 0 1 1 {river:08d}  \n",
        "index.verb": HEADER + f"bank v 1 0 1 0 {deposit:08d}  \n",
        "index.adj": HEADER, "index.adv": HEADER, "noun.exc": "", "verb.exc": "",
    }
    for name, text in files.items():
        (root / name).write_text(text)


@pytest.fixture
def isolated_nltk_path(monkeypatch):
    monkeypatch.setattr(nltk.data, "path", list(nltk.data.path))


def test_tiny_wordnet_first_senses(tmp_path, isolated_nltk_path):
    make_wordnet(tmp_path / "src")
    wordnet = open_wordnet(tmp_path / "src", tmp_path / "work")
    first = first_sense(wordnet)
    assert first("bank", "n") == "bank%1:14:00::"          # the index's order, not the data file's
    assert [s.lexname() for s in wordnet.synsets("bank", "n")] == ["noun.group", "noun.object"]
    assert first("Bank", "v") == "bank%2:40:00::"
    assert first("river", "n") == "river%1:17:00::"
    assert first("otter", "n") is None and first("bank", "r") is None
    root = tmp_path / "work" / "corpora" / "wordnet"
    lexnames = (root / "lexnames").read_text().splitlines()
    assert len(lexnames) == 45 == len(LEXNAMES) and lexnames[17] == "17\tnoun.object\t1" and lexnames[40] == "40\tverb.possession\t2"
    assert (root / "index.sense").read_text() == ""        # wordnet-sense-index absent: nltk gets an empty file


def test_second_open_reuses_the_copy(tmp_path, isolated_nltk_path):
    make_wordnet(tmp_path / "src")
    root = prepare_root(tmp_path / "src", tmp_path / "work")
    before = (root / "data.noun").stat().st_mtime_ns
    assert prepare_root(tmp_path / "src", tmp_path / "work") == root and (root / "data.noun").stat().st_mtime_ns == before


def test_missing_database_names_the_directory_and_the_package(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match=r"empty: not a WordNet 3.0 database directory .*apt-get install -y wordnet-base"):
        open_wordnet(tmp_path / "empty", tmp_path / "work")


@pytest.mark.skipif(not (DEFAULT_SOURCE / "data.noun").exists(),
                    reason="WordNet 3.0 not installed (apt-get update && apt-get install -y wordnet-base)")
def test_debian_wordnet_first_senses(tmp_path, isolated_nltk_path):
    first = first_sense(open_wordnet(DEFAULT_SOURCE, tmp_path / "work"))
    assert first("bank", "n") == "bank%1:17:01::"          # bank.n.01, sloping land
    assert first("dog", "n") == "dog%1:05:00::"
    index_sense = DEFAULT_SOURCE / "index.sense"         # wordnet-sense-index: sense_key offset sense_number tags
    if index_sense.exists():                                # an independent record of every lemma's first sense
        wanted = {"belong%2", "run%2", "good%3", "quickly%4", "bank%2"}
        firsts = {}
        for line in index_sense.read_text().splitlines():
            key, _, number, _ = line.split()
            if key.split(":")[0] in wanted and number == "1":
                firsts[key.split(":")[0]] = key
        for prefix, key in firsts.items():
            lemma, ss_type = prefix.split("%")
            assert first(lemma, {"2": "v", "3": "a", "4": "r"}[ss_type]) == key, prefix
        assert len(firsts) == 5
