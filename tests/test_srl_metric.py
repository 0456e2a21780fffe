"""srl-eval.pl semantics on hand-made propositions; every expected number is worked out in the comments."""
from __future__ import annotations

from pathlib import Path

import pytest

from elmo_bench.tasks.srl.metric import evaluate_proposition, load_se_tagging, score_bio, score_files


def counts(gold: list[str], pred: list[str]) -> tuple[int, int, int]:
    return evaluate_proposition(load_se_tagging(gold), load_se_tagging(pred))


def test_partial_overlap_is_wrong_and_verb_excluded() -> None:
    # gold: A0=[0,1] V=[2] A1=[3,5]; pred: A0=[0,0] (partial) V=[2] A1=[3,5]
    # ok = A1 → 1; excess = pred A0 → 1; missed = gold A0 → 1; V counted nowhere.
    gold = ["(A0*", "*)", "(V*)", "(A1*", "*", "*)"]
    pred = ["(A0*)", "*", "(V*)", "(A1*", "*", "*)"]
    assert counts(gold, pred) == (1, 1, 1)
    # pred: A0 right, V with wrong boundaries, no A1 → ok 1 (A0), excess 0 (the wrong V is excluded), missed 1 (A1)
    assert counts(gold, ["(A0*", "*)", "(V*", "*)", "*", "*"]) == (1, 0, 1)
    assert counts(["(V*)", "*"], ["*", "(V*)"]) == (0, 0, 0)


def test_continuation_merges_with_its_head() -> None:
    # gold: A1 = pieces [0,0] + C-A1 [2,3] → one discontinuous A1 argument spanning 0..3
    gold = ["(A1*)", "(V*)", "(C-A1*", "*)"]
    assert counts(gold, gold) == (1, 0, 0)                               # one argument, not two
    # pred labels the second piece A1 instead of C-A1: two single A1 args, neither matches → ok 0, excess 2, missed 1
    assert counts(gold, ["(A1*)", "(V*)", "(A1*", "*)"]) == (0, 2, 1)
    # pred gets only the first piece: A1=[0,0] single vs discontinuous gold [0..3] → ok 0, excess 1, missed 1
    assert counts(gold, ["(A1*)", "(V*)", "*", "*"]) == (0, 1, 1)
    # pred one single A1 over 0..3 (same start/end as the merged gold): single vs discontinuous never match
    assert counts(gold, ["(A1*", "*", "*", "*)"]) == (0, 1, 1)
    # pred pieces [0,0]+[2,2]: same type, wrong last piece → ok 0, excess 1, missed 1
    assert counts(gold, ["(A1*)", "(V*)", "(C-A1*)", "*"]) == (0, 1, 1)


def test_continuation_without_head_becomes_plain_argument() -> None:
    # srl-eval turns an orphan C-A1 into a plain A1: it then matches a gold single A1 on the same span
    assert counts(["(V*)", "(A1*", "*)"], ["(V*)", "(C-A1*", "*)"]) == (1, 0, 0)


def test_reference_argument_is_its_own_label() -> None:
    # gold: A0=[0], R-A0=[1], V=[2]; pred labels word 1 A0 → R-A0 missed, A0 [1] excess, A0 [0] correct
    gold = ["(A0*)", "(R-A0*)", "(V*)"]
    assert counts(gold, ["(A0*)", "(A0*)", "(V*)"]) == (1, 1, 1)
    assert counts(gold, gold) == (2, 0, 0)


def test_conll2004_closing_labels_accepted() -> None:
    assert counts(["(A0*A0)", "(V*V)", "(A1*", "*A1)"], ["(A0*)", "(V*)", "(A1*", "*)"]) == (2, 0, 0)


def write(path: Path, rows: list[str]) -> str:
    path.write_text("\n".join(rows) + "\n")
    return str(path)


def test_score_files_overall_line(tmp_path: Path) -> None:
    gold = write(tmp_path / "gold.props", [
        "-    (A0*)", "eat  (V*)", "-    (A1*", "-    *)", "",
        "-    (A0*)   *", "say  (V*)    *", "-    (A1*    (A0*)", "go   *       (V*)", "-    *)      (AM-TMP*)", "",
    ])
    pred = write(tmp_path / "pred.props", [
        "-    (A0*)", "eat  (V*)", "-    (A1*)", "-    *", "",
        "-     (A0*)   *", "tell  (V*)    *", "-     *       (A0*)", "go    *       (V*)", "-     *       (AM-LOC*)", "",
    ])
    # sentence 1 (eat): A0 ok; A1 [2,2] vs [2,3] → excess 1, missed 1
    # sentence 2, verb 'say' predicted as 'tell' → srl-eval counts both gold args (A0, A1) missed, no excess
    # sentence 2 (go): A0 ok; AM-LOC vs AM-TMP → excess 1, missed 1
    # ok = 2, excess = 2, missed = 4 → P = 2/4 = 50, R = 2/6 = 33.33, F1 = 2·50·33.33/83.33 = 40
    res = score_files(gold, pred)
    assert res["precision"] == pytest.approx(50.0)
    assert res["recall"] == pytest.approx(100 / 3)
    assert res["f1"] == pytest.approx(40.0)
    assert score_files(gold, gold)["f1"] == pytest.approx(100.0)


def test_score_bio_matches_bracket_scoring() -> None:
    # BIO forms of test_partial_overlap: ok 1, excess 1, missed 1 → P = R = F1 = 50
    gold = ["B-A0", "I-A0", "B-V", "B-A1", "I-A1", "I-A1"]
    pred = ["B-A0", "O", "B-V", "B-A1", "I-A1", "I-A1"]
    res = score_bio([gold], [pred])
    assert (res["correct"], res["excess"], res["missed"]) == (1, 1, 1)
    assert res["f1"] == pytest.approx(50.0)
    # nothing predicted and nothing gold → all zeros, no division by zero
    assert score_bio([["O", "B-V"]], [["O", "B-V"]])["f1"] == 0.0
