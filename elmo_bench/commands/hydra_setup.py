"""OmegaConf resolvers used by conf/: the repository and default data roots (elmo_bench.base.paths) and
run-directory suffixes; and the typed group schemas conf/ names (elmo_bench.engine.config_schema)."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any, Callable, Sequence

from omegaconf import OmegaConf

from elmo_bench.base.paths import CONF_DIR, DATA_ROOT, REPO
from elmo_bench.commands.row_names import row_layer, row_mode
from elmo_bench.encoders.kinds import default_kind, encoder_kinds
from elmo_bench.encoders.model_files import directory_hash, file_hash, is_model_directory
from elmo_bench.encoders.settings import path_like
from elmo_bench.engine.config_schema import register_schemas
from elmo_bench.engine.encoder_sweep import foreign_items
from elmo_bench.engine.live_identity import fingerprint
from elmo_bench.tasks.registry import declaration, package_dir

#: keys already spelled out in the run directory path
_IN_PATH = ("task", "embedder", "seed")
#: key prefixes that say where files go, not what is computed (a run's identity check covers the rest)
_NOT_IN_PATH = ("paths.", "hydra.")


#: an override value longer than this is shortened in the run directory's name (its first 16 characters and a hash)
MAX_VALUE_IN_NAME = 40


def short_value(value: str) -> str:
    """``value`` itself up to MAX_VALUE_IN_NAME characters (every existing run keeps its name); longer, its first 16
    characters, ``~`` and 10 hex digits of its sha256: a long ``encoder.path`` cannot overflow the file system's
    name limit, and two different values never share a name."""
    if len(value) <= MAX_VALUE_IN_NAME:
        return value
    return f"{value[:16]}~{hashlib.sha256(value.encode('utf-8')).hexdigest()[:10]}"


def _items(override_dirname: str) -> list[str]:
    """Hydra's override dirname split into its ``k=v`` items (a list value's commas stay inside its item)."""
    items: list[str] = []
    for piece in override_dirname.split(","):
        last = items[-1] if items else ""
        if last.count("[") + last.count("{") > last.count("]") + last.count("}"):  # inside a list or dict value
            items[-1] += "," + piece
        else:
            items.append(piece)
    return items


def same_run_spelling(items: list[str]) -> list[str]:
    """Overrides with the aliases of one run spelled one way, sorted as Hydra sorts them: ``mix=lexical`` and
    ``mix=cumulative,mix.layer=0`` are ``mix=layer,mix.layer=0`` (conf/mix/lexical.yaml, canonical_mix)."""
    layer = next((i.split("=", 1)[1] for i in items if i.startswith("mix.layer=")), None)
    if "mix=lexical" in items or ("mix=cumulative" in items and layer == "0"):
        items = [i for i in items if i not in ("mix=lexical", "mix=cumulative")] + ["mix=layer"]
        items += [] if layer is not None else ["mix.layer=0"]
        return sorted(items)
    return items


def run_suffix(override_dirname: str, *, by_content: Callable[[str, str], bool] | None = None) -> str:
    """The part of Hydra's override dirname not already in the path, as '/k=v,k=v' (or ''); a value naming a file or
    directory as its label (path_label: its name and a hash of its content, never where it lives), any other value
    longer than MAX_VALUE_IN_NAME characters shortened (short_value). ``by_content(key, value)``: which values are
    named by their label (default names_a_path); elmo_bench.identity.history passes its rule of the older names."""
    labelled = by_content or names_a_path
    items = [item for item in _items(override_dirname) if item and item.split("=", 1)[0] not in _IN_PATH
             and not item.split("=", 1)[0].lstrip("+~").startswith(_NOT_IN_PATH)]
    items = [f"{key}={_shown_value(key.lstrip('+~'), value, labelled)}" if sep else key
             for key, sep, value in (item.partition("=") for item in same_run_spelling(items))]
    return ("/" + ",".join(items).replace("/", "_")) if items else ""


def _shown_value(key: str, value: str, labelled: Callable[[str, str], bool]) -> str:
    """An override's value in the name: a ``labelled`` path as its label (each of a list value too), else
    short_value."""
    if labelled(key, value):
        return path_label(value)
    parts = value[1:-1].split(",") if value.startswith("[") and value.endswith("]") else []
    if any(labelled(key, part) for part in parts):
        return "[" + ",".join(path_label(p) if labelled(key, p) else p for p in parts) + "]"
    return short_value(value)


#: keys whose value is a model's location (a hub name stays a name: :func:`elmo_bench.encoders.settings.path_like`)
_MODEL_PATH_KEYS = ("encoder.path",)


def names_a_path(key: str, value: str) -> bool:
    """True when an override's value names a file or directory: an absolute or home-relative path, a model
    path (``encoder.path`` that is not a hub name), or a relative path with a ``/`` that exists here."""
    if value.startswith(("/", "~/", "\\")) or (len(value) > 2 and value[1] == ":" and value[2] in "/\\"):
        return True
    if key in _MODEL_PATH_KEYS:
        return path_like(value)
    return ("/" in value or "\\" in value) and os.path.lexists(value)


def path_label(value: str) -> str:
    """A file or directory named by what it is, not where it is: ``<its name>~<10 hex digits>`` of its content
    (a Hugging Face model directory: the hash its encoder identity records, over weights, config and tokenizer; a
    file: sha256 of its bytes; another directory: its files' names and sizes). A moved model keeps its label; two
    models of one name and other content get two. A path that does not exist: the hash of the value (the run's
    own checks refuse it before anything is written)."""
    path = Path(value).expanduser()
    name = path.name or "root"
    if is_model_directory(path):
        digest = directory_hash(path)
    elif path.is_file():
        digest = file_hash(path)
    elif path.is_dir():
        digest = fingerprint(path).split(":", 1)[1]
    else:
        digest = hashlib.sha256(value.encode("utf-8")).hexdigest()
    return f"{name[:MAX_LABEL_NAME]}~{digest[:10]}"


#: a path's label keeps this many characters of its file or directory name
MAX_LABEL_NAME = 40


#: probe-run override keys that name a file or directory: the run's identity holds their content instead, so a
#: moved model or dataset keeps its run directory (and no machine's absolute path is in a directory's name); an
#: encoder kind's own (its ``run_keys``) too
_PROBE_PATHS = ("encoder.path", "probe.data_dir", "probe.semcor", "probe.eval_root",
                "probe.wordnet", "probe.wordnet_work", "probe", "encoder")


def encoder_label(root: Any) -> str:
    """A probe run's encoder in its directory name: the biLM's name (shipped, random, custom, ...), else the kind
    and the model's file or directory name (never its absolute path)."""
    encoder = root.get("encoder") or {}
    kind = str(encoder.get("kind") or default_kind().name)
    declared = encoder_kinds().get(kind)   # an unknown kind: the door refuses it, with its own line
    if declared is not None and declared.run_label is not None:
        return declared.run_label(root)
    model = str(encoder.get("path") or encoder.get("_target_") or "").rstrip("/")
    name = model.replace("\\", "/").rsplit("/", 1)[-1]
    return f"{kind}-{short_value(name)}".replace("/", "_") if name else str(kind)


def _probe_paths() -> tuple[str, ...]:
    """``_PROBE_PATHS`` and the keys of its own groups that each encoder kind leaves out of the name
    (``run_keys``: the biLM's files, and its group's choice, already in its label)."""
    return (*_PROBE_PATHS, *(key for kind in encoder_kinds().values() for key in kind.run_keys))


def probe_suffix(override_dirname: str) -> str:
    """The probe-run overrides not already in the path and naming no file (``_PROBE_PATHS``), as run_suffix; a
    ``++probe.<key>`` (how run.py passes a probe setting in a sweep over probes) named as ``probe.<key>``."""
    items = [item.lstrip("+") for item in _items(override_dirname)
             if item and item.split("=", 1)[0].lstrip("+~") not in _probe_paths()]
    return run_suffix(",".join(sorted(items)))


def run_path(override_dirname: str, *, _root_: Any) -> str:
    """A single run's directory below ``paths.results_dir``: ``runs/<task>/<embedder>-seed<s><suffix>``, or for a
    probe run ``probes/<probe>/<encoder>-seed<s><suffix>`` (conf/config.yaml's hydra.run.dir)."""
    return sweep_path(override_dirname, _root_=_root_, runs="runs/")


def sweep_path(override_dirname: str, *, _root_: Any, runs: str = "",
               by_content: Callable[[str, str], bool] | None = None) -> str:
    """A sweep job's subdirectory: ``<task>/<embedder>-seed<s><suffix>`` (``by_content`` as run_suffix's), or
    ``probes/<probe>/...``; a ``++encoder.<key>`` that the job's encoder kind lacks (a sweep over encoder kinds:
    engine.encoder_sweep) is not named, as the job does not use it."""
    items = _items(override_dirname)
    foreign = foreign_items(items, (_root_.get("encoder") or {}).get("kind"))
    override_dirname = ",".join(item for item in items if item not in foreign) if foreign else override_dirname
    probe = _root_.get("probe")
    if probe is not None and probe.get("name"):
        return f"probes/{probe.name}/{encoder_label(_root_)}-seed{_root_.seed}{probe_suffix(override_dirname)}"
    suffix = run_suffix(override_dirname, by_content=by_content)
    return f"{runs}{_root_.task.name}/{_root_.embedder.name}-seed{_root_.seed}{suffix}"


def register_task_search_path() -> None:
    """Hydra's search path to each task's own conf/ (hydra_plugins.elmo_bench_tasks), registered by hand when Hydra's
    discovery missed it: Hydra walks the ``hydra_plugins`` namespace package's folders, and under ``pip install -e``
    that namespace is an editable finder's path hook, not a folder, so the ``elmo-bench`` console script found no
    user task folder (``Could not find 'task/tiny'``) while ``python run.py`` (the checkout on sys.path) did."""
    from hydra.core.plugins import Plugins
    from hydra.plugins.search_path_plugin import SearchPathPlugin

    from hydra_plugins.elmo_bench_tasks import TaskConfSearchPath  # lazy: hydra

    plugins = Plugins.instance()
    if TaskConfSearchPath not in plugins.discover(SearchPathPlugin):
        plugins.register(TaskConfSearchPath)


def register_resolvers() -> None:
    """Everything composing conf/ needs: the resolvers, the task folders' search path, and the schemas
    (``trainer/schema``, ``mix/schema``) that the group options' defaults lists name."""
    register_task_search_path()
    register_schemas()
    if not OmegaConf.has_resolver("repo_root"):
        OmegaConf.register_new_resolver("repo_root", lambda: str(REPO))
    if not OmegaConf.has_resolver("data_root"):
        OmegaConf.register_new_resolver("data_root", lambda: str(DATA_ROOT))
    if not OmegaConf.has_resolver("task_dir"):  # a task's own folder: its conf/data files name its samples by it
        OmegaConf.register_new_resolver("task_dir", lambda name: str(package_dir(declaration(name))))
    if not OmegaConf.has_resolver("run_suffix"):
        OmegaConf.register_new_resolver("run_suffix", run_suffix)
    for name, resolver in (("run_path", run_path), ("sweep_path", sweep_path), ("row_mode", row_mode),
                           ("row_layer", row_layer)):
        if not OmegaConf.has_resolver(name):
            OmegaConf.register_new_resolver(name, resolver)


def compose_config(overrides: Sequence[str]) -> Any:
    """conf/config.yaml composed with ``overrides`` (Hydra node included), inside a running Hydra app (run.py's
    job: its config loader) or outside one (the compose API)."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.types import RunMode

    register_resolvers()
    if GlobalHydra.instance().is_initialized():
        loader = GlobalHydra.instance().config_loader()
        return loader.load_configuration(config_name="config", overrides=list(overrides), run_mode=RunMode.RUN)
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return compose("config", overrides=list(overrides), return_hydra_config=True)


def forced_base(overrides: Sequence[str]) -> dict[str, Any] | None:
    """The config (plain, unresolved, no Hydra node) composed without the ``++key=value`` overrides, which the
    door (engine.config_door) needs to tell a ``++key`` the config knows from one it does not; None without any."""
    if not any(o.startswith("++") for o in overrides):
        return None
    cfg = compose_config([o for o in overrides if not o.startswith("++")])
    plain = OmegaConf.to_container(cfg)
    plain.pop("hydra", None)
    return plain
