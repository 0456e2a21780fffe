"""Composing run configs for engine tests: the real conf/ (plus tests/tiny_task/conf for the test-only task)."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from hydra import compose, initialize_config_dir
from omegaconf import DictConfig, open_dict

from elmo_bench.commands.hydra_setup import register_resolvers
from tests.conftest import REPO
from tests.tiny_task import config as tiny_config

TINY_CONF = REPO / "tests" / "tiny_task" / "conf"
TINY_TARGET = "tests.tiny_task.task:TinyTask"
#: the tiny task's own declaration, as the registry would fill it in for the package tests.tiny_task
TINY = replace(tiny_config.TASK, package="tests.tiny_task")
register_resolvers()


def compose_run(tmp_path: Path, *overrides: str, tiny: bool = True) -> DictConfig:
    """A resolved-on-demand run config: the tiny task (or whatever ``overrides`` pick), fixture biLM, no logging."""
    base = [f"hydra.searchpath=[file://{TINY_CONF}]", "task=tiny"] if tiny else []
    with initialize_config_dir(config_dir=str(REPO / "conf"), version_base="1.3"):
        cfg = compose("config", overrides=[*base, "bilm=fixture", "logger=disabled", "progress=false",
                                           f"paths.cache_dir={tmp_path / 'cache'}", *overrides])
    with open_dict(cfg):
        cfg.data.name = cfg.data.get("name") or "test"
    return cfg
