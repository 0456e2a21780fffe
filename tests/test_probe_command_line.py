"""``elmo-bench probe NAME --setting value`` (issue 55 item 3): every registered probe gets flags generated from its
settings dataclass (help from the field's comment, default from the dataclass, choices and range from the field),
and a command line runs the probe as ``python run.py probe=NAME probe.<setting>=<value>`` does. A probe's own
command (``probe-pos``) is declared, not written; the code that generates them names no probe."""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from elmo_bench.base.errors import ConfigError
from elmo_bench.base.ranges import ranged
from elmo_bench.commands.compose import job_run
from elmo_bench.commands.probe_command import command_overrides, command_parser, parse
from elmo_bench.probe.command_line import field_comments, probe_commands, setting_flags
from elmo_bench.probe.declaration import ProbeCommand
from elmo_bench.probe.registry import registered_probes
from elmo_bench.probe.settings import choice
from tests.conftest import FIXTURES, needs_fixtures

REPO = Path(__file__).resolve().parents[1]
PROBES = sorted(registered_probes())


@dataclass(frozen=True)
class Base:
    # a block comment above a field is not its help
    depth: int = ranged(3, int, 1)          # how deep
    path: str | None = "/x"                 # where it reads; null: nowhere


@dataclass(frozen=True)
class Child(Base):
    depth: int = ranged(5, int, 1)
    kind: str = choice("a", ("a", "b"))     # one of two kinds, a comment
    #                                         that goes on here
    # and this one is the next field's block comment
    names: list[str] = field(default_factory=lambda: ["p", "q"])
    on: bool = True                         # the switch


def test_a_fields_comment_is_its_help_and_a_redefined_field_keeps_its_bases():
    assert field_comments(Child) == {"depth": "how deep", "path": "where it reads; null: nowhere",
                                     "kind": "one of two kinds, a comment that goes on here", "on": "the switch"}
    flags = {f.flag: f for f in setting_flags(Child, {"path": "--from"})}
    assert list(flags) == ["--depth", "--from", "--no-from", "--kind", "--names", "--no-on"]
    assert flags["--depth"].help == "probe.depth: how deep (default 5; an integer >= 1)"
    assert flags["--kind"].choices == ("a", "b") and flags["--names"].kind == "list"
    assert flags["--no-on"].help == "probe.on=false: the switch (default true)"
    assert [f.flag for f in setting_flags(Child, {"path": None})] == ["--depth", "--kind", "--names", "--no-on"]


def _settings(overrides: list[str]) -> dict:
    return dataclasses.asdict(job_run(overrides, check=True, files=False).probe.settings)


@pytest.mark.parametrize("name", PROBES)
def test_every_probe_has_a_command_whose_defaults_are_run_pys(name):
    parser = command_parser("probe", [name])
    settings = registered_probes()[name].settings
    for spec in dataclasses.fields(settings):                   # every setting has a flag, with its help
        assert any(a.dest == spec.name and "probe." + spec.name in a.help for a in parser._actions), spec.name
    args = parse("probe", [name])
    overrides = command_overrides("probe", args, name)
    assert overrides[0] == f"probe={name}" and not any(o.startswith("probe.") for o in overrides)
    try:
        expected = _settings([f"probe={name}"])
    except ConfigError as refused:                             # a probe that needs a setting: refused the same way
        with pytest.raises(ConfigError, match=str(refused).split(":")[0]):
            _settings(overrides)
        return
    assert _settings(overrides) == expected


@pytest.mark.parametrize("argv, overrides", [
    (["structural", "--max-epochs", "3", "--layers", "0,2", "--punct", "upos", "--seed", "5"],
     ["probe=structural", "probe.max_epochs=3", "probe.layers=[0,2]", "probe.punct=upos", "seed=5"]),
    (["pos_controls", "--seeds", "1,2,3", "--max-train-sentences", "1000", "--no-control", "--no-glove", "--tol",
      "0.01"], ["probe=pos_controls", "probe.seeds=[1,2,3]", "probe.max_train_sentences=1000", "probe.control=false",
                "probe.glove=false", "probe.tol=0.01"]),
    (["wsd", "--sets", "senseval2,ALL", "--no-wordnet", "--max-segment", "64"],
     ["probe=wsd", "probe.sets=[senseval2,ALL]", "probe.wordnet=null", "max_segment=64"]),
])
def test_a_command_line_runs_what_the_same_overrides_run(argv, overrides):
    composed = job_run(command_overrides("probe", parse("probe", argv), argv[0]), check=True, files=False)
    direct = job_run([*overrides, "device=cpu"], check=True, files=False)
    assert dataclasses.asdict(composed.probe.settings) == dataclasses.asdict(direct.probe.settings)
    assert (composed.runtime.seed, composed.runtime.max_segment) == (direct.runtime.seed, direct.runtime.max_segment)


@pytest.mark.parametrize("argv, says", [
    (["structural", "--max-epochs", "0"], "argument --max-epochs: expected an integer >= 1, found 0"),
    (["structural", "--punct", "ppos"], "argument --punct: invalid choice: 'ppos'"),
    (["nope"], "argument NAME: invalid choice: 'nope'"),
    ([], "the following arguments are required: NAME"),
])
def test_a_bad_command_line_is_one_usage_line(capsys, argv, says):
    from elmo_bench.commands.main import main

    assert main(["probe", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and says in err[0] and err[0].startswith("error: elmo-bench probe")


def test_a_probes_own_command_is_declared_and_a_setting_may_not_take_a_common_flag(monkeypatch):
    ridge = registered_probes()["ridge"]
    monkeypatch.setitem(registered_probes(), "ridge_copy", dataclasses.replace(
        ridge, name="ridge_copy", command=ProbeCommand("probe-ridge-copy", "a copy", flags={"tags": "--device"})))
    assert probe_commands()["probe-ridge-copy"].name == "ridge_copy"
    with pytest.raises(ConfigError, match="probe ridge_copy: the flag --device of one of its settings"):
        command_parser("probe-ridge-copy")
    monkeypatch.setitem(registered_probes(), "ridge_copy", dataclasses.replace(
        ridge, name="ridge_copy", command=ProbeCommand("probe-ridge-copy", "a copy", flags={"tags": "--column"})))
    args = command_parser("probe-ridge-copy").parse_args(["--column", "upos"])
    assert command_overrides("probe-ridge-copy", args)[:2] == ["probe=ridge_copy", "probe.tags='upos'"]


def test_the_generated_command_line_names_no_probe():
    from tests.plugin_names import probe_places

    mine = ("elmo_bench/commands/", "elmo_bench/probe/command_line.py", "elmo_bench/encoders/cli_options.py")
    assert [str(p) for p in probe_places() if p.path.startswith(mine)] == []
    assert not list((REPO / "elmo_bench" / "probe").glob("*_cli.py"))          # no hand-written probe parser


@needs_fixtures
def test_the_generic_command_prints_what_the_alias_prints(tmp_path, capsys):
    from elmo_bench.commands.main import main
    from tests.probe_alias_contract import GOLDEN, key_paths
    from tests.test_structural_probe import _data

    argv = ["probe", "structural", "--options", str(FIXTURES / "options.json"), "--weights",
            str(FIXTURES / "lm_weights.hdf5"), "--cache-dir", str(tmp_path / "cache"), "--no-progress",
            "--data-dir", str(_data(tmp_path)), "--max-epochs", "2", "--seed", "0"]
    assert main(argv) == 0
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert key_paths(printed) == json.loads(GOLDEN.read_text())["printed"]["probe-structural"]
