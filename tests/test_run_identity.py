"""Issue 12, run identity: a run directory is reused (resumed or skipped) only by the configuration that made it."""
from __future__ import annotations

import json

import pytest

from elmo_bench.base.errors import ConfigError
from elmo_bench.commands.hydra_setup import run_suffix
from elmo_bench.engine.config_door import run_config
from elmo_bench.engine.experiment import run_experiment
from elmo_bench.engine.live_identity import flat_identity
from elmo_bench.engine.run_records import RUN_FILE
from elmo_bench.identity.rules import flatten
from elmo_bench.tasks.registry import registered
from tests.conftest import REPO, needs_fixtures
from tests.engine_helpers import TINY, compose_run


@pytest.fixture
def tiny(monkeypatch):
    monkeypatch.setitem(registered(), "tiny", TINY)


@needs_fixtures
def test_a_different_seed_epochs_or_cache_setting_is_refused_naming_the_keys(tmp_path, tiny):
    run_dir = tmp_path / "run"
    first = run_experiment(run_config(compose_run(tmp_path, "seed=1", "trainer.max_epochs=2")), run_dir)
    stored = json.loads((run_dir / RUN_FILE).read_text())
    assert stored["identity"]["seed"] == 1 and stored["config"]["trainer"]["max_epochs"] == 2
    assert stored["identity"]["bilm.hash"] == first["bilm"]["hash"] and stored["identity"]["plugin.task"] == "tiny@1"
    # the code hash the run was made with: beside the version in results.json, a diagnostic outside the identity
    from elmo_bench.engine.code_identity import task_code_hash
    assert first["code"] == {"task": task_code_hash(TINY.package)} and "code.task" not in stored["identity"]
    stamp = (run_dir / "results.json").stat().st_mtime_ns
    with pytest.raises(ConfigError, match=r"made by a different configuration \(seed: 1 → 7; "
                                          r"trainer.max_epochs: 2 → 3\)"):
        run_experiment(run_config(compose_run(tmp_path, "seed=7", "trainer.max_epochs=3")), run_dir)
    with pytest.raises(ConfigError, match=r"\(cache: true → false\)"):
        run_experiment(run_config(compose_run(tmp_path, "seed=1", "trainer.max_epochs=2", "cache=false")), run_dir)
    assert (run_dir / "results.json").stat().st_mtime_ns == stamp  # nothing was overwritten
    # the same configuration (speed-only keys may differ) skips the finished run
    again = run_experiment(run_config(compose_run(tmp_path, "seed=1", "trainer.max_epochs=2", "threads=2")), run_dir)
    assert again["metrics"] == first["metrics"] and (run_dir / "results.json").stat().st_mtime_ns == stamp


def test_data_files_are_identified_by_content_and_the_task_by_its_code(tmp_path):
    data = tmp_path / "train.txt"
    data.write_text("a\n")
    config = {"seed": 1, "progress": True, "paths": {"x": "y"}, "data": {"train": str(data), "fraction": 1.0}}
    before = flat_identity(flatten(config), "abc", "code1")
    assert "progress" not in before and "paths.x" not in before and before["data.train"].startswith("sha256:")
    data.write_text("b\n")
    after = flat_identity(flatten(config), "abc", "code1")
    assert after["data.train"] != before["data.train"]
    assert flat_identity(flatten(config), "abc", "code2")["code.task"] == "code2"


@needs_fixtures
def test_a_results_json_from_before_run_identity_is_compared_on_its_config(tmp_path, tiny):
    run_dir = tmp_path / "old"
    run_experiment(run_config(compose_run(tmp_path, "trainer.max_epochs=1")), run_dir)
    (run_dir / RUN_FILE).unlink()  # as written by an earlier version of the project, whose config had other keys
    old = json.loads((run_dir / "results.json").read_text())
    old["config"]["task"]["target"] = "tests.tiny_task.task:TinyTask"
    del old["config"]["mix"]["gamma_init"]
    (run_dir / "results.json").write_text(json.dumps(old))
    with pytest.raises(ConfigError, match="seed: 1 → 2"):
        run_experiment(run_config(compose_run(tmp_path, "trainer.max_epochs=1", "seed=2")), run_dir)
    assert run_experiment(run_config(compose_run(tmp_path, "trainer.max_epochs=1")), run_dir)["seed"] == 1


def test_history_compares_a_results_json_from_before_run_identity_on_shared_keys_without_its_code():
    """elmo_bench.identity.history's rule for such a record: the keys both identities hold, less the task's code
    (git decides that), and nothing else; today's run.json is compared on every key."""
    from elmo_bench.identity.history import OLDER_RESULTS_SKIP, older_results_compared
    from elmo_bench.identity.rules import compared

    stored = {"seed": 1, "task.name": "ner", "removed.key": 3, "code.task": "ast:0"}
    current = {"seed": 1, "task.name": "ner", "added.key": 4, "plugin.task": "ner@1"}
    assert older_results_compared(stored, current) == ({"seed": 1, "task.name": "ner"},) * 2
    assert set(OLDER_RESULTS_SKIP) == {"code.task", "plugin.task"}
    assert compared(stored, current, narrowed=older_results_compared) == []
    assert compared(stored, {**current, "seed": 2}, narrowed=older_results_compared) == ["seed: 1 → 2"]
    assert compared(stored, current) == ["added.key: (absent) → 4", "code.task: \"ast:0\" → (absent)",
                                         "plugin.task: (absent) → \"ner@1\"", "removed.key: 3 → (absent)"]


def test_run_directory_names_carry_every_override_but_paths():
    assert run_suffix("cache=false,embedder=glove,paths.results_dir=/tmp/x,seed=7,trainer.max_epochs=2") == \
        "/cache=false,trainer.max_epochs=2"


def _root_commit() -> str | None:
    import subprocess

    try:
        shallow = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--is-shallow-repository"], capture_output=True,
                                 text=True, timeout=30).stdout.strip()
        roots = subprocess.run(["git", "-C", str(REPO), "rev-list", "--max-parents=0", "HEAD"], capture_output=True,
                               text=True, timeout=30).stdout.split()
    except OSError:
        return None
    return roots[0] if roots and shallow == "false" else None


@needs_fixtures
def test_a_results_json_from_before_run_identity_made_by_older_task_code_is_refused(tmp_path, tiny):
    root = _root_commit()
    if root is None:
        pytest.skip("needs a full git history (the first commit predates tests/tiny_task)")
    run_dir = tmp_path / "old"
    run_experiment(run_config(compose_run(tmp_path, "trainer.max_epochs=1")), run_dir)
    (run_dir / RUN_FILE).unlink()
    old = json.loads((run_dir / "results.json").read_text())
    old["git_commit"] = root  # written by the project's first commit, before this task's code existed
    (run_dir / "results.json").write_text(json.dumps(old))
    with pytest.raises(ConfigError, match="made by an earlier version of the task's code"):
        run_experiment(run_config(compose_run(tmp_path, "trainer.max_epochs=1")), run_dir)


def test_a_run_without_elmo_leaves_the_elmo_settings_out_of_its_identity():
    config = {"seed": 1, "embedder": {"elmo": False, "glove": True}, "task": {"elmo": {"layer_norm": False}, "lr": 1},
              "mix": {"layer_norm": None}}
    glove = flat_identity(flatten(config), None, "code1")
    assert "task.elmo.layer_norm" not in glove and "mix.layer_norm" not in glove and glove["task.lr"] == 1
    config["task"]["elmo"]["layer_norm"] = True          # choosing the task's ELMo default later ...
    assert flat_identity(flatten(config), None, "code1") == glove      # ... leaves a GloVe run's identity unchanged
    config["embedder"]["elmo"] = True
    with_elmo = flat_identity(flatten(config), "abc", "code1")
    assert with_elmo["task.elmo.layer_norm"] is True and with_elmo["mix.layer_norm"] is None


@needs_fixtures
def test_a_finished_baseline_run_is_reused_after_the_task_elmo_default_changes(tmp_path, tiny):
    run_dir = tmp_path / "glove"
    first = run_experiment(run_config(compose_run(tmp_path, "embedder=glove", "trainer.max_epochs=1")), run_dir)
    stored = json.loads((run_dir / RUN_FILE).read_text())
    stored["identity"]["task.elmo.layer_norm"] = "a value an older default wrote"   # recorded by the earlier rule
    stored["identity"]["task.default_data"] = "default_tiny"   # every run.json had it before issue 35 removed it
    (run_dir / RUN_FILE).write_text(json.dumps(stored))
    again = run_experiment(run_config(compose_run(tmp_path, "embedder=glove", "trainer.max_epochs=1", "mix.layer_norm=true")),
                           run_dir)
    assert again["metrics"] == first["metrics"]


@needs_fixtures
def test_a_raised_epoch_cap_continues_a_finished_run_exactly_as_a_fresh_run_with_that_cap(tmp_path, tiny):
    run_dir = tmp_path / "extended"
    short = run_experiment(run_config(compose_run(tmp_path, "trainer.max_epochs=2", "trainer.patience=5")), run_dir)
    assert short["epochs"]["run"] == 2
    extended = run_experiment(run_config(compose_run(tmp_path, "trainer.max_epochs=4", "trainer.patience=5")), run_dir)
    fresh = run_experiment(run_config(compose_run(tmp_path, "trainer.max_epochs=4", "trainer.patience=5")), tmp_path / "fresh")
    assert extended["epochs"]["run"] == 4
    assert [h["dev_metric"] for h in extended["history"]] == [h["dev_metric"] for h in fresh["history"]]
    assert [h["loss"] for h in extended["history"]] == pytest.approx([h["loss"] for h in fresh["history"]], abs=1e-6)
    assert extended["metrics"] == fresh["metrics"]
    stored = json.loads((run_dir / RUN_FILE).read_text())
    assert stored["identity"]["trainer.max_epochs"] == 4                # the run now is the 4-epoch run
    stamp = (run_dir / "results.json").stat().st_mtime_ns
    run_experiment(run_config(compose_run(tmp_path, "trainer.max_epochs=4", "trainer.patience=5")), run_dir)
    assert (run_dir / "results.json").stat().st_mtime_ns == stamp       # and is skipped as finished


@needs_fixtures
def test_a_stopping_rule_that_would_have_stopped_the_run_earlier_is_refused(tmp_path, tiny):
    run_dir = tmp_path / "run"
    run_experiment(run_config(compose_run(tmp_path, "trainer.max_epochs=3", "trainer.patience=5")), run_dir)
    stamp = (run_dir / "results.json").stat().st_mtime_ns
    with pytest.raises(ConfigError, match=r"would have stopped this run before epoch 2, but it trained 3 epochs"):
        run_experiment(run_config(compose_run(tmp_path, "trainer.max_epochs=2", "trainer.patience=5")), run_dir)
    assert (run_dir / "results.json").stat().st_mtime_ns == stamp       # nothing was touched
    assert json.loads((run_dir / RUN_FILE).read_text())["identity"]["trainer.max_epochs"] == 3


@needs_fixtures
def test_a_raised_cap_over_a_run_early_stopping_ended_keeps_its_results_without_training(tmp_path, tiny):
    run_dir = tmp_path / "run"
    first = run_experiment(run_config(compose_run(tmp_path, "trainer.max_epochs=12", "trainer.patience=1")), run_dir)
    assert first["epochs"]["stopped_by"] == "patience" and first["epochs"]["run"] < 12
    untouched = {name: (run_dir / name).stat().st_mtime_ns for name in ("checkpoint.pt", "best.pt")}
    again = run_experiment(run_config(compose_run(tmp_path, "trainer.max_epochs=20", "trainer.patience=1")), run_dir)
    assert again["metrics"] == first["metrics"] and again["history"] == first["history"]
    assert again["config"]["trainer"]["max_epochs"] == 20
    assert json.loads((run_dir / RUN_FILE).read_text())["identity"]["trainer.max_epochs"] == 20
    assert {name: (run_dir / name).stat().st_mtime_ns for name in untouched} == untouched   # nothing retrained


def test_elmo_settings_are_compared_as_the_values_the_run_used():
    from elmo_bench.identity.rules import effective_elmo

    ablation = {"seed": 1, "task.elmo.dropout": 0.2, "mix.dropout": 0.5, "mix.mode": "learned"}
    new_default = {"seed": 1, "task.elmo.dropout": 0.5, "mix.dropout": None, "mix.mode": "learned"}
    old_default = {"seed": 1, "task.elmo.dropout": 0.2, "mix.dropout": None, "mix.mode": "learned"}
    assert effective_elmo(ablation) == effective_elmo(new_default)
    assert effective_elmo(ablation)["elmo.dropout"] == 0.5 and "task.elmo.dropout" not in effective_elmo(ablation)
    assert effective_elmo(old_default) != effective_elmo(new_default)
    # keys a config leaves out take TASK_ELMO_DEFAULTS' value; a run without ELMo keys is unchanged
    assert effective_elmo(new_default)["elmo.placement"] == "input"
    assert effective_elmo({"seed": 1}) == {"seed": 1}


@needs_fixtures
def test_an_ablation_arm_made_the_task_default_keeps_its_run_and_the_old_default_is_refused(tmp_path, tiny):
    run_dir = tmp_path / "arm"
    first = run_experiment(run_config(compose_run(tmp_path, "trainer.max_epochs=1", "mix.dropout=0.3")), run_dir)
    # the dev ablation made 0.3 the task's default: the same experiment, reused without training
    again = run_experiment(run_config(compose_run(tmp_path, "trainer.max_epochs=1", "task.elmo.dropout=0.3")), run_dir)
    assert again["metrics"] == first["metrics"]
    old = tmp_path / "old_default"
    run_experiment(run_config(compose_run(tmp_path, "trainer.max_epochs=1", "task.elmo.dropout=0.1")), old)
    with pytest.raises(ConfigError, match=r"elmo.dropout: 0.1 → 0.3"):
        run_experiment(run_config(compose_run(tmp_path, "trainer.max_epochs=1", "task.elmo.dropout=0.3")), old)


def test_a_stored_run_is_read_back_as_written(tmp_path):
    """run.json: its identity as stored (none: empty) and its config; an older results.json (no identity): the
    identity of its stored config with the biLM hash it recorded and no task-code hash (StoredRun.of)."""
    from elmo_bench.engine.run_records import StoredRun, read_results, read_run

    (tmp_path / RUN_FILE).write_text(json.dumps({"identity": {"seed": 1, "code.task": "ast:x"},
                                                 "config": {"seed": 1}}))
    assert read_run(tmp_path / RUN_FILE) == StoredRun({"seed": 1, "code.task": "ast:x"}, {"seed": 1})
    (tmp_path / RUN_FILE).write_text(json.dumps({"identity": None, "config": [1]}))
    assert read_run(tmp_path / RUN_FILE) == StoredRun({}, None)
    old = {"config": {"seed": 2, "threads": 4, "embedder": {"elmo": False}, "mix": {"dropout": 0.1}},
           "bilm": {"hash": "abc"}, "git_commit": "0123456789abcdef"}
    (tmp_path / "results.json").write_text(json.dumps(old))
    made = read_results(tmp_path / "results.json")
    assert made.identity == {"seed": 2, "embedder.elmo": False, "bilm.hash": "abc"}
    assert made.before_run_json and made.git_commit == "0123456789abcdef" and made.config == old["config"]
