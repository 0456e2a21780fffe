"""Every committed probe record's recorded settings compose into today's config (issue 44, item 6): the old
commands' flat ``config`` (their flags) → the same flags given to today's generated alias (elmo_bench/commands/
probe_command.py) and its overrides → run.py's door (elmo_bench.commands.plan.job_run) → a ProbeRunConfig whose settings, seed and encoder equal what the record
says it ran with. A suite record also composes as ``probe=<its directory>`` (how ``experiment=probe_suite`` runs it)
to the same settings."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, Callable

import pytest

from elmo_bench.base.paths import DATA_ROOT
from elmo_bench.commands.compose import job_run
from elmo_bench.commands.probe_command import command_overrides, command_parser
from elmo_bench.engine.probe_config import ProbeRunConfig
from elmo_bench.probe.settings import dataset_settings

REPO = Path(__file__).resolve().parents[1]
ROOTS = ("docs/results/probe_suite", "docs/results/probes_controls", "docs/results/probes")
RECORDS = sorted(p for root in ROOTS for p in (REPO / root).rglob("results.json"))

#: the record's task → the command that wrote it
COMMANDS = {"pos_probe": "probe-pos", "structural_probe": "probe-structural", "mdl_probe": "probe-mdl",
            "wsd": "probe-wsd"}
#: recorded flags the test gives otherwise: the encoder (from the record's identity, :func:`encoder_overrides`),
#: files of this machine, the run directory
LEFT_OUT = ("options", "weights", "cache_dir", "out", "model", "encoder", "random_init", "random_seed")
#: a recorded flag → the probe setting it became (with how its value reads now); run-level flags apart
RENAMED = {"tag_column": "tags", "no_glove": "glove"}
RUN_LEVEL = ("seed", "max_segment", "random_init", "random_seed")
PATHS = ("data_dir", "semcor", "eval_root", "wordnet", "wordnet_work")


def comma_list(text: Any, cast: Callable[[str], Any]) -> Any:
    return None if text is None else [cast(t) for t in str(text).split(",") if t.strip()]


def expected_setting(flag: str, value: Any, default: Any) -> Any:
    """The value the recorded ``flag`` means for today's setting (its default's type decides lists)."""
    if flag == "no_glove":
        return not value
    if flag in ("seeds", "layers"):
        return comma_list(value, int)
    if flag == "l2_grid":
        return comma_list(value, float)
    if flag in ("rows", "sets") or (flag == "probe" and isinstance(default, list)):
        return comma_list(value, str)
    return value


def recorded(record: dict[str, Any]) -> dict[str, Any]:
    """The record's flags as this machine reads them (paths: the repository-relative ones the records now hold,
    resolved in the repository; a path the migration dropped: None, the default)."""
    out = {}
    for key, value in record["config"].items():
        if key in PATHS and isinstance(value, str) and not value.startswith("/"):
            value = str((REPO / value).resolve())
        out[key] = value
    return out


def command_line(command: str, flags: dict[str, Any]) -> list[str]:
    """The recorded flags given again to today's ``command`` (``--out`` where it is required)."""
    actions = command_parser(command)._option_string_actions
    argv = ["--out", "unused"] if actions["--out"].required else []
    for key, value in flags.items():
        flag = "--" + key.replace("_", "-")
        if key in LEFT_OUT or flag not in actions or value is None or value is False:
            continue
        argv += [flag] if actions[flag].nargs == 0 else [flag, str(value)]
    return argv


def encoder_overrides(record: dict[str, Any]) -> list[str]:
    """The encoder the record ran: the biLM (its random twin), or the transformers model its identity names."""
    config, ident = record["config"], record.get("encoder") or {}
    if ident.get("kind") == "transformers":
        out = ["encoder=transformers", f"encoder.path={ident['model']}", f"encoder.pooling={ident['pooling']}"]
        if config.get("random_init"):
            out += [f"encoder.random_init={config['random_init']}", f"encoder.random_seed={config['random_seed']}"]
        return out
    if config.get("random_init"):
        return ["bilm=random", f"bilm.random_init={config['random_init']}",
                f"bilm.random_seed={config['random_seed']}"]
    return []


def compose(overrides: list[str]) -> ProbeRunConfig:
    run = job_run(overrides, check=True, files=False)
    assert isinstance(run, ProbeRunConfig), overrides
    return run


def check_settings(record: dict[str, Any], flags: dict[str, Any], run: ProbeRunConfig, where: str) -> None:
    settings = dataclasses.asdict(run.probe.settings)
    defaults = {f.name: f.default if f.default is not dataclasses.MISSING else f.default_factory()   # type: ignore
                for f in dataclasses.fields(run.probe.settings)}
    compared = 0
    for flag, value in record["config"].items():
        key = RENAMED.get(flag, flag)
        if key not in settings or flag in RUN_LEVEL:
            continue
        if flag in PATHS:                          # null: the default location; else the recorded path
            given, got = flags[flag], settings[key]       # a path the migration dropped: the default
            given = defaults_path(flag, defaults, run) if given is None else given
            if got is None:
                assert given is None or same_path(given, defaults_path(flag, defaults, run)), (where, flag, value)
            else:
                assert same_path(got, given), (where, flag, got, value)
        else:
            want = expected_setting(flag, value, defaults[key])
            assert settings[key] == want, (where, flag, settings[key], want)
        compared += 1
    assert compared >= 3, where
    if "seed" in record["config"]:
        assert run.runtime.seed == record["config"]["seed"], where


def same_path(a: Any, b: Any) -> bool:
    return a is not None and b is not None and Path(a).resolve() == Path(b).resolve()


def defaults_path(flag: str, defaults: dict[str, Any], run: ProbeRunConfig) -> Any:
    """Where a null path setting points: a data directory below the data root, else the setting's default."""
    below = dataset_settings(type(run.probe.settings))
    return DATA_ROOT / below[flag] if flag in below else defaults.get(flag)


def check_encoder(record: dict[str, Any], run: ProbeRunConfig, where: str) -> None:
    config, ident = record["config"], record.get("encoder") or {}
    resolved = run.resolved
    if ident.get("kind") == "transformers":
        assert resolved["encoder"]["path"] == ident["model"], where
        assert (resolved["encoder"].get("random_init") or None) == config.get("random_init"), where
    else:
        bilm = resolved.get("bilm") or {}
        assert (bilm.get("random_init") or None) == config.get("random_init"), where


@pytest.mark.parametrize("path", RECORDS, ids=[str(p.relative_to(REPO / "docs/results")) for p in RECORDS])
def test_recorded_settings_compose_through_the_door(path):
    record = json.loads(path.read_text())
    command = COMMANDS[record["config"]["choices"]["task"]]
    flags = recorded(record)
    args = command_parser(command).parse_args(command_line(command, flags))
    where = str(path.relative_to(REPO))
    overrides = [*command_overrides(command, args), *encoder_overrides(record)]
    run = compose(overrides)
    check_settings(record, flags, run, where)
    check_encoder(record, run, where)
    name = path.parent.name
    if "probe_suite" in where:                     # the suite runs it as probe=<its directory>: the same settings
        suite = compose([f"probe={name}", *overrides[1:]])
        assert suite.probe.name == name
        assert dataclasses.asdict(suite.probe.settings) == dataclasses.asdict(run.probe.settings), where


def test_every_committed_record_is_covered():
    names = {str(p.relative_to(REPO / "docs/results")) for p in RECORDS}
    assert {"probes/pos_v2_final_4000/results.json", "probes/wsd_v2_final/results.json",
            "probe_suite/bilm_v2/structural/results.json",
            "probes_controls/bilm_v2_trained/results.json"} <= names
    assert len(names) == 31
