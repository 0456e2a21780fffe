"""Cluster sweeps through hydra-submitit-launcher (``pip install -e ".[slurm]"``): ``submitit_local`` runs the
quickstart sweep's jobs as separate submitit processes, and the SLURM launchers compose into the sbatch script a
cluster would get (partition, GPUs per job, time, memory)."""
from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir
from hydra.utils import instantiate

from elmo_bench.bilm.default import DEFAULT_WEIGHTS
from elmo_bench.commands.hydra_setup import register_resolvers
from tests.conftest import REPO
from tests.warm_python import run_python


def _installed(module: str) -> bool:
    """find_spec of a dotted name imports its parents, and raises (rather than returning None) when the
    ``hydra_plugins`` namespace itself is absent, as on a fresh machine with only hydra-core."""
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


needs_submitit = pytest.mark.skipif(not _installed("hydra_plugins.hydra_submitit_launcher"),
                                    reason='hydra-submitit-launcher not installed (pip install -e ".[slurm]")')
CONF = REPO / "conf"
LAUNCHERS = sorted(p.stem for p in (CONF / "hydra" / "launcher").glob("*.yaml"))
register_resolvers()


def _launcher(overrides: list[str]):
    with initialize_config_dir(config_dir=str(CONF), version_base="1.3"):
        return compose(config_name="config", overrides=["experiment=table1", *overrides],
                       return_hydra_config=True).hydra.launcher


def test_only_the_tested_launcher_presets_exist() -> None:
    assert LAUNCHERS == ["slurm"]


@needs_submitit
def test_submitit_local_folder_has_no_job_id_placeholder() -> None:
    """submitit's local controller makes its folder as written, so the plugin's ``.submitit/%j`` left an empty
    literal ``%j`` directory; ``submitit_local`` here writes into ``<sweep dir>/.submitit`` (files named by job id),
    and the SLURM launchers keep ``%j``, which SLURM expands."""
    local = _launcher(["hydra/launcher=submitit_local", "hydra.sweep.dir=/sweeps/a"])
    assert local.submitit_folder == "/sweeps/a/.submitit"
    assert local._target_ == "hydra_plugins.hydra_submitit_launcher.submitit_launcher.LocalLauncher"
    assert _launcher(["hydra/launcher=slurm", "hydra.sweep.dir=/sweeps/a"]).submitit_folder == "/sweeps/a/.submitit/%j"


@needs_submitit
@pytest.mark.parametrize("choice, gpus, minutes, mem", [("submitit_slurm", None, 60, None), ("slurm", 1, 720, 64)])
def test_slurm_launchers_compose_with_their_resource_keys(choice: str, gpus: int | None, minutes: int,
                                                          mem: int | None) -> None:
    cfg = _launcher([f"hydra/launcher={choice}"])
    assert cfg._target_ == "hydra_plugins.hydra_submitit_launcher.submitit_launcher.SlurmLauncher"
    assert (cfg.partition, cfg.gpus_per_node, cfg.timeout_min, cfg.mem_gb) == (None, gpus, minutes, mem)
    cfg = _launcher([f"hydra/launcher={choice}", "hydra.launcher.partition=gpu", "hydra.launcher.gpus_per_node=4",
                     "hydra.launcher.timeout_min=90", "hydra.launcher.mem_gb=128"])
    assert (cfg.partition, cfg.gpus_per_node, cfg.timeout_min, cfg.mem_gb) == ("gpu", 4, 90, 128)


@needs_submitit
def test_slurm_preset_becomes_the_sbatch_script(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The launcher's parameters go through submitit's own SLURM executor (which only wants ``srun`` on PATH to
    be constructed; nothing is submitted) into the sbatch header a cluster would receive."""
    import submitit
    from omegaconf import OmegaConf

    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    (fake_bin / "srun").write_text("#!/bin/sh\nexit 0\n")
    (fake_bin / "srun").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake_bin}{os.pathsep}{os.environ['PATH']}")
    cfg = _launcher(["hydra/launcher=slurm", "hydra.launcher.partition=gpu", "hydra.launcher.timeout_min=90",
                     f"hydra.sweep.dir={tmp_path / 'sweep'}"])
    cfg = OmegaConf.to_container(cfg, resolve=False)
    cfg["submitit_folder"] = str(tmp_path / "sweep" / ".submitit" / "%j")
    cfg["name"] = "run"
    launcher = instantiate(cfg)
    params = dict(launcher.params)
    # the plugin's own translation (BaseSubmititLauncher.launch): executor keys vs slurm_-prefixed ones
    executor = submitit.AutoExecutor(cluster="slurm", folder=params.pop("submitit_folder"),
                                     slurm_max_num_timeout=params.pop("max_num_timeout"))
    base = {"timeout_min", "cpus_per_task", "gpus_per_node", "tasks_per_node", "mem_gb", "nodes", "name",
            "stderr_to_stdout"}
    executor.update_parameters(**{k if k in base else f"slurm_{k}": v for k, v in params.items()})
    script = executor._executor._make_submission_file_text("python run.py", "0")
    for line in ("#SBATCH --partition=gpu", "#SBATCH --gpus-per-node=1", "#SBATCH --time=90",
                 "#SBATCH --mem=64GB", "#SBATCH --cpus-per-task=8"):
        assert line in script, script


@needs_submitit
@pytest.mark.skipif(not DEFAULT_WEIGHTS.exists(), reason="the shipped biLM (elmo_bench/resources/bilm) is absent")
def test_submitit_local_runs_each_quickstart_job_in_its_own_process(tmp_path: Path) -> None:
    cmd = ["run.py", "-m", "experiment=quickstart", "hydra/launcher=submitit_local",
           "trainer.max_epochs=1", "logger=disabled", "progress=false", f"paths.results_dir={tmp_path}",
           f"paths.cache_dir={tmp_path / 'cache'}"]
    done = run_python(cmd, cwd=REPO, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    sweep = tmp_path / "quickstart"
    for embedder in ("glove", "glove_elmo"):
        found = sorted((sweep / f"{embedder}-seed1").rglob("results.json"))  # run dirs carry seed and overrides
        assert len(found) == 1, sorted(p.name for p in sweep.iterdir())
        results = json.loads(found[0].read_text())
        assert results["embedder"] == embedder and results["epochs"]["run"] == 1 and "test" in results["metrics"]
    files = sorted(p.name for p in (sweep / ".submitit").iterdir())
    assert not any("%" in name for name in files), files            # no literal %j folder (issue 56 item 11)
    jobs = sorted(name.split("_")[0] for name in files if name.endswith("_submitted.pkl"))
    assert len(jobs) == 2 and str(os.getpid()) not in jobs          # local job id = the job process's pid
    for job in jobs:                                                # each file named by its job id
        assert {f"{job}_0_result.pkl", f"{job}_0_log.out", f"{job}_0_log.err"} <= set(files)
    assert "Submitit 'local' sweep output dir" in done.stdout + done.stderr
    assert "| ner | glove | 1 | f1 |" in done.stdout and "| ner | glove_elmo | 1 | f1 |" in done.stdout
