"""Issue 12, "one shape": one task registry, one ELMo module, one Batch type, shared modules; a seventh task
(tests/tiny_task) added with one folder and one registry line runs through the unchanged engine, the report (Table 1
with its paired-bootstrap p-value, from the run records alone) and ``elmo-bench score``."""
from __future__ import annotations

import pytest
import torch
from omegaconf import OmegaConf

from elmo_bench.data.batch import Batch
from elmo_bench.engine.config_door import run_config
from elmo_bench.engine.experiment import load_task, run_experiment
from elmo_bench.modules.elmo import Elmo
from elmo_bench.modules.token_embedders import TaskEmbedder
from elmo_bench.records.elmo_settings import ElmoSettings
from elmo_bench.records.run_record import RunRecord
from elmo_bench.tasks.registry import config_files, registered
from tests.config_snapshot import composed
from tests.conftest import REPO, needs_fixtures
from tests.engine_helpers import TINY, compose_run


@needs_fixtures
def test_a_seventh_task_needs_one_folder_one_config_and_one_registry_line(tmp_path, monkeypatch):
    monkeypatch.setitem(registered(), "tiny", TINY)  # the one registry line
    results = run_experiment(run_config(compose_run(tmp_path)), tmp_path / "run")
    saved = RunRecord.read(tmp_path / "run" / "results.json").to_dict()
    assert saved["task"] == "tiny" and set(saved["metrics"]) == {"dev", "test"}
    assert 0.0 <= saved["metrics"]["test"]["accuracy"] <= 100.0
    assert results["mixes"]["input"]["weights"] and saved["epochs"]["run"] >= 1


@needs_fixtures
def test_the_seventh_task_reaches_the_report_and_the_score_command(tmp_path, monkeypatch, capsys):
    """Baseline and +ELMo runs of the tiny task: Table 1 gets a tiny row with both test accuracies and a p-value
    computed from the statistics the engine recorded through TinyTask.statistics (the report imports no task: it
    cannot know the tiny task otherwise); ``elmo-bench score tiny GOLD PRED`` scores its files through
    TinyTask.score_files and gives the run's own test accuracy."""
    import gzip
    import json

    from elmo_bench.commands.main import main
    from elmo_bench.records.example_statistics import Statistics
    from elmo_bench.report.bootstrap import paired_bootstrap_sums

    monkeypatch.setitem(registered(), "tiny", TINY)
    runs = tmp_path / "results"
    for embedder in ("glove", "glove_elmo"):
        run_experiment(run_config(compose_run(tmp_path, f"embedder={embedder}", "trainer.max_epochs=2")), runs / embedder)
    assert main(["report", str(runs), "--out", str(tmp_path / "report"), "--format", "json",
                 "--bootstrap-samples", "500"]) == 0
    table1 = json.loads((tmp_path / "report" / "report.json").read_text())["tables"]["table1"]
    row = next(r for r in table1["rows"] if r["task"] == "tiny")
    saved = {e: RunRecord.read(runs / e / "results.json") for e in ("glove", "glove_elmo")}
    assert row["metric"] == "accuracy" and row["data"] == "tiny_sample"
    assert row["baseline"]["mean"] == saved["glove"].metrics["test"]["accuracy"]
    assert row["elmo"]["mean"] == saved["glove_elmo"].metrics["test"]["accuracy"]
    stats = {}
    for embedder in ("glove", "glove_elmo"):
        data = json.loads(gzip.decompress((runs / embedder / "scores_test.json.gz").read_bytes()))
        stats[embedder] = Statistics.from_json(data)
        assert data["kind"] == "ratio" and len(data["rows"]) == 16
    assert row["p"] == paired_bootstrap_sums([stats["glove_elmo"]], [stats["glove"]], 500)[1]
    capsys.readouterr()
    predictions = json.loads((runs / "glove_elmo" / "predictions_test.json").read_text())
    (tmp_path / "pred.txt").write_text("".join(f"{p['prediction']}\n" for p in predictions))
    gold = REPO / "tests" / "tiny_task" / "samples" / "test.tsv"
    assert main(["score", "tiny", str(gold), str(tmp_path / "pred.txt")]) == 0
    assert json.loads(capsys.readouterr().out) == {"accuracy": saved["glove_elmo"].metrics["test"]["accuracy"]}
    assert main(["score", "tiny", str(gold)]) == 2                       # two files, as TinyTask.score_file_count
    assert "expected 2 file(s), found 1" in capsys.readouterr().err


def test_without_its_registry_line_the_task_is_refused_by_name():
    from elmo_bench.base.errors import ConfigError

    with pytest.raises(ConfigError, match="'tiny' is not a registered task; expected one of"):
        load_task("tiny")


def test_the_registry_is_the_only_one():
    files = config_files("task")              # each task's own conf/task/<name>.yaml (conf/ has none of its own)
    assert set(files) == set(registered()) and not (REPO / "conf" / "task").exists()
    for name, path in files.items():
        task_cfg = OmegaConf.load(path)
        assert "name" not in task_cfg and "target" not in task_cfg   # the name: the declaration's (task_schema)
        assert composed([f"task={name}"])["task"]["name"] == name
        assert load_task(name).name == name


def test_one_elmo_module_behind_the_embedder_and_the_readme_api():
    embedder = TaskEmbedder(None, False, ElmoSettings(placement="both", l2_coef=0.1, dropout=0.0), 3, 4)
    assert isinstance(embedder.elmo, Elmo) and embedder.elmo.names == ["input", "output"]
    assert not any(isinstance(m, torch.nn.Dropout) for m in embedder.modules() if m is not embedder.elmo.dropout)
    layers, mask = torch.randn(2, 3, 5, 4), torch.ones(2, 5, dtype=torch.bool)
    elmo = Elmo(None, num_mixes=2, num_layers=3, dropout=0.0, names=["input", "output"])
    elmo.load_state_dict(embedder.elmo.state_dict())
    with pytest.raises(ValueError, match="no biLM layers"):
        embedder(Batch.of({"tokens": None}, {"tokens": mask}))
    batch = Batch.of({"tokens": None}, {"tokens": mask})
    batch.fields["tokens"].layers = layers
    filled = embedder(batch)
    expected_in, expected_out = elmo.mix(layers, mask)
    assert torch.equal(filled.fields["tokens"].elmo_in, expected_in)
    assert torch.equal(filled.fields["tokens"].elmo_out, expected_out)


def test_heads_share_bio_constraints_viterbi_and_dropout_modules():
    import elmo_bench.modules.bio as bio
    import elmo_bench.tasks.ner.crf as crf
    import elmo_bench.tasks.ner.model as ner_model
    import elmo_bench.tasks.pos.task as pos_task
    import elmo_bench.tasks.squad.task as squad_task
    import elmo_bench.tasks.srl.decode as srl_decode
    from elmo_bench.modules.dropout import LockedDropout
    from elmo_bench.modules.labels import IGNORE

    assert crf.viterbi is bio.viterbi and srl_decode.shared_viterbi is bio.viterbi
    assert ner_model.bio_constraints is bio.bio_constraints and srl_decode.bio_constraints is bio.bio_constraints
    assert ner_model.LockedDropout is LockedDropout
    assert pos_task.IGNORE == squad_task.IGNORE == IGNORE == -100
    labels = ["O", "B-A", "I-A"]
    start, trans = srl_decode.allowed_transitions(labels)
    assert start.tolist() == [True, True, False] and trans[0, 2].item() is False and trans[1, 2].item() is True


def test_the_batch_checks_a_missing_elmo_output_once_for_every_head():
    mask = torch.ones(1, 2, dtype=torch.bool)
    batch = Batch.of({"tokens": torch.zeros(1, 2, 3)}, {"tokens": mask})
    with pytest.raises(ValueError, match="built with elmo_output_dim=4 but the batch's elmo_out\\['tokens'\\] has none"):
        batch.elmo_output("tokens", 4, "some head")
    assert batch.elmo_output("tokens", 0, "some head") is None
    with pytest.raises(ValueError, match="character CNN but the batch has no chars"):
        batch.chars("tokens", "some head")
