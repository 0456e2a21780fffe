"""Issue 54: every committed task run under docs/results is "nothing to do" when its recorded config is run again.
Each record's resolved config is composed into a RunConfig through the config door, its identity computed as a
run computes it (data fingerprints of the files it names, the biLM hash it recorded, the task's version) and
compared, by resume's own comparison (identity_differences), with the identity stored by its results.json: no
training, no difference. Probe runs' records are compared with the run their recorded settings compose: the
check a probe run makes before it reports a results.json as its own."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from tests.conftest import needs_fixtures

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "docs" / "results"
pytestmark = needs_fixtures


def _records() -> list[Path]:
    return sorted(RESULTS.rglob("results.json")) if RESULTS.is_dir() else []


def _with_model_path(config: dict) -> dict:
    """A recorded config whose encoder's location was left out (records keep none since issue 45; the identity
    holds the model by its hash): a stand-in path, which the identity ignores."""
    config = json.loads(json.dumps(config))
    encoder = config.get("encoder")
    if isinstance(encoder, dict) and encoder.get("kind") not in (None, "bilm") and not encoder.get("path"):
        encoder["path"] = "recorded-by-hash"
    return config


def _live_identity(record: dict, path: Path):
    """The identity a run of the record's config computes today (experiment._run_locked's, without the encoder
    load: the biLM hash the record holds stands for it), and its RunConfig."""
    from elmo_bench.encoders.kinds import encoder_plugin_of
    from elmo_bench.engine.config_door import run_config
    from elmo_bench.engine.live_identity import identity
    from elmo_bench.engine.plugin_code import with_plugin
    from elmo_bench.engine.run_records import found_path
    from elmo_bench.tasks.registry import declaration

    config = _with_model_path(record["config"])
    config["data"] = {k: found_path(v, path.parent) for k, v in (config.get("data") or {}).items()}
    run = run_config(OmegaConf.create(config))
    elmo = bool(run.embedder.elmo)
    bilm_hash = (record.get("bilm") or {}).get("hash") if elmo else None
    current = with_plugin(identity(run, bilm_hash, None), "task", run.task.name, declaration(run.task.name).version)
    if elmo:
        current["encoder.plugin"] = encoder_plugin_of(run.encoder.spec)
    return current


def test_every_committed_task_run_is_nothing_to_do_when_its_config_runs_again():
    from elmo_bench.engine.code_identity import task_code_dir
    from elmo_bench.engine.run_identity import identity_differences
    from elmo_bench.engine.run_records import read_results
    from elmo_bench.identity.history import older_results_compared
    from elmo_bench.tasks.registry import declaration

    records = [(p, json.loads(p.read_text())) for p in _records()]
    tasks = [(p, r) for p, r in records if "probe" not in r and not r["task"].endswith("probe") and r["task"] != "wsd"]
    if not tasks:
        pytest.skip("docs/results not present")
    missing = [p for p, r in tasks if not all(Path(v).exists() for k, v in (r["config"].get("data") or {}).items()
                                                if k in ("train", "dev", "test") and isinstance(v, str) and v)
               and "shared" in json.dumps(r["config"].get("data"))]
    if missing and not (REPO.parent / "shared" / "data").is_dir():
        pytest.skip("needs ../shared/data (the committed runs' data files, fingerprinted)")
    problems = []
    for path, record in tasks:
        current = _live_identity(record, path)
        stored = read_results(path)
        package = declaration(record["task"]).resolved_target().partition(":")[0].rpartition(".")[0]
        diff = identity_differences(stored.identity, current, task_code_dir(package), older_results_compared)
        if diff:
            problems.append(f"{path.relative_to(REPO)}: {'; '.join(diff[:3])}")
    assert len(tasks) > 250 and not problems, "\n".join(problems[:10])
    path, record = tasks[0]                                        # and the comparison can fail: another seed
    changed = {**record, "config": {**record["config"], "seed": int(record["config"]["seed"]) + 1}}
    diff = identity_differences(read_results(path).identity, _live_identity(changed, path), None,
                                older_results_compared)
    assert diff == [f"seed: {record['config']['seed']} → {record['config']['seed'] + 1}"]


def test_every_committed_probe_run_record_is_its_recorded_configs_own():
    from elmo_bench.engine.probe_config import ProbeRunConfig
    from elmo_bench.engine.probe_run import results_of_this_run

    probe_runs = [(p, r) for p in _records() if "probe" in (r := json.loads(p.read_text()))]
    if not probe_runs:
        pytest.skip("docs/results not present")
    problems = []
    for path, record in probe_runs:
        run = ProbeRunConfig.of(_with_model_path(record["config"]))
        other = results_of_this_run(record, run, {"encoder.hash": record["encoder"]["hash"]})
        if other:
            problems.append(f"{path.relative_to(REPO)}: {other}")
    assert len(probe_runs) >= 10 and not problems, "\n".join(problems)
