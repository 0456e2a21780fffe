"""Hydra finds each task's own YAML (``tasks/<name>/conf/{task,data,...}/*.yaml``, shipped inside the task's
folder) through this search-path plugin: Hydra imports every module under the ``hydra_plugins`` namespace package
and asks each SearchPathPlugin to extend the search path. The repository's conf/ comes first, so a file there wins
over a task's own file of the same group and name. It also gives ``hydra/launcher=submitit_local`` a folder without
the ``%j`` that submitit's local controller made literally (:func:`store_local_launcher`)."""
from __future__ import annotations

from hydra.core.config_search_path import ConfigSearchPath
from hydra.core.config_store import ConfigStore
from hydra.plugins.search_path_plugin import SearchPathPlugin

#: ``hydra/launcher=submitit_local``'s folder. The plugin's default, ``${hydra.sweep.dir}/.submitit/%j``, is expanded
#: for each job's files but made as written by submitit's local controller (``folder.mkdir``), which left an empty
#: literal ``%j`` directory in every sweep; each file's name already starts with its job id
#: (``<job id>_0_log.out``, ``<job id>_0_result.pkl``), so the local launcher writes them straight into ``.submitit``
LOCAL_SUBMITIT_FOLDER = "${hydra.sweep.dir}/.submitit"


def store_local_launcher() -> None:
    """``hydra/launcher/submitit_local`` in Hydra's ConfigStore with LOCAL_SUBMITIT_FOLDER (the plugin's own node
    otherwise; nothing without the plugin). Called when Hydra builds its search path, after Hydra's plugin scan has
    stored the plugin's node, which this one replaces."""
    try:
        from hydra_plugins.hydra_submitit_launcher.config import LocalQueueConf  # lazy: an optional plugin
    except ImportError:
        return
    ConfigStore.instance().store(group="hydra/launcher", name="submitit_local",
                                 node=LocalQueueConf(submitit_folder=LOCAL_SUBMITIT_FOLDER), provider="elmo_bench")


class TaskConfSearchPath(SearchPathPlugin):
    """Appends ``file://<task folder>/conf`` for every registered task that ships one (elmo_bench.tasks.registry)."""

    def manipulate_search_path(self, search_path: ConfigSearchPath) -> None:
        from elmo_bench.tasks.registry import conf_dirs  # lazy: only when Hydra composes

        store_local_launcher()  # submitit_local without its literal %j folder (after the plugin scan stored its own)
        for directory in conf_dirs():
            search_path.append(provider="elmo_bench-task", path=f"file://{directory}")
