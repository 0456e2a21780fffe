"""The contract of the ``elmo-bench probe-*`` aliases (issue 55 item 3): each alias's flags (option strings, action,
choices, required), the run each command line composes to (the probe's settings, seed, max_segment, encoder and
run-time keys) and the JSON keys each prints on a tiny input. ``python tests/probe_alias_contract.py`` writes
tests/golden/probe_aliases.json (only when a contract changes on purpose); it was written from the hand-written
parsers (elmo_bench/probe/*_cli.py, commit f64943f) before they were generated from the probe declarations, and
tests/test_probe_alias_contract.py checks that today's generated commands still give the same.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any, Sequence

REPO = Path(__file__).resolve().parents[1]
GOLDEN = REPO / "tests" / "golden" / "probe_aliases.json"
ALIASES = ("probe-pos", "probe-structural", "probe-mdl", "probe-wsd", "probe-suite")
#: command lines (after the command's name) whose composed run is compared: the defaults and every flag changed
ARGV: dict[str, list[list[str]]] = {
    "probe-pos": [[], ["--tag-column", "upos", "--max-train-sentences", "7", "--max-dev-sentences", "3",
                       "--l2-grid", "1e-1,1e-2", "--max-iter", "20", "--tol", "0.001", "--no-glove", "--probe",
                       "linear,mlp1", "--control", "--seeds", "1,2", "--hidden", "8", "--rank", "5", "--dropout",
                       "0.1", "--weight-decay", "0.01", "--max-epochs", "3", "--batch-sentences", "4", "--rows",
                       "layer_0,average", "--device", "cpu", "--threads", "2", "--no-progress"],
                  ["--random-init", "lstm", "--random-seed", "3"]],
    "probe-structural": [[], ["--max-train-sentences", "9", "--rank", "4", "--punct", "upos", "--layers", "0,2",
                              "--max-epochs", "3", "--batch-size", "5", "--seed", "7", "--no-progress"],
                         ["--random-init", "all"]],
    "probe-mdl": [[], ["--tag-column", "upos", "--max-train-sentences", "1000", "--layers", "1", "--probe", "mlp2",
                       "--hidden", "16", "--control", "--max-epochs", "2", "--seed", "4", "--threads", "2"]],
    "probe-wsd": [["--out", "o"], ["--out", "o", "--sets", "senseval2,ALL", "--max-train-sentences", "50",
                                   "--max-segment", "64", "--no-wordnet", "--device", "cpu"],
                  ["--out", "o", "--wordnet", "/tmp/wn", "--wordnet-work", "/tmp/wnw"]],
}


def parser_of(command: str) -> argparse.ArgumentParser:
    """The parser ``elmo-bench COMMAND`` runs with."""
    from elmo_bench.commands.probe_aliases import build_suite_parser
    from elmo_bench.commands.probe_command import command_parser

    return build_suite_parser() if command == "probe-suite" else command_parser(command)


def overrides_of(command: str, argv: Sequence[str]) -> list[str]:
    """The config overrides ``elmo-bench COMMAND ARGV`` runs the probe with."""
    from elmo_bench.commands.probe_command import command_overrides

    return command_overrides(command, parser_of(command).parse_args(list(argv)))


def flag_contract(parser: argparse.ArgumentParser) -> dict[str, dict[str, Any]]:
    """Flag → what a user sees of it: its action, choices, whether it is required and takes a value."""
    out = {}
    for action in parser._actions:
        if not action.option_strings or action.dest == "help":
            continue
        out[action.option_strings[0]] = {
            "takes_value": action.nargs != 0, "choices": sorted(action.choices) if action.choices else None,
            "required": bool(action.required), "sets": action.dest,
            "flag_value": None if action.nargs != 0 else action.const}
    return out


def _normal(value: Any) -> Any:
    """Machine paths as placeholders (the repository, the data root, the cache)."""
    from elmo_bench.base.paths import CACHE_DIR, DATA_ROOT

    if isinstance(value, dict):
        return {k: _normal(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_normal(v) for v in value]
    if isinstance(value, str):
        for path, name in ((DATA_ROOT.resolve(), "<data>"), (CACHE_DIR.resolve(), "<cache>"),
                           (REPO.resolve(), "<repo>")):
            value = value.replace(str(path), name)
    return value


def composed(command: str, argv: Sequence[str]) -> dict[str, Any]:
    """What the run composed from ``elmo-bench COMMAND ARGV`` is: the probe, its settings (a data directory left
    null: the directory null stands for), the run's seed and run-time keys, the encoder groups."""
    from omegaconf import open_dict

    from elmo_bench.commands.hydra_setup import compose_config
    from elmo_bench.engine.config_door import resolve_run_config
    from elmo_bench.engine.probe_run import data_root, data_settings

    overrides = overrides_of(command, argv)
    cfg = compose_config(list(overrides))
    choices = dict(cfg.hydra.runtime.choices)
    job = cfg.copy()
    with open_dict(job):
        del job["hydra"]
    run = resolve_run_config(job, list(overrides), choices)
    settings = dataclasses.asdict(run.probe.settings)
    for key, below in data_settings(run).items():
        settings[key] = str(Path(settings[key]).resolve() if settings[key] else data_root(run) / below)
    resolved = run.resolved
    runtime = {k: resolved[k] for k in ("seed", "max_segment", "device", "threads", "progress")}
    encoder = {k: resolved.get(k) for k in ("bilm", "encoder")}
    return _normal({"probe": run.probe.name, "settings": settings, "runtime": runtime, "encoder": encoder,
                    "cache_dir": resolved["paths"]["cache_dir"]})


def key_paths(value: Any, prefix: str = "") -> list[str]:
    """Every key path of a printed JSON object (``test.layer_0``; a list of objects: ``blocks[].end``)."""
    out: list[str] = []
    if isinstance(value, dict):
        for key, inner in value.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            out += [path, *key_paths(inner, path)]
    elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        for inner in value:
            out += key_paths(inner, prefix + "[]")
    return sorted(set(out))


def _last_json(text: str) -> Any:
    return json.loads(text.strip().splitlines()[-1])


def tiny_lines(tmp: Path) -> dict[str, list[str]]:
    """One command line per alias on the test biLM and tiny data (the data the aliases' own tests build)."""
    from tests.conftest import FIXTURES
    from tests.test_mdl_probe import _ewt
    from tests.test_structural_probe import _data
    from tests.test_wordnet import make_wordnet
    from tests.test_wsd_probe import SEMCOR, XML

    bilm = ["--options", str(FIXTURES / "options.json"), "--weights", str(FIXTURES / "lm_weights.hdf5"),
            "--cache-dir", str(tmp / "cache"), "--no-progress"]
    (tmp / "ud").mkdir()
    (tmp / "mdl").mkdir()
    ud, blocks = _data(tmp / "ud"), _ewt(tmp / "mdl", 1000)
    make_wordnet(tmp / "wordnet")
    (tmp / "semcor").mkdir()
    (tmp / "semcor" / "brown1_br-z01").write_text(SEMCOR)
    (tmp / "eval" / "toy").mkdir(parents=True)
    (tmp / "eval" / "toy" / "toy.data.xml").write_text(XML)
    (tmp / "eval" / "toy" / "toy.gold.key.txt").write_text(
        "d000.s000.t000 bank%1:17:01::\nd000.s000.t001 river%1:17:00::\nd000.s000.t002 otter%1:05:00::\n")
    return {
        "probe-pos": ["probe-pos", *bilm, "--data-dir", str(ud), "--l2-grid", "1e-2"],
        "probe-pos --control": ["probe-pos", *bilm, "--data-dir", str(ud), "--no-glove", "--probe", "linear",
                                "--control", "--max-epochs", "2"],
        "probe-structural": ["probe-structural", *bilm, "--data-dir", str(ud), "--max-epochs", "2"],
        "probe-mdl": ["probe-mdl", *bilm, "--data-dir", str(blocks), "--max-epochs", "1", "--layers", "0,1"],
        "probe-wsd": ["probe-wsd", *bilm, "--semcor", str(tmp / "semcor"), "--eval-root", str(tmp / "eval"),
                      "--sets", "toy", "--wordnet", str(tmp / "wordnet"), "--wordnet-work", str(tmp / "nltk"),
                      "--out", str(tmp / "wsd")],
        "probe-suite": ["probe-suite", *bilm, "--data-dir", str(ud), "--probes", "structural", "--out",
                        str(tmp / "suite")],
    }


def printed_keys(tmp: Path) -> dict[str, list[str]]:
    """Each tiny command line's printed JSON object, as its key paths (run through ``elmo-bench``'s main)."""
    import contextlib
    import io

    from elmo_bench.commands.main import main

    out = {}
    for name, argv in tiny_lines(tmp).items():
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            code = main(argv)
        assert code == 0, (name, code)
        out[name] = key_paths(_last_json(printed.getvalue()))
    return out


def contract() -> dict[str, Any]:
    """The flags of every alias and the runs its sample command lines compose to."""
    import os

    os.environ["COLUMNS"] = "120"   # argparse's width: the --help texts kept for reading, one layout
    return {"flags": {command: flag_contract(parser_of(command)) for command in ALIASES},
            "help": {command: _normal(parser_of(command).format_help()).splitlines() for command in ALIASES},
            "composed": {command: [composed(command, argv) for argv in lines] for command, lines in ARGV.items()}}


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    import tempfile

    found = contract()
    with tempfile.TemporaryDirectory() as scratch:
        found["printed"] = printed_keys(Path(scratch))
    GOLDEN.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n")
    print(f"wrote {GOLDEN}")
