"""Per-example sufficient statistics: their column sums give back each task's own corpus metric exactly, and the
bootstrap over them behaves like the per-example one."""
from __future__ import annotations

import numpy as np
import pytest

from elmo_bench.report.statistics import Statistics, aggregate, compute, paired_bootstrap_sums

NER_GOLD = [["B-PER", "I-PER", "O", "B-LOC"], ["O", "B-ORG"], ["B-MISC", "O", "O"]]
NER_PRED = [["B-PER", "I-PER", "O", "B-ORG"], ["O", "B-ORG"], ["O", "O", "B-LOC"]]
SRL_GOLD = [["B-ARG0", "I-ARG0", "B-V", "B-ARG1"], ["B-ARG0", "B-V", "O"], ["O", "B-V", "B-ARGM-TMP"]]
SRL_PRED = [["B-ARG0", "I-ARG0", "B-V", "B-ARG2"], ["B-ARG0", "B-V", "B-ARG1"], ["O", "B-V", "B-ARGM-TMP"]]


def _metric(task_path: str, predictions, examples):
    import importlib

    module, cls = task_path.split(":")
    task = getattr(importlib.import_module(module), cls)()
    return task.metric(predictions, examples)


def test_ner_chunk_counts_sum_to_conlleval():
    examples = [{"tokens": ["x"] * len(g), "tags": g} for g in NER_GOLD]
    stats = compute("ner", "f1", NER_PRED, examples)
    assert stats.rows.tolist() == [[1, 2, 2], [1, 1, 1], [0, 1, 1]]
    assert stats.value() == pytest.approx(_metric("elmo_bench.tasks.ner.task:NerTask", NER_PRED, examples)["f1"])
    assert stats.value() == pytest.approx(100 * 2 * 2 / (4 + 4))


def test_srl_argument_counts_sum_to_srl_eval():
    examples = [{"tokens": ["x"] * len(g), "tags": g} for g in SRL_GOLD]
    stats = compute("srl", "f1", SRL_PRED, examples)
    assert stats.rows.tolist() == [[1, 1, 1], [1, 1, 0], [1, 0, 0]]
    assert stats.value() == pytest.approx(_metric("elmo_bench.tasks.srl.task:SrlTask", SRL_PRED, examples)["f1"])


def test_coref_document_counts_sum_to_the_reference_scorer():
    gold = [[[(0, 0), (2, 3), (5, 5)], [(7, 7), (9, 9)]], [[(1, 1), (4, 4)]], [[(0, 1), (3, 3)], [(5, 6), (8, 8)]]]
    pred = [[[[0, 0], [2, 3]], [[5, 5], [7, 7], [9, 9]]], [], [[[0, 1], [3, 3], [8, 8]], [[10, 10], [11, 11]]]]
    examples = [{"clusters": g} for g in gold]
    stats = compute("coref", "conll_f1", pred, examples)
    expected = _metric("elmo_bench.tasks.coref.task:CorefTask", pred, examples)["conll_f1"]
    assert stats.rows.shape == (3, 12) and stats.value() == pytest.approx(expected)
    # any subset (a resample) sums to that subset's own score too
    assert aggregate("conll_f1", stats.rows[[0, 0, 2]].sum(0)[None])[0] == pytest.approx(
        _metric("elmo_bench.tasks.coref.task:CorefTask", [pred[0], pred[0], pred[2]], [examples[0], examples[0], examples[2]])["conll_f1"])


def test_sst_counts_roots_only_and_squad_averages_questions():
    examples = [{"label": 1, "is_root": True}, {"label": 2, "is_root": False}, {"label": 3, "is_root": True}]
    stats = compute("sst", "accuracy", [1, 2, 0], examples)
    assert stats.rows.tolist() == [[1, 1], [0, 0], [0, 1]] and stats.value() == pytest.approx(50.0)
    squad = [{"id": "q1", "answers": ["the cat"]}, {"id": "q2", "answers": ["a dog", "dogs"]}]
    stats = compute("squad", "f1", ["cat", "dogs"], squad)
    assert stats.value() == pytest.approx(_metric("elmo_bench.tasks.squad.task:SquadTask", ["cat", "dogs"], squad)["f1"])
    assert compute("ner", "accuracy", [], []) is None


def test_sum_bootstrap_matches_planted_differences():
    rng = np.random.default_rng(0)
    n = 400
    good = Statistics("ratio", "accuracy", np.stack([(rng.random(n) < 0.8).astype(float), np.ones(n)], 1))
    poor = Statistics("ratio", "accuracy", np.stack([(rng.random(n) < 0.6).astype(float), np.ones(n)], 1))
    observed, p = paired_bootstrap_sums([good], [poor], samples=500)
    assert observed == pytest.approx(good.value() - poor.value()) and p < 0.01
    assert paired_bootstrap_sums([poor], [good], samples=100)[1] == 1.0
    _, p_same = paired_bootstrap_sums([good], [good], samples=100)
    assert p_same == 1.0
    with pytest.raises(ValueError):
        paired_bootstrap_sums([good], [Statistics("ratio", "accuracy", np.ones((3, 2)))])
