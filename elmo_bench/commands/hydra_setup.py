"""OmegaConf resolvers used by conf/: the repository and default data roots (elmo_bench.base.paths) and
run-directory suffixes; and the typed group schemas conf/ names (elmo_bench.engine.config_schema)."""
from __future__ import annotations

from omegaconf import OmegaConf

from elmo_bench.base.paths import DATA_ROOT, REPO
from elmo_bench.engine.config_schema import register_schemas
from elmo_bench.tasks.registry import declaration, package_dir

#: keys already spelled out in the run directory path
_IN_PATH = ("task", "embedder", "seed")
#: key prefixes that say where files go, not what is computed (a run's identity check covers the rest)
_NOT_IN_PATH = ("paths.", "hydra.")


def run_suffix(override_dirname: str) -> str:
    """The part of Hydra's override dirname not already in the path, as '/k=v,k=v' (or '')."""
    items = [item for item in override_dirname.split(",") if item and item.split("=", 1)[0] not in _IN_PATH
             and not item.split("=", 1)[0].lstrip("+~").startswith(_NOT_IN_PATH)]
    return ("/" + ",".join(items).replace("/", "_")) if items else ""


def register_resolvers() -> None:
    """Everything composing conf/ needs: the resolvers, and the schemas (``trainer/schema``, ``mix/schema``) that
    the group options' defaults lists name."""
    register_schemas()
    if not OmegaConf.has_resolver("repo_root"):
        OmegaConf.register_new_resolver("repo_root", lambda: str(REPO))
    if not OmegaConf.has_resolver("data_root"):
        OmegaConf.register_new_resolver("data_root", lambda: str(DATA_ROOT))
    if not OmegaConf.has_resolver("task_dir"):  # a task's own folder: its conf/data files name its samples by it
        OmegaConf.register_new_resolver("task_dir", lambda name: str(package_dir(declaration(name))))
    if not OmegaConf.has_resolver("run_suffix"):
        OmegaConf.register_new_resolver("run_suffix", run_suffix)
