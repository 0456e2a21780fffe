"""conlleval semantics on hand-made cases (expected counts worked out by hand from conlleval's rules), with seqeval
underneath: the cases where seqeval's defaults differ, random sequences against the conlleval port the metric
replaced, and real CoNLL-2003 predictions."""
from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import pytest
from seqeval.metrics import f1_score
from seqeval.metrics.sequence_labeling import get_entities, precision_recall_fscore_support
from seqeval.scheme import IOB2

from elmo_bench.base.errors import DataError
from elmo_bench.data.conll2003 import read_conll
from elmo_bench.tasks.ner import metric
from elmo_bench.tasks.ner.metric import count_chunks, score_files, score_sentences, sentence_rows
from tests import conlleval_reference as reference
from tests.conftest import DATA, REPO


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


# --- seqeval underneath: where its defaults differ from conlleval, the metric keeps conlleval's number -------------



def test_chunks_come_from_seqeval(monkeypatch) -> None:
    # the metric's chunks are seqeval's get_entities: with it swapped for a finder that sees nothing, nothing is found
    assert counts(["B-PER", "I-PER"], ["B-PER", "I-PER"]) == (1, 1, 1)
    monkeypatch.setattr(metric, "get_entities", lambda seq, suffix=False: [])
    assert counts(["B-PER", "I-PER"], ["B-PER", "I-PER"]) == (0, 0, 0)


def test_strict_iob2_mode_would_drop_iob1_gold_and_stray_i_tags() -> None:
    # CoNLL-2003 gold is IOB1 (I-PER after O starts PER); the guess is BIO with a stray I-LOC after O.
    gold, guess = [["I-PER", "I-PER", "O", "I-LOC"]], [["B-PER", "I-PER", "O", "I-LOC"]]
    # seqeval's strict IOB2 mode finds no gold entity at all, and only PER in the guess: F1 0
    assert f1_score(gold, guess, mode="strict", scheme=IOB2) == 0.0
    # conlleval (and seqeval's default mode, which this metric uses): PER[0-1] and LOC[3] on both sides
    assert score_sentences(gold, guess) == {"precision": 100.0, "recall": 100.0, "f1": 100.0}
    # a type change inside a BIO guess (B-PER I-LOC): strict mode drops the LOC chunk (P 1, R 1/2, F1 2/3), conlleval
    # reads PER[0] LOC[1], both right
    assert f1_score([["B-PER", "B-LOC"]], [["B-PER", "I-LOC"]], mode="strict", scheme=IOB2) == pytest.approx(2 / 3)
    assert score_sentences([["B-PER", "B-LOC"]], [["B-PER", "I-LOC"]])["f1"] == 100.0


def test_e_then_b_of_the_same_type_stays_one_chunk_as_in_conlleval() -> None:
    # seqeval alone ends a chunk after every E- and starts one at every B-: two PER chunks
    assert get_entities(["E-PER", "B-PER"]) == [("PER", 0, 0), ("PER", 1, 1)]
    # conlleval's endOfChunk/startOfChunk lack (E, B): one chunk PER[0-1], which the metric keeps
    assert counts(["E-PER", "B-PER"], ["I-PER", "I-PER"]) == (1, 1, 1)
    assert counts(["E-PER", "B-PER", "B-PER"], ["I-PER", "I-PER", "B-PER"]) == (2, 2, 2)
    assert counts(["E-PER", "B-LOC"], ["I-PER", "I-LOC"]) == (2, 2, 2)  # a type change still splits


def test_type_0_is_no_type_as_in_conlleval() -> None:
    # seqeval alone keeps "0" as a type; Perl's conlleval reads the string "0" as false, i.e. no type
    assert get_entities(["B-0"]) == [("0", 0, 0)]
    assert counts(["B-0"], ["B"]) == (1, 1, 1)


def test_tags_seqeval_and_conlleval_read_differently_are_refused(tmp_path) -> None:
    path = tmp_path / "iobes.txt"
    path.write_text("John NNP S-PER S-PER\nSmith NNP S-PER S-PER\n")  # conlleval: one chunk; IOBES: two
    with pytest.raises(DataError, match=r"iobes\.txt:1: expected an NER tag B-TYPE, I-TYPE, E-TYPE or O .*'S-PER'"):
        score_files(str(path))
    with pytest.raises(DataError, match=r"^sentence 1, token 0: expected an NER tag .*'\[-PER'"):
        score_sentences([["O"], ["[-PER"]], [["O"], ["O"]])


def _reference_counts(gold: list[list[str]], guess: list[list[str]]) -> tuple[int, ...]:
    c = reference.count_chunks(row[:3] if row is not None else None for row in sentence_rows(gold, guess))
    return c.gold_chunks, c.guessed_chunks, c.correct_chunks, c.correct_tags, c.tokens


def _counts(gold: list[list[str]], guess: list[list[str]]) -> tuple[int, ...]:
    c = count_chunks(sentence_rows(gold, guess))
    return c.gold_chunks, c.guessed_chunks, c.correct_chunks, c.correct_tags, c.tokens


@pytest.mark.filterwarnings("ignore:O-PER seems not to be NE tag")  # seqeval's note on conlleval's odd O-TYPE
def test_random_iob_ioe_sequences_equal_the_conlleval_port() -> None:
    # every B/I/E/O tag pair, typed, untyped and of type "0", against the hand-written conlleval port it replaced
    tags = ["O", "B-PER", "I-PER", "E-PER", "B-LOC", "I-LOC", "E-LOC", "I-0", "B", "I", "E", "O-PER", "B-X-Y"]
    rng = random.Random(30)
    for _ in range(300):
        sentences = [[rng.choice(tags) for _ in range(rng.randint(0, 7))] for _ in range(rng.randint(1, 4))]
        guesses = [[rng.choice(tags) for _ in s] for s in sentences]
        assert _counts(sentences, guesses) == _reference_counts(sentences, guesses), (sentences, guesses)


NER_RUNS = REPO / "docs" / "results" / "cpu" / "runs" / "ner"


def _real_runs() -> list[Path]:
    return sorted(p.parent for p in NER_RUNS.rglob("results.json") if (p.parent / "predictions_test.json.gz").exists())


@pytest.mark.skipif(not (DATA / "conll2003").exists(), reason="../shared/data/conll2003 not present")
@pytest.mark.skipif(not _real_runs(), reason="no NER runs with predictions under docs/results/cpu/runs/ner")
def test_real_conll2003_predictions_score_as_conlleval(tmp_path) -> None:
    """Every NER run's test predictions (and one run's dev) on real CoNLL-2003 (3,453 / 3,250 sentences): the
    seqeval-based metric equals, to the last bit, the precision / recall / F1 those runs recorded (computed by the
    conlleval port at the time); the IOB1 gold file scored through score_files gives the reader's BIO gold's numbers."""
    gold = {split: read_conll(DATA / "conll2003" / name)
            for split, name in (("dev", "eng.testa"), ("test", "eng.testb"))}
    runs = _real_runs()
    for n, run in enumerate(runs):
        recorded = json.loads((run / "results.json").read_text())["metrics"]
        for split in ("dev", "test") if n == 0 else ("test",):  # seqeval takes ~0.5 s a split here
            with gzip.open(run / f"predictions_{split}.json.gz") as handle:
                predictions = {p["index"]: p["prediction"] for p in json.load(handle)}
            examples = gold[split]
            assert sorted(predictions) == list(range(len(examples))), run
            guess = [predictions[i] for i in range(len(examples))]
            tags = [ex["tags"] for ex in examples]
            assert score_sentences(tags, guess) == recorded[split], (run, split)
    # on the last run's test split: every conlleval counter equals the port's, and seqeval's own micro scores agree
    assert _counts(tags, guess) == _reference_counts(tags, guess)
    p, r, f, _ = precision_recall_fscore_support(tags, guess, average="micro")
    assert (100 * p, 100 * r, 100 * f) == pytest.approx(
        (recorded["test"]["precision"], recorded["test"]["recall"], recorded["test"]["f1"]), abs=1e-9)
    # the official IOB1 file (its -DOCSTART- line, IOB1 tags) in conlleval's format, with the last run's predictions
    guessed = iter(tag for tags_of_sentence in guess for tag in tags_of_sentence)
    lines = []
    for line in (DATA / "conll2003" / "eng.testb").read_text().splitlines():
        if not line.split():
            lines.append("")
        elif line.startswith("-DOCSTART-"):
            lines.append(f"{line} O")
        else:
            lines.append(f"{line} {next(guessed)}")
    assert next(guessed, None) is None
    out = tmp_path / "testb.conlleval"
    out.write_text("\n".join(lines) + "\n")
    assert score_files(str(out)) == recorded["test"]
