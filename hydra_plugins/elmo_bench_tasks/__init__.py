"""Hydra finds each task's own YAML (``tasks/<name>/conf/{task,data,...}/*.yaml``, shipped inside the task's
folder) through this search-path plugin: Hydra imports every module under the ``hydra_plugins`` namespace package
and asks each SearchPathPlugin to extend the search path. The repository's conf/ comes first, so a file there wins
over a task's own file of the same group and name. It also gives ``hydra/launcher=submitit_local`` a folder without
the ``%j`` that submitit's local controller made literally (elmo_bench.commands.hydra_setup.store_local_launcher)."""
from __future__ import annotations

from hydra.core.config_search_path import ConfigSearchPath
from hydra.plugins.search_path_plugin import SearchPathPlugin


class TaskConfSearchPath(SearchPathPlugin):
    """Appends ``file://<task folder>/conf`` for every registered task that ships one (elmo_bench.tasks.registry)."""

    def manipulate_search_path(self, search_path: ConfigSearchPath) -> None:
        from elmo_bench.commands.hydra_setup import store_local_launcher  # lazy: only when Hydra composes
        from elmo_bench.tasks.registry import conf_dirs  # lazy: only when Hydra composes

        store_local_launcher()  # submitit_local without its literal %j folder (after the plugin scan stored its own)

        for directory in conf_dirs():
            search_path.append(provider="elmo_bench-task", path=f"file://{directory}")
