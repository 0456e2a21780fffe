"""Table arithmetic: relative increase, mean ± std, and missing cells shown as missing (never zero)."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from elmo_bench.records.run_record import RunRecord
from elmo_bench.report.collect import Run
from elmo_bench.report.render import table_latex, table_md
from elmo_bench.report.table import MISSING, fmt_stat, relative_increase, stat
from elmo_bench.report.tables import table1
from tests.declared_numbers import numbers
from tests.report_sections import probe_report

table6 = probe_report("pos").table6


def run(task="ner", embedder="glove", seed=1, test=None, data="d", main="f1", mode="learned", layer=None):
    elmo = None if embedder == "glove" else {"mode": mode, "placement": "input", "l2_coef": 0.0,
                                             "layer_index": layer}
    return Run(path=Path(f"/x/{task}/{embedder}/{seed}/results.json"), task=task, embedder=embedder, seed=seed,
               data=data, fraction=1.0, main_metric=main,
               metrics={"test": {main: test}} if test is not None else {}, elmo=elmo)


def test_relative_increase_is_abs_over_remaining_error():
    assert relative_increase(80.0, 85.0) == pytest.approx(25.0)        # 5 / 20
    assert relative_increase(90.0, 89.0) == pytest.approx(-10.0)
    # the paper's Table 1 relative increases: SQuAD 24.9%, SNLI 5.8%, NER 21%, SST-5 6.8%
    for task, expected in [("squad", 24.9), ("snli", 5.8), ("ner", 21.0), ("sst", 6.8)]:
        ref = numbers().table1[task]                                    # as the tasks declare them
        assert relative_increase(ref["baseline"], ref["elmo"]) == pytest.approx(expected, abs=0.05)
    with pytest.raises(ValueError, match="baseline"):
        relative_increase(100.0, 100.0)


def test_mean_and_sample_std():
    s = stat([90.0, 91.0, None, 95.0])
    assert (s.n, s.mean) == (3, pytest.approx(92.0)) and s.std == pytest.approx(2.6457513)
    assert fmt_stat(stat([81.1])) == "81.10" and fmt_stat(stat([None])) == MISSING and stat([]) is None


def test_missing_cells_are_dashes_never_zeros():
    table = table1([run(test=90.0), run(seed=2, test=0.0)], numbers=numbers())   # a real 0.0 stays 0.0
    ner = next(r for r in table.rows if r[0] == "ner")
    assert ner[3] == "45.00 ± 63.64" and ner[4] == MISSING and ner[5] == ner[6] == ner[12] == MISSING
    assert ner[7] == "2/0"
    squad = next(r for r in table.rows if r[0] == "squad")
    assert squad[1:8] == [MISSING] * 6 + ["0/0"]
    assert "0.00" not in " ".join(squad)


def test_run_without_test_metric_is_missing_not_zero():
    table = table1([run(), run(embedder="glove_elmo", test=93.0)])
    ner = next(r for r in table.rows if r[0] == "ner")
    assert ner[3] == MISSING and ner[4] == "93.00" and ner[7] == "0/1"


def test_pos_table_layers_learned_and_brill_note():
    runs = [run("pos", "elmo", 1, 95.0, "conll2000_pos", "accuracy", "layer", 1),
            run("pos", "elmo", 2, 96.0, "conll2000_pos", "accuracy", "layer", 1),
            run("pos", "elmo", 1, 97.0, "conll2000_pos", "accuracy", "learned")]
    table = table6(runs)
    assert table.header == ["Data", "layer 1", "learned mix"]
    assert table.rows[0] == ["conll2000_pos", "95.50 ± 0.71", "97.00"]
    assert table.rows[-2] == ["paper biLM (PTB WSJ)", "97.3", MISSING]
    assert table.rows[-1] == ["paper CoVe (PTB WSJ)", "93.3", MISSING]
    assert any("Brill" in note for note in table.notes)


def test_renderers_escape():
    table = table1([run(test=90.0), run(embedder="glove_elmo", test=92.0)])
    assert "| ner | d | f1 | 90.00 | 92.00 | +2.00 | 20.0% | 1/1 |" in table_md(table)
    latex = table_latex(table)
    assert r"20.0\%" in latex and "--" in latex and "—" not in latex


def test_budget_table_counts_epochs_best_epoch_and_minutes():
    def timed(seed, dev_scores, seconds, patience):
        r = run(seed=seed, test=80.0)
        r.record = RunRecord.from_dict({
            "history": [{"epoch": i, "dev_metric": v, "seconds": seconds / len(dev_scores) - 1}
                        for i, v in enumerate(dev_scores)],
            "timings": {"total_seconds": 1.0, "read_seconds": 0.5, "eval_seconds": len(dev_scores) - 0.5},
            "config": {"task": {"trainer": {"max_epochs": 5, "patience": patience}}, "trainer": {"lr": None}}},
            required=())
        return r

    from elmo_bench.report.run_tables import budget_table
    runs = [timed(1, [10.0, 30.0, 20.0], 120.0, 1), timed(2, [5.0, 6.0, 7.0, 7.0, 1.0], 240.0, 3)]
    table = budget_table(runs)
    # epochs 3 and 5 -> 4.0; best epochs 1 and 2 (the first of two equal bests) -> 1.5; 2 and 4 minutes -> 3.0,
    # from the epochs' seconds + reading + evaluation (total_seconds, a resumed run's last process only, is not used);
    # run 1 spent its patience (3 − 1 > 1), run 2 reached the cap of 5 within its patience (5 − 2 = 3)
    assert table.rows == [["ner", "d", "glove", "2", "4.0", "1.5", "1/2", "3.0", "4.0"]]
    runs[1].record.epochs = {"stopped_by": "patience"}                   # the engine's own record wins
    assert budget_table(runs).rows[0][6] == "0/2"
    assert table.records[0]["minutes"] == pytest.approx(3.0)


def test_dev_history_reads_the_results_json_schema():
    from elmo_bench.report.run_tables import dev_history
    r = run(test=80.0)
    r.record = RunRecord.from_dict({"history": [{"epoch": 0, "dev_metric": 10.0, "loss": 2.0, "seconds": 1.0},
                                                {"epoch": 1, "dev_metric": 30.0, "loss": 1.0, "seconds": 1.0}]},
                                   required=())
    assert dev_history(r) == [(0, 10.0), (1, 30.0)]
    r.record = RunRecord.from_dict(
        {"epochs": {"history": [{"epoch": 0, "dev": {"f1": 12.0, "precision": 1.0}, "dev_metric": 12.0}]}}, required=())
    assert dev_history(r) == [(0, 12.0)]


def _ablation_run(seed, dev, *, layer_norm, task_layer_norm, override=None, fraction=0.1, lambda_=None):
    """A +ELMo NER run on 10% of train: the effective layer norm, the task's default and the mix override."""
    return Run(path=Path(f"/x/ner/{seed}/{layer_norm}/{override}/{lambda_}/results.json"), task="ner",
               embedder="glove_elmo", seed=seed, data="conll2003", fraction=fraction, main_metric="f1",
               metrics={"dev": {"f1": dev}, "test": {"f1": dev - 1}},
               elmo={"mode": "learned", "placement": "input", "l2_coef": 0.1 if lambda_ is None else lambda_,
                     "layer_norm": layer_norm, "gamma_init": 1.0, "dropout": 0.5, "layer_index": None},
               mix_config={"layer_norm": override, "lambda": lambda_},
               record=RunRecord.from_dict(
                   {"config": {"task": {"elmo": {"layer_norm": task_layer_norm, "lambda": 0.1}}}}, required=()))


def test_a_mix_override_equal_to_the_tasks_own_value_is_the_default_run():
    from elmo_bench.report.run_tables import scale_ablation_table

    default = _ablation_run(1, 80.0, layer_norm=True, task_layer_norm=True)
    same = _ablation_run(2, 82.0, layer_norm=True, task_layer_norm=True, override=True)   # an arm equal to default
    other = _ablation_run(1, 78.0, layer_norm=False, task_layer_norm=True, override=False)
    assert default.is_default and same.is_default and not other.is_default
    assert not _ablation_run(1, 1, layer_norm=True, task_layer_norm=True, lambda_=0.1).overrides("lambda")
    assert _ablation_run(1, 1, layer_norm=True, task_layer_norm=True, lambda_=1.0).overrides("lambda")
    table = scale_ablation_table([default, same, other])
    assert [r[2:7] for r in table.rows] == [["false", "1", "0.50", "", "78.00"],
                                            ["true", "1", "0.50", "yes", "81.00 ± 1.41"]]
    assert table.rows[0][1] == "conll2003 (0.1 of train)" and table.records[1]["seeds"] == [1, 2]
    assert scale_ablation_table([default, same]).rows == []          # one setting only: nothing was ablated


def test_an_elmo_dropout_arm_is_its_own_ablation_row():
    from elmo_bench.report.run_tables import scale_ablation_table

    default = _ablation_run(1, 80.0, layer_norm=True, task_layer_norm=True)
    more = _ablation_run(1, 83.0, layer_norm=True, task_layer_norm=True)
    more.elmo = {**more.elmo, "dropout": 0.7}
    more.mix_config = {"dropout": 0.7}
    more.path = Path("/x/ner/dropout/results.json")
    table = scale_ablation_table([default, more])
    assert [r[4:7] for r in table.rows] == [["0.50", "yes", "80.00"], ["0.70", "", "83.00"]]
    assert [r["dropout"] for r in table.records] == [0.5, 0.7]


def test_tables_2_and_3_show_budget_fraction_rows_only_where_a_variant_ran():
    from elmo_bench.report.tables import table2

    runs = [_ablation_run(1, 80.0, layer_norm=True, task_layer_norm=True),
            _ablation_run(1, 83.0, layer_norm=True, task_layer_norm=True, lambda_=1.0),
            _ablation_run(1, 70.0, layer_norm=True, task_layer_norm=True, fraction=0.01, lambda_=0.1)]
    rows = {(r[0], r[1]): r for r in table2(runs).rows}
    assert rows[("ner", "conll2003 (0.1 of train)")][4] == "83.00"         # the lambda = 1 column
    assert ("ner", "conll2003 (0.01 of train)") not in rows                # only a default run at 1%: no row


def test_adapted_runs_are_their_own_table1_row_against_the_same_baseline():
    base = run(test=80.0)
    elmo = run(embedder="glove_elmo", test=82.0)
    adapted = dataclasses.replace(run(embedder="glove_elmo", test=85.0),
                                  record=RunRecord(task="ner", metrics={}, bilm={"hash": "a", "base_hash": "b",
                                                                                 "adapted_hash": "a"}))
    assert adapted.adapted and not elmo.adapted
    rows = {r[1]: r for r in table1([base, elmo, adapted]).rows if r[0] == "ner"}
    assert rows["d"][3:5] == ["80.00", "82.00"] and rows["d"][7] == "1/1"            # never averaged together
    assert rows["d, +ELMo with bilm=adapted"][3:5] == ["80.00", "85.00"]


def test_a_gamma_init_arm_stays_out_of_the_placement_columns():
    """Table 3 compares placements at the task's own mix: a run whose initial gamma differs from today's default
    (an old default that a dev ablation replaced) would mix two settings in one column."""
    from elmo_bench.report.tables import table3

    default = _ablation_run(1, 80.0, layer_norm=True, task_layer_norm=True)
    both = _ablation_run(1, 81.0, layer_norm=True, task_layer_norm=True)
    both.elmo = {**both.elmo, "placement": "both"}
    both.mix_config = {"placement": "both"}
    both.path = Path("/x/ner/both/results.json")
    old_gamma = _ablation_run(2, 60.0, layer_norm=True, task_layer_norm=True)
    old_gamma.elmo = {**old_gamma.elmo, "gamma_init": 0.25}
    old_gamma.mix_config = {"gamma_init": 0.25}
    old_gamma.path = Path("/x/ner/gamma/results.json")
    (row,) = [r for r in table3([default, both, old_gamma]).rows if r[0] == "ner"]
    assert row[2:6] == ["80.00", "81.00", MISSING, "1/1/0"]           # the 60.0 gamma arm is in no column
