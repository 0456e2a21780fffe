"""Issue 35: one door takes the composed config. Every function in ``elmo_bench/`` and ``tasks/`` whose parameter is
a DictConfig, or a ``cfg`` / ``config`` / ``*_cfg`` / ``*_config`` that is an untyped mapping (``Any``, ``dict``,
``Mapping`` or no annotation), is listed here; the door (engine.config_door, engine.run_config,
pretrain.pretrain_config, and the reading of a stored run's config: run_identity.StoredRun.of) and Hydra's own
callback API may; the rest is an
explicit list of functions still to convert, which may only shrink: a new one fails this test, and so does a
converted one left on the list.

Not counted: a task's group mappings (``Task.read(data_cfg)``, ``Task.build_head(head_cfg)``, the readers'
``data_cfg``), the plug-in contract of tasks/api.py, and typed settings objects (a ``cfg: TrainerConfig``)."""
from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO

ROOTS = ("elmo_bench", "tasks")
CONFIG_NAMES = ("cfg", "config")
CONFIG_SUFFIXES = ("_cfg", "_config")
#: the plug-in contract of tasks/api.py: a task reads its ``data`` group and builds its head from ``task.head``
GROUP_CONTRACT = ("data_cfg", "head_cfg")
UNTYPED = ("Any", "dict", "Mapping")

#: the door: the one place a composed config becomes a RunConfig (and its parts' constructors)
DOOR = {
    "elmo_bench/engine/config_door.py::resolve_run_config",
    "elmo_bench/engine/config_door.py::run_config",
    "elmo_bench/engine/run_config.py::Runtime.of",
    "elmo_bench/engine/run_config.py::RunConfig.of",
    "elmo_bench/engine/config_door.py::is_probe_job",      # which of the two: a task run or a probe run
    "elmo_bench/engine/probe_config.py::ProbeRunConfig.of",  # a probe run's config made typed (issue 44)
    "elmo_bench/engine/run_config.py::_group",
    "elmo_bench/engine/run_config.py::check_run",            # the parts' checks on a partial config (tests)
    "elmo_bench/engine/run_config.py::recorded_config",      # the resolved config as results.json records it
    "elmo_bench/engine/config_check.py::check_added_keys",   # the door's +key check: override keys vs the config
    "elmo_bench/engine/config_check.py::_has_key",
    # the reading of a file: a run.json's or an older results.json's stored config (what made a run directory)
    "elmo_bench/engine/run_records.py::StoredRun.of",
    # the door's sweep over encoder kinds (issue 56): a ++encoder.<key> that only another swept kind has leaves the
    # composed config before it is made typed
    "elmo_bench/engine/encoder_sweep.py::drop_foreign_keys",
    # the door's check of a sweep's checkpoint series (issue 57): run.py's sweep check compares every composed job's
    # checkpoint (by content, and its kind's architecture) before any job is launched or made typed
    "elmo_bench/commands/checkpoint_series.py::checkpoint_of",
    "elmo_bench/commands/checkpoint_series.py::_series_key",
    # the one place a pretrain mapping (the composed group, bilm=adapted's recipe) becomes a PretrainConfig
    "elmo_bench/pretrain/pretrain_config.py::PretrainConfig.of",
    "elmo_bench/pretrain/pretrain_config.py::PretrainModel.of",
}
#: Hydra calls these with its config (hydra.experimental.callback.Callback's signatures), and run.py's records of
#: Hydra's own files (.hydra/config.yaml, hydra.yaml) take the job's DictConfig as Hydra made it
HYDRA_API = {
    "elmo_bench/commands/hydra_records.py::HydraRecord.of",
    "elmo_bench/commands/hydra_callbacks.py::ResultsTable.on_job_end",
    "elmo_bench/commands/hydra_callbacks.py::ResultsTable.on_multirun_end",
}
#: still to convert (issue 35 item 1): shrink this list, never grow it
TO_CONVERT: set[str] = set()  # empty since the pretrain group and run identity were typed
#: not a run config: an ELMoForManyLangs model's own config.json (a model file)
MODEL_FILES = {"elmo_bench/encoders/manylangs.py::_CharCnnEmbedder.__init__"}


def takes_config(arg: ast.arg) -> bool:
    """A DictConfig parameter, or a ``cfg`` / ``config`` one that is an untyped mapping."""
    annotation = ast.unparse(arg.annotation) if arg.annotation is not None else ""
    if "DictConfig" in annotation:
        return True
    named = arg.arg in CONFIG_NAMES or (arg.arg.endswith(CONFIG_SUFFIXES) and arg.arg not in GROUP_CONTRACT)
    return named and (not annotation or any(word in annotation for word in UNTYPED))


def config_takers(source: str, where: str) -> set[str]:
    """``where::[Class.]function`` for every function of ``source`` that takes a config (:func:`takes_config`)."""
    found: set[str] = set()

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                args = child.args
                if any(takes_config(a) for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]):
                    found.add(f"{where}::{prefix}{child.name}")
                visit(child, f"{prefix}{child.name}.")

    visit(ast.parse(source), "")
    return found


def every_config_taker(root: Path = REPO) -> set[str]:
    found: set[str] = set()
    for base in ROOTS:
        for path in sorted((root / base).rglob("*.py")):
            found |= config_takers(path.read_text(encoding="utf-8"), path.relative_to(root).as_posix())
    return found


def test_only_the_door_takes_the_composed_config():
    found = every_config_taker()
    new = sorted(found - DOOR - HYDRA_API - MODEL_FILES - TO_CONVERT)
    assert not new, f"functions taking a DictConfig or a config mapping outside the door: {new}; take RunConfig parts"
    converted = sorted(TO_CONVERT - found)
    assert not converted, f"converted (or renamed): remove from TO_CONVERT: {converted}"
    assert DOOR <= found and HYDRA_API <= found and MODEL_FILES <= found


def test_the_guard_sees_a_planted_config_taker():
    planted = ("from omegaconf import DictConfig\n"
               "def read(cfg: DictConfig) -> None: ...\n"
               "class A:\n    def build(self, config: dict) -> None: ...\n"
               "def head(cfg) -> None: ...\n"
               "def model(model_cfg: Mapping) -> None: ...\n"
               "def task_read(self, data_cfg: Mapping) -> None: ...\n"
               "def typed(cfg: 'TrainerConfig', run: 'RunConfig') -> None: ...\n")
    assert config_takers(planted, "x.py") == {"x.py::read", "x.py::A.build", "x.py::head", "x.py::model"}


def test_the_engine_plan_and_evaluate_take_no_dictconfig():
    """The modules the issue names are converted: the engine's steps, plan's pricing, modes and evaluate take
    RunConfig or its parts."""
    found = every_config_taker()
    for module in ("elmo_bench/engine/experiment.py", "elmo_bench/engine/evaluate.py", "elmo_bench/commands/plan.py",
                   "elmo_bench/commands/modes.py", "elmo_bench/engine/loop.py"):
        assert not [name for name in found if name.startswith(module)], module
