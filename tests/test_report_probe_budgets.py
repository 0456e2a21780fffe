"""Probe runs of different training-set sizes in one results tree (the committed probes_controls evidence on 1,000
EWT sentences, probe-suite's on 2,000; Table 6's probe on 4,000): the report never averages one size into another."""
from __future__ import annotations

from pathlib import Path

from elmo_bench.records.run_record import RunRecord
from elmo_bench.report.collect import Run
from elmo_bench.report.directions import probe_layers
from tests.report_sections import probe_report

groups = probe_report("pos_controls").groups
weights_label = probe_report("pos_controls").weights_label


def _pos_run(sentences: int, layer1: float, layer2: float, probing: bool = False) -> Run:
    extra = {"probing": {"probes": ["linear"], "seeds": [1]}} if probing else {}
    record = RunRecord(task="pos_probe", metrics={"test": {"layer_1_accuracy": layer1, "layer_2_accuracy": layer2}},
                       data={"name": "ud_ewt_pos", "train_sentences": sentences}, extra=extra)
    return Run(path=Path(f"/runs/{sentences}"), task="pos_probe", embedder="elmo", seed=1, data="ud_ewt_pos",
               fraction=1.0, main_metric="layer_1_accuracy", metrics=record.metrics, record=record)


def test_the_pos_direction_reads_the_runs_with_the_most_training_data():
    runs = [_pos_run(4000, 87.67, 87.46), _pos_run(2000, 86.40, 86.12)]
    layer1, layer2 = probe_layers(runs, "pos_probe", lambda r: r.metrics.get("test"), "layer_{}_accuracy")
    assert (layer1.mean, layer2.mean) == (87.67, 87.46)          # not (87.67 + 86.40) / 2
    full = _pos_run(4000, 88.0, 87.0)
    full.record.data["all_train_sentences"] = 4000                # the whole split: beats any cut one
    layer1, _ = probe_layers([*runs, full], "pos_probe", lambda r: r.metrics.get("test"), "layer_{}_accuracy")
    assert layer1.mean == 88.0


def test_control_probe_runs_of_another_size_are_their_own_labelled_block():
    assert weights_label(_pos_run(2000, 0, 0, probing=True)) == "trained"           # one size: the plain label
    runs = [_pos_run(2000, 0, 0, probing=True), _pos_run(1000, 0, 0, probing=True), _pos_run(1000, 1, 1, probing=True)]
    blocks = {weights: len(members) for (_, weights), members in groups(runs)}
    assert blocks == {"trained": 2, "trained, 2000 train sentences": 1}          # the smallest size keeps the plain


def test_the_converged_probe_has_columns_only_when_some_run_trained_its_control():
    """probe-suite's plain ``pos`` on a random encoder is a converged run without control: it adds no columns of
    dashes to the control table (its accuracies are in the best-layer table)."""
    from tests.report_sections import probe_report
    control_probe_kinds = probe_report("pos_controls").control_probe_kinds

    adam = _pos_run(1000, 0, 0, probing=True)
    adam.record.extra.update(probing={"probes": ["linear", "mlp1"], "seeds": [1]}, control={"dev": {}})
    plain = _pos_run(2000, 0, 0, probing=True)
    plain.record.extra["probing"] = {"probes": ["converged"], "seeds": [1]}
    assert control_probe_kinds([adam, plain]) == ["linear", "mlp1"]
    plain.record.extra["control"] = {"dev": {}}
    assert control_probe_kinds([adam, plain]) == ["converged", "linear", "mlp1"]


def test_a_random_twin_is_named_by_its_mode_and_seed_not_a_hash_suffix():
    """bilm=random records a biLM hash ``<trained>-random-<mode>-<seed>``: its name says so, and the trained biLM's
    name is unchanged (the edge table shows both side by side)."""
    from elmo_bench.report.encoder_names import base_label

    assert base_label({"kind": "bilm", "hash": "730677ca6e2ce40a"}) == "ELMo (biLM 730677ca)"
    assert base_label({"kind": "bilm", "hash": "730677ca6e2ce40a-random-lstm-0"}) == \
        "ELMo (biLM 730677ca, random lstm, seed 0)"
    assert base_label({"kind": "transformers", "model": "m", "pooling": "first", "random_init": "all",
                       "random_seed": 3}) == "m, random all, seed 3"
