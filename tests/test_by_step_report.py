"""Issue 57 item 3: probing across checkpoints, end to end on tiny models. A tiny biLM pretrained with
``pretrain.series_dir`` (3 points) and one point copied under a later step (identical weights), each probed by
``probe=ridge`` and the logit lens: every record says where in training it was taken, each point has its own run
directory, and the report's "by training step" section lists the steps per layer in training order, marks the copy
"duplicate of step 20" and draws its figure. Hugging Face revisions (local directories) are read the same way, by a
trainer_state.json or their names."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from elmo_bench.encoders.checkpoints import POINT_FILE, TRAINER_STATE, position
from tests.conftest import needs_fixtures

pytestmark = needs_fixtures


def _probe(point: Path, data: Path, root: Path, probe: str, *more: str) -> dict:
    """``probe`` on one series point (bilm=custom, no other flag), in the directory run.py would name."""
    from elmo_bench.commands.compose import compose_job, job_run
    from elmo_bench.commands.hydra_setup import sweep_path
    from elmo_bench.engine.probe_run import run_probe

    overrides = [f"probe={probe}", "bilm=custom", f"bilm.options={point / 'options.json'}",
                 f"bilm.weights={point / 'weights.hdf5'}", f"paths.cache_dir={root / 'cache'}", "logger=disabled",
                 "progress=false", f"probe.data_dir={data}", *more]
    where = sweep_path(",".join(sorted(overrides)), _root_=compose_job(overrides, check=False))
    return {"dir": where, **run_probe(job_run(overrides), root / "results" / where)}


@pytest.fixture(scope="module")
def series(tmp_path_factory) -> dict:
    """The series (steps 10, 20, 30 and step 40 = a copy of step 20), probed by ridge and the logit lens."""
    from elmo_bench.pretrain.series import series_points
    from elmo_bench.pretrain.train import train
    from tests.pretrain_helpers import tiny_config
    from tests.test_lens_probe import _ewt

    root = tmp_path_factory.mktemp("by_step")
    text = root / "train.txt"
    words = "the dog cat bird saw heard liked a house garden tree ran home today and or but with".split()
    rng = np.random.default_rng(0)
    text.write_text("\n".join(" ".join(rng.choice(words, 8)) for _ in range(200)) + "\n")
    train(tiny_config(text, root / "run", series_dir=str(root / "series"), checkpoint_every_steps=10,
                      max_tokens=8 * 6 * 30), progress=False)
    points = series_points(root / "series")
    copy = root / "series" / "step-00000040_tokens-1920"
    shutil.copytree(points[1], copy)
    (copy / POINT_FILE).write_text(json.dumps({"step": 40, "tokens_seen": 1920, "train_seconds": 1.0}))
    data = _ewt(root)
    records = {"ridge": [_probe(p, data, root, "ridge") for p in [*points, copy]],
               "lens": [_probe(p, data, root, "lens", "probe.lens=logit", "probe.baseline=none",
                               "probe.bootstrap=50") for p in [*points, copy]]}
    return {"root": root, "points": [*points, copy], "records": records}


def test_each_point_s_record_says_where_in_training_and_has_its_own_directory(series):
    ridge = series["records"]["ridge"]
    assert [r["encoder"]["checkpoint"] for r in ridge] == [
        {"series": "series", "step": s, "tokens_seen": s * 48, "from": POINT_FILE} for s in (10, 20, 30, 40)]
    names = [r["dir"] for r in ridge]
    assert names[0].startswith("probes/ridge/custom-step-00000010_tokens-480~") and len(set(names)) == 4
    assert ridge[3]["encoder"]["hash"] == ridge[1]["encoder"]["hash"]            # the copy: identical weights
    assert ridge[3]["metrics"] == ridge[1]["metrics"]
    lens = series["records"]["lens"]                                            # the softmax and vocab.txt beside
    assert all("logit/layer_2_forward_bits" in r["metrics"]["dev"] for r in lens)   # the weights: no extra flag


@pytest.fixture(scope="module")
def report(series) -> dict:
    from elmo_bench.commands.report import build_reports

    out = series["root"] / "report"
    build_reports([str(series["root"] / "results")], out, ["md", "json"], significance=False)
    return {"md": (out / "report.md").read_text(), "json": json.loads((out / "report.json").read_text()),
            "out": out}


def test_the_by_step_section_lists_each_metric_by_layer_in_training_order_and_marks_the_duplicate(report):
    table = report["json"]["tables"]["by_step"]
    rows = [r for r in table["rows"] if r["metric"] == "POS accuracy, ridge probe (test)"]
    assert [r["step"] for r in rows] == [10, 20, 30, 40] and [r["tokens_seen"] for r in rows] == [480, 960, 1440, 1920]
    assert [r["duplicate_of"] for r in rows] == [None, None, None, 20]
    assert all(isinstance(r[f"layer_{k}"]["value"], float) for r in rows for k in (0, 1, 2))
    lens = [r for r in table["rows"] if r["metric"] == "logit lens bits/token, forward (dev)"]
    assert [r["step"] for r in lens] == [10, 20, 30, 40]
    assert all(r["layer_1"]["lo"] <= r["layer_1"]["value"] <= r["layer_1"]["hi"] for r in lens)  # intervals kept
    assert "duplicate of step 20 (identical weights)" in report["md"] and "## Probes by training step" in report["md"]
    assert "by_training_step.png" in report["json"]["figures"] and (report["out"] / "by_training_step.png").is_file()
    assert len(report["json"]["tables"]["ridge"]["rows"]) == 4       # the probes' own sections still show each point


def test_the_figure_draws_a_line_per_layer_and_the_duplicate_once(series, monkeypatch, tmp_path):
    from elmo_bench.commands.report import build_report
    from elmo_bench.report import figures

    drawn = {}
    saved = figures._save

    def catch(fig, path):
        if path.name == "by_training_step.png":
            drawn["axes"] = [ax for ax in fig.axes if ax.lines]
        saved(fig, path)

    monkeypatch.setattr(figures, "_save", catch)
    build_report([str(series["root"] / "results")], tmp_path / "r", significance=False)
    ridge = next(ax for ax in drawn["axes"] if ax.get_title() == "POS accuracy, ridge probe (test)")
    lines = [line for line in ridge.lines if line.get_label().startswith("layer")]
    assert [line.get_label() for line in lines] == ["layer 0", "layer 1", "layer 2"]
    assert all(list(line.get_xdata()) == [480.0, 960.0, 1440.0] for line in lines)   # step 40 not drawn again
    assert ridge.get_xscale() == "log" and any("duplicate of step 20" in t.get_text() for t in ridge.texts)


def test_positions_are_read_from_checkpoint_json_trainer_state_or_the_name(tmp_path):
    hf = tmp_path / "pythia"
    for name, state in (("step1000", None), ("checkpoint-2000", {"global_step": 2000, "num_input_tokens_seen": 8000}),
                        ("rev", {"global_step": 3000}), ("plain", None)):
        (hf / name).mkdir(parents=True)
        if state is not None:
            (hf / name / TRAINER_STATE).write_text(json.dumps(state))
    assert position(hf / "step1000") == {"series": "pythia", "step": 1000, "tokens_seen": None, "from": "name"}
    assert position(hf / "checkpoint-2000") == {"series": "pythia", "step": 2000, "tokens_seen": 8000,
                                                "from": TRAINER_STATE}
    assert position(hf / "rev")["step"] == 3000 and position(hf / "plain") is None
    weights = tmp_path / "ckpt" / "global_step30.hdf5"
    weights.parent.mkdir()
    weights.write_bytes(b"")
    assert position(weights) == {"series": tmp_path.name, "step": 30, "tokens_seen": None, "from": "name"}


def test_hugging_face_revisions_are_a_series_and_a_copied_revision_is_marked(tmp_path):
    from elmo_bench.commands.compose import job_run
    from elmo_bench.commands.report import build_reports
    from elmo_bench.engine.probe_run import run_probe
    from tests.hf_tiny import tiny_models
    from tests.test_lens_probe import _ewt

    revisions = tmp_path / "tiny-bert"
    first = shutil.copytree(tiny_models()["bert"], revisions / "step1000")
    second = shutil.copytree(tiny_models()["bert"], revisions / "checkpoint-2000")     # identical weights
    (second / TRAINER_STATE).write_text(json.dumps({"global_step": 2000}))
    data = _ewt(tmp_path)
    for model in (first, second):
        run_probe(job_run(["probe=ridge", "encoder=transformers", f"encoder.path={model}", "logger=disabled",
                           "progress=false", f"paths.cache_dir={tmp_path / 'cache'}", f"probe.data_dir={data}"]),
                  tmp_path / "results" / model.name)
    record = json.loads((tmp_path / "results" / "checkpoint-2000" / "results.json").read_text())
    assert record["encoder"]["checkpoint"] == {"series": "tiny-bert", "step": 2000, "tokens_seen": None,
                                               "from": TRAINER_STATE}
    build_reports([str(tmp_path / "results")], tmp_path / "report", ["json"], significance=False)
    rows = json.loads((tmp_path / "report" / "report.json").read_text())["tables"]["by_step"]["rows"]
    assert [(r["step"], r["duplicate_of"]) for r in rows] == [(1000, None), (2000, 1000)]
    assert all(r["series"] == "tiny-bert" for r in rows)


def _record(task: str, step: int, test: dict, dev: dict | None = None, extra: dict | None = None):
    """A probe's record of series point ``step`` (the report's Run, its fields as the probe writes them)."""
    from elmo_bench.records.run_record import RunRecord
    from elmo_bench.report.collect import Run

    metrics = {"test": test, **({"dev": dev} if dev else {})}
    encoder = {"kind": "bilm", "hash": f"h{step}", "checkpoint": {"series": "s", "step": step, "tokens_seen": step * 8}}
    record = RunRecord(task=task, metrics=metrics, encoder=encoder, bilm={"hash": f"h{step}"},
                       extra={"probe": {"name": task, "settings": {}}, **(extra or {})})
    return Run(Path(f"{task}{step}"), task, "elmo", 1, "ud_ewt", 1.0, "", metrics, record=record, probe_task=True)


def test_each_probe_section_declares_its_by_step_numbers():
    from elmo_bench.commands.report import report_plugins
    from elmo_bench.report.by_step import points, step_values

    plugins = report_plugins()
    runs = [_record("pos_probe", 10, {"layer_0_accuracy": 80.0, "layer_1_accuracy": 90.0}),
            _record("pos_probe", 10, {"linear/layer_1_accuracy": 91.0},
                    extra={"probing": {"probes": ["linear"], "seeds": [1]},
                           "selectivity": {"test": {"linear/layer_1": 20.0}}}),
            _record("structural_probe", 10, {"layer_1_uuas": 50.0, "linear_chain_uuas": 40.0}),
            _record("conditional_probe", 10, {"layer0/layer_1_gain": 0.5, "layer0/layer_1_gain_lo": 0.4,
                                              "layer0/layer_1_gain_hi": 0.6, "none/layer_1_gain": 2.0}),
            _record("lens_probe", 10, {}, dev={"logit/layer_1_backward_bits": 9.0, "logit/layer_1_backward_bits_lo": 8.5,
                                               "logit/layer_1_backward_bits_hi": 9.5, "random/logit/layer_1_backward_bits": 12.0})]
    found = {(v.metric, v.layer): (v.value, v.low, v.high) for _, values in step_values(runs, plugins) for v in values}
    assert found == {("POS accuracy (test)", 0): (80.0, None, None), ("POS accuracy (test)", 1): (90.0, None, None),
                     ("POS accuracy, linear probe (test)", 1): (91.0, None, None),
                     ("POS selectivity, linear probe (test)", 1): (20.0, None, None),
                     ("UUAS (test)", 1): (50.0, None, None),
                     ("bits beyond layer 0, linear (converged) probe (test)", 1): (0.5, 0.4, 0.6),
                     ("logit lens bits/token, backward (dev)", 1): (9.0, 8.5, 9.5)}
    assert [(p.step, p.tokens) for p in points(step_values(runs, plugins))] == [(10, 80)]
