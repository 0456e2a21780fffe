"""`python run.py` keeps its promise: overrides without `task=`/`experiment=` are the quickstart with those overrides;
the full default NER run needs `task=ner`. Checked through Hydra's compose API and `run.py --cfg job` (no training)."""
from __future__ import annotations

import pytest
import yaml
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from elmo_bench.commands.hydra_setup import register_resolvers
from elmo_bench.commands.main_args import main_args
from tests.conftest import REPO
from tests.warm_python import run_python

register_resolvers()
Q = "experiment=quickstart"


@pytest.mark.parametrize(("args", "expected"), [
    ([], [Q]),
    (["logger=disabled"], [Q, "logger=disabled"]),
    (["embedder=glove", "hydra.run.dir=/tmp/x"], [Q, "embedder=glove", "hydra.run.dir=/tmp/x"]),
    (["-m", "seed=1,2"], ["-m", Q, "seed=1,2"]),                          # a sweep over the quickstart
    # --cfg / --info show what would run; the override joins the user's overrides (argparse takes one run of them)
    (["logger=disabled", "--cfg", "job"], [Q, "logger=disabled", "--cfg", "job"]),
    (["--cfg", "job", "logger=disabled"], ["--cfg", "job", Q, "logger=disabled"]),
    (["--info"], [Q, "--info"]),                                         # not swallowed as --info's optional value
    (["--info", "config", "seed=2"], ["--info", "config", Q, "seed=2"]),
    (["seed=2", "-i", "defaults"], [Q, "seed=2", "-i", "defaults"]),
    (["--help"], [Q, "--help"]),
    (["-v"], [Q, "hydra.verbose=true"]),
    (["--verbose", "task=ner"], ["hydra.verbose=true", "task=ner"]),
    (["task=ner"], ["task=ner"]),                                        # the full NER run, asked for by name
    (["task=sst", "logger=disabled"], ["task=sst", "logger=disabled"]),
    (["-m", "experiment=table1", "seed=1"], ["-m", "experiment=table1", "seed=1"]),
    (["+experiment=quickstart"], ["+experiment=quickstart"]),
    (["--package", "task", "--cfg", "job"], [Q, "--package", "task", "--cfg", "job"]),  # a flag's value, not task=
    (["--version"], ["--version"]),                                      # about Hydra, not a job
    (["--hydra-help"], ["--hydra-help"]),
    (["-cn", "other"], ["-cn", "other"]),                                # another primary config: its own defaults
    (["--shell-completion", "install=bash"], ["--shell-completion", "install=bash"]),
])
def test_main_args(args, expected):
    assert main_args(["run.py", *args]) == ["run.py", *expected]


def _compose(overrides: list[str]):
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        return compose(config_name="config", overrides=overrides, return_hydra_config=True)


def test_overrides_without_a_job_compose_the_quickstart_with_them():
    cfg = _compose(main_args(["run.py", "logger=disabled", "seed=4"])[1:])
    assert cfg.data.name == "ner_sample" and cfg.trainer.max_epochs == 20  # conf/experiment/quickstart.yaml
    assert cfg.logger.mode == "disabled" and cfg.seed == 4
    assert cfg.hydra.mode.name == "MULTIRUN" and dict(cfg.hydra.sweeper.params) == {"embedder": "glove,glove_elmo"}


def test_task_ner_is_the_full_conll2003_run():
    cfg = _compose(main_args(["run.py", "task=ner", "logger=disabled"])[1:])
    resolved = OmegaConf.to_container(cfg, resolve=False)
    assert resolved["data"]["name"] == "conll2003" and resolved["data"]["train"].endswith("conll2003/eng.train")
    assert "sweeper" not in resolved["hydra"] or not resolved["hydra"]["sweeper"].get("params")


def _cfg_job(*args: str) -> dict:
    done = run_python(["run.py", *args, "--cfg", "job"], cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return yaml.safe_load(done.stdout)


def test_run_py_cfg_job_shows_the_quickstart_for_a_bare_override_and_ner_for_task_ner():
    quick = _cfg_job("logger=disabled")  # the overrides before --cfg, as a user types them
    assert quick["data"]["name"] == "ner_sample" and quick["logger"]["mode"] == "disabled"
    assert quick["trainer"]["max_epochs"] == 20
    full = _cfg_job("task=ner", "logger=disabled")
    assert full["data"]["name"] == "conll2003" and full["trainer"]["max_epochs"] != 20
