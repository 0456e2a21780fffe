"""Each task's per-example sufficient statistics (Task.statistics): their column sums give back the task's own
corpus metric exactly, on the whole set and on any resample; the text-free record of SQuAD's predictions; the
engine's check that keeps rows which do not add up out of the run record. (Moved from test_report_statistics.py,
when the rows moved from the report into the tasks.)"""
from __future__ import annotations

import pytest

from elmo_bench.engine.experiment import load_task
from elmo_bench.engine.run_outputs import task_statistics
from elmo_bench.records.example_statistics import Statistics, aggregate
from elmo_bench.tasks.api import Task
from elmo_bench.tasks.registry import registered

NER_GOLD = [["B-PER", "I-PER", "O", "B-LOC"], ["O", "B-ORG"], ["B-MISC", "O", "O"]]
NER_PRED = [["B-PER", "I-PER", "O", "B-ORG"], ["O", "B-ORG"], ["O", "O", "B-LOC"]]
SRL_GOLD = [["B-ARG0", "I-ARG0", "B-V", "B-ARG1"], ["B-ARG0", "B-V", "O"], ["O", "B-V", "B-ARGM-TMP"]]
SRL_PRED = [["B-ARG0", "I-ARG0", "B-V", "B-ARG2"], ["B-ARG0", "B-V", "B-ARG1"], ["O", "B-V", "B-ARGM-TMP"]]


def _stats(name: str, predictions, examples) -> tuple[Statistics, float]:
    """(the task's statistics, the task's own main metric) of the same predictions."""
    task = load_task(name)
    rows = task.statistics(predictions, examples)
    return (Statistics.of(task.statistics_kind, task.main_metric, rows, len(examples)),
            task.metric(predictions, examples)[task.main_metric])


def test_ner_chunk_counts_sum_to_conlleval():
    examples = [{"tokens": ["x"] * len(g), "tags": g} for g in NER_GOLD]
    stats, metric = _stats("ner", NER_PRED, examples)
    assert stats.rows.tolist() == [[1, 2, 2], [1, 1, 1], [0, 1, 1]]
    assert stats.value() == pytest.approx(metric) == pytest.approx(100 * 2 * 2 / (4 + 4))


def test_srl_argument_counts_sum_to_srl_eval():
    examples = [{"tokens": ["x"] * len(g), "tags": g} for g in SRL_GOLD]
    stats, metric = _stats("srl", SRL_PRED, examples)
    assert stats.rows.tolist() == [[1, 1, 1], [1, 1, 0], [1, 0, 0]]
    assert stats.value() == pytest.approx(metric)


def test_coref_document_counts_sum_to_the_reference_scorer():
    gold = [[[(0, 0), (2, 3), (5, 5)], [(7, 7), (9, 9)]], [[(1, 1), (4, 4)]], [[(0, 1), (3, 3)], [(5, 6), (8, 8)]]]
    pred = [[[[0, 0], [2, 3]], [[5, 5], [7, 7], [9, 9]]], [], [[[0, 1], [3, 3], [8, 8]], [[10, 10], [11, 11]]]]
    examples = [{"clusters": g} for g in gold]
    stats, metric = _stats("coref", pred, examples)
    assert stats.rows.shape == (3, 12) and stats.value() == pytest.approx(metric)
    # any subset (a resample) sums to that subset's own score too
    _, resampled = _stats("coref", [pred[0], pred[0], pred[2]], [examples[0], examples[0], examples[2]])
    assert aggregate("conll_f1", stats.rows[[0, 0, 2]].sum(0)[None])[0] == pytest.approx(resampled)


def test_sst_counts_roots_only_and_squad_averages_questions():
    examples = [{"label": 1, "is_root": True}, {"label": 2, "is_root": False}, {"label": 3, "is_root": True}]
    stats, _ = _stats("sst", [1, 2, 0], examples)
    assert stats.rows.tolist() == [[1, 1], [0, 0], [0, 1]] and stats.value() == pytest.approx(50.0)
    squad = [{"id": "q1", "answers": ["the cat"]}, {"id": "q2", "answers": ["a dog", "dogs"]}]
    stats, metric = _stats("squad", ["cat", "dogs"], squad)
    assert stats.value() == pytest.approx(metric)


def test_snli_and_pos_statistics_give_their_accuracy():
    snli = [{"label": "entailment"}, {"label": "neutral"}, {"label": "contradiction"}]
    stats, metric = _stats("snli", ["entailment", "neutral", "neutral"], snli)
    assert stats.rows.tolist() == [[1, 1], [1, 1], [0, 1]] and stats.value() == pytest.approx(metric)
    pos = [{"tags": ["DT", "NN"]}, {"tags": ["VB", "RB", "."]}]
    stats, metric = _stats("pos", [["DT", "VB"], ["VB", "RB", "."]], pos)
    assert stats.rows.tolist() == [[1, 2], [3, 3]] and stats.value() == pytest.approx(metric) == pytest.approx(80.0)


def test_which_tasks_sum_a_ratio_per_example():
    """(Was PER_EXAMPLE in report/bootstrap.py: which metrics are a mean of one score per example.)"""
    kinds = {name: load_task(name).statistics_kind for name in registered()}
    edge = {f"edge_{t}": "srl_f1" for t in ("pos", "chunk", "dep", "ner", "srl", "coref")}  # [correct, excess, missed]
    assert kinds == {"sst": "ratio", "snli": "ratio", "squad": "ratio", "pos": "ratio", "ner": "chunk_f1",
                     "srl": "srl_f1", "coref": "conll_f1", **edge}


def test_squad_answers_become_character_spans():
    examples = [{"context_text": "The cat sat on the mat."}, {"context_text": "No answer here."}]
    assert load_task("squad").record_predictions(["the mat", "elsewhere"], examples) == [[15, 22], None]
    assert load_task("ner").record_predictions([["O"]], [{}]) == [["O"]]      # labels are kept as they are


def test_the_engine_keeps_rows_that_do_not_give_the_metric_out_of_the_record():
    examples = [{"label": 1, "is_root": True}, {"label": 2, "is_root": True}]
    task = load_task("sst")
    stats, why = task_statistics(task, [1, 0], examples, 50.0)
    assert stats is not None and stats.value() == 50.0 and why == ""
    stats, why = task_statistics(task, [1, 0], examples, 75.0)            # a task whose rows disagree
    assert stats is None and "statistics give accuracy 50.0000, the metric 75.0" in why
    bare = Task()
    bare.name, bare.main_metric = "bare", "accuracy"
    assert task_statistics(bare, [1], [{}], 100.0) == (None, "task bare has no per-example statistics")
    with pytest.raises(ValueError, match="unknown statistics kind"):
        Statistics.of("mean", "accuracy", [[1.0]], 1)
    bare.statistics_kind = "ratio"
    bare.statistics = lambda predictions, examples: [[1.0, 1.0]]          # one row for two examples
    assert task_statistics(bare, [1, 1], [{}, {}], 100.0) == (
        None, "task bare: malformed statistics (1 statistics rows for 2 examples)")
