"""Hydra finds each task's own YAML (``tasks/<name>/conf/{task,data,...}/*.yaml``, shipped inside the task's
folder) through this search-path plugin: Hydra imports every module under the ``hydra_plugins`` namespace package
and asks each SearchPathPlugin to extend the search path. The repository's conf/ comes first, so a file there wins
over a task's own file of the same group and name. It also gives ``hydra/launcher=submitit_local`` a folder without
the ``%j`` that submitit's local controller made literally (:func:`store_local_launcher`)."""
from __future__ import annotations

from pathlib import Path

from hydra._internal.sources_registry import SourcesRegistry
from hydra.core.config_search_path import ConfigSearchPath
from hydra.core.config_store import ConfigStore
from hydra.core.object_type import ObjectType
from hydra.plugins.config_source import ConfigLoadError, ConfigResult, ConfigSource
from hydra.plugins.search_path_plugin import SearchPathPlugin
from omegaconf import OmegaConf

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


class TaskConfSource(ConfigSource):
    """Every registered task's ``conf/`` folder as one config source (``elmo-tasks://``), in the registry's order
    (the first folder holding a file wins, as separate ``file://`` sources would). One source with an index made
    once instead of one ``file://`` source per task: Hydra asks every source on every lookup, and a source per task
    made each composition about 30% slower."""

    def __init__(self, provider: str, path: str) -> None:
        super().__init__(provider=provider, path=path)
        from elmo_bench.tasks.registry import conf_dirs  # lazy: only when Hydra composes

        self.files: dict[str, Path] = {}
        self.groups: dict[str, set[str]] = {"": set()}
        for root in conf_dirs():
            for found in sorted(Path(root).rglob("*")):
                relative = found.relative_to(root).as_posix()
                parent = relative.rpartition("/")[0]
                self.groups.setdefault(parent, set()).add(found.name)
                if found.is_dir():
                    self.groups.setdefault(relative, set())
                else:
                    self.files.setdefault(relative, found)

    @staticmethod
    def scheme() -> str:
        return "elmo-tasks"

    def load_config(self, config_path: str) -> ConfigResult:
        found = self.files.get(self._normalize_file_name(config_path))
        if found is None:
            raise ConfigLoadError(f"Config not found : {config_path} (in no task's conf/)")
        text = found.read_text(encoding="utf-8")
        return ConfigResult(config=OmegaConf.load(found), path=f"file://{found.parent}",
                            provider=self.provider, header=ConfigSource._get_header_dict(text[:512]))

    def available(self) -> bool:
        return bool(self.files)

    def is_group(self, config_path: str) -> bool:
        return config_path.strip("/") in self.groups

    def is_config(self, config_path: str) -> bool:
        return self._normalize_file_name(config_path) in self.files

    def list(self, config_path: str, results_filter: ObjectType | None) -> list[str]:
        files: list[str] = []
        group = config_path.strip("/")
        for name in self.groups.get(group, ()):
            self._list_add_result(files=files, file_path=f"{group}/{name}" if group else name, file_name=name,
                                  results_filter=results_filter)
        return sorted(set(files))


class TaskConfSearchPath(SearchPathPlugin):
    """Appends the tasks' conf folders (:class:`TaskConfSource`, every registered task that ships one,
    elmo_bench.tasks.registry) to the search path."""

    def manipulate_search_path(self, search_path: ConfigSearchPath) -> None:
        store_local_launcher()  # submitit_local without its literal %j folder (after the plugin scan stored its own)
        SourcesRegistry.instance().register(TaskConfSource)
        search_path.append(provider="elmo_bench-task", path="elmo-tasks://tasks")
