"""How every ``elmo-bench`` probe command runs: ``elmo-bench probe NAME`` and the probes' own commands
(``probe-pos``, ...; their parsers are generated, elmo_bench.commands.probe_command) give their flags as config
overrides (:func:`encoder_overrides` and the probe's settings), and :func:`run_alias` composes conf/config.yaml with
them and runs the probe through the same door, identity, resume and records as run.py (elmo_bench.engine.
probe_run); the command prints the same JSON object. ``--out DIR`` is the run directory (``hydra.run.dir``: resumed,
or skipped when finished); without it, as the commands always did, the probe prints its object and writes nothing
(it runs in a temporary directory, removed after). No probe is implemented or named here.

``probe-suite`` is ``experiment=probe_suite``'s loop for one encoder: every probe that preset sweeps (its list,
read from conf/experiment/probe_suite.yaml) with ``budget=<b> probe_set=suite`` into ``OUT/<probe>``, then
``OUT/suite.json`` (made from the probes' own records, so resuming never loses a finished probe's time).
"""
from __future__ import annotations

import argparse
import json
import logging
import tempfile
from pathlib import Path
from typing import Any, Mapping, Sequence

from omegaconf import OmegaConf, open_dict

from elmo_bench.base.arguments import ArgumentParser, positive_int
from elmo_bench.base.errors import ConfigError
from elmo_bench.base.paths import CACHE_DIR, CONF_DIR
from elmo_bench.commands.hydra_setup import compose_config
from elmo_bench.commands.suite_record import check_suite_before, write_suite
from elmo_bench.encoders.random_init import check_random_init
from elmo_bench.engine.config_door import resolve_run_config
from elmo_bench.engine.probe_config import ProbeRunConfig
from elmo_bench.probe.command_line import SettingFlag, add_setting_flags, quoted, setting_flags, setting_overrides
from elmo_bench.probe.registry import probe_declaration
from elmo_bench.probe.settings import dataset_settings
from elmo_bench.records.run_record import RESULTS_FILE

log = logging.getLogger("elmo_bench.probe")


def encoder_overrides(args: argparse.Namespace) -> list[str]:
    """The encoder flags (``--encoder/--model/--pooling/--revision``, the biLM's ``--options/--weights``, its random
    twin's ``--random-init/--random-seed``) and the run-time ones (``--device``, ``--threads``, ``--cache-dir``,
    ``--no-progress``) as overrides."""
    from elmo_bench.encoders.cli_options import chosen_kind  # lazy: torch

    kind = chosen_kind(args)
    random_init = getattr(args, "random_init", None)
    if kind.from_args is not None:   # a kind of its own flags (the biLM: --options/--weights, its random twin)
        out = kind.overrides(args) if kind.overrides is not None else []
    else:
        if not args.model:
            raise ConfigError(f"--encoder {kind.name} needs --model (a directory, file or class; see --help)")
        out = [f"encoder={kind.name}", f"encoder.{kind.model_key}={quoted(args.model)}"]
        out += kind.overrides(args) if kind.overrides is not None else []
        if random_init:  # a twin through encoder.random_init (a transformers model's): another kind is one line
            check_random_init(kind.name, random_init)
            out += [f"encoder.random_init={random_init}", f"encoder.random_seed={args.random_seed}"]
    out += [f"device={getattr(args, 'device', 'cpu')}", f"threads={getattr(args, 'threads', 1)}"]
    if getattr(args, "cache_dir", None) and Path(args.cache_dir) != CACHE_DIR / "activations":
        out.append(f"paths.cache_dir={quoted(args.cache_dir)}")
    return out + (["progress=false"] if getattr(args, "no_progress", False) else [])


#: the config keys an error may name (ConfigError.key) → the flag every probe command takes them as: a refusal
#: names what the user typed (``python run.py probe=...`` names the keys themselves); each command adds its
#: settings' flags (elmo_bench.commands.probe_command.spelled)
FLAGS = {"bilm.random_init": "--random-init", "encoder.random_init": "--random-init"}


def run_alias(overrides: Sequence[str], out: str | None, flags: Mapping[str, str] = FLAGS) -> dict[str, Any]:
    """Compose ``overrides`` as run.py would, through the door, and run the probe in ``out`` (or run.py's
    directory for it); returns its results.json. A refusal that names a config key of ``flags`` names the flag."""
    try:
        return _run_alias(overrides, out)
    except ConfigError as error:
        spelled = error.spelled(flags)
        if spelled is error:
            raise
        raise spelled.with_traceback(error.__traceback__) from None   # the same line, under the flag's name


def _run_alias(overrides: Sequence[str], out: str | None) -> dict[str, Any]:
    from elmo_bench.engine.probe_run import run_probe  # lazy: torch

    cfg = compose_config(list(overrides))
    choices = dict(cfg.hydra.runtime.choices)
    job = cfg.copy()
    with open_dict(job):
        del job["hydra"]
    run = resolve_run_config(job, list(overrides), choices)
    if not isinstance(run, ProbeRunConfig):
        raise ConfigError(f"{' '.join(overrides)}: not a probe run")
    if out is None:  # as the command always did: print, write nothing (a run directory of its own, then gone)
        with tempfile.TemporaryDirectory(prefix="elmo_bench-probe-") as scratch:
            return run_probe(run, Path(scratch) / "run")
    target = Path(out)
    if target.exists() and not target.is_dir():
        raise ConfigError(f"--out {out}: a file, not a directory; expected the probe's run directory")
    return run_probe(run, target)


#: the preset whose sweep ``probe-suite`` runs for one encoder, and the budgets it takes (conf/budget/<name>.yaml)
SUITE_PRESET = CONF_DIR / "experiment" / "probe_suite.yaml"
BUDGETS = CONF_DIR / "budget"


def suite_probes() -> list[str]:
    """The suite's probes in order: those experiment=probe_suite sweeps (``hydra.sweeper.params.probe``)."""
    swept = OmegaConf.load(SUITE_PRESET).hydra.sweeper.params.probe
    return [name.strip() for name in str(swept).split(",") if name.strip()]


def suite_data_flags() -> list[SettingFlag]:
    """The data directories every probe of the suite reads (its dataset settings in common: ``--data-dir``), as
    flags generated from the first probe's settings."""
    probes = [probe_declaration(name).settings for name in suite_probes()]
    shared = set.intersection(*(set(dataset_settings(settings)) for settings in probes))
    return [flag for flag in setting_flags(probes[0]) if flag.setting in shared]


def build_suite_parser() -> ArgumentParser:
    """``elmo-bench probe-suite``'s flags."""
    from elmo_bench.encoders.cli_options import add_probe_encoder_arguments  # lazy: torch

    names = suite_probes()
    p = ArgumentParser(prog="elmo-bench probe-suite", description=f"every probe of the suite ({', '.join(names)}) "
                       f"on every layer of one encoder into OUT/<probe>, resumable, then OUT/suite.json: "
                       f"python run.py -m experiment=probe_suite for one encoder")
    p.add_argument("--out", required=True, help="OUT/<probe>/results.json per probe, OUT/suite.json")
    p.add_argument("--budget", default="cpu", choices=sorted(path.stem for path in BUDGETS.glob("*.yaml")),
                   help="cpu: bounded (conf/probe_budget/cpu_<probe>.yaml); full: the papers' settings")
    p.add_argument("--probes", default=None, help=f"comma-separated subset of {','.join(names)} (default: all)")
    add_probe_encoder_arguments(p)
    add_setting_flags(p, suite_data_flags())
    p.add_argument("--cache-dir", default=str(CACHE_DIR / "activations"), help="activation cache directory")
    p.add_argument("--threads", type=positive_int, default=1, help="torch intra-op threads")
    p.add_argument("--no-progress", action="store_true")
    return p


def suite_status(target: Path, ran: bool) -> dict[str, Any]:
    """One probe's line in suite.json, from its own results.json (its time is kept whenever it was run)."""
    timings = json.loads((target / RESULTS_FILE).read_text()).get("timings") or {}
    return {"status": "ran" if ran else "finished before", "seconds": round(float(timings.get("total_seconds", 0)), 1)}


def budget_bounds(budget: str, names: Sequence[str]) -> dict[str, Any]:
    """Each probe's bounds under ``budget``: its declaration's ``budgets[budget]`` (none: the probe's defaults)."""
    declared = {name: probe_declaration(name).budgets for name in names}
    return {name: dict(budgets[budget]) if budget in budgets else {} for name, budgets in declared.items()}


def absolute(override: str) -> bool:
    """An override whose value is an absolute path (never recorded: records hold no machine's paths)."""
    value = override.split("=", 1)[-1].strip("'")
    return value.startswith("/") or (len(value) > 2 and value[1] == ":")


def check_suite_dir(out: Path, suite: dict[str, Any], wanted: Sequence[str]) -> None:
    """``--out`` is a directory (or absent), and a suite.json there is one this command wrote, of this suite when a
    probe of ``wanted`` is new there (elmo_bench.commands.suite_record); one line else."""
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out}: a file, not a directory; expected the suite's directory")
    check_suite_before(out, suite, any(not (out / name).exists() for name in wanted))


def probe_suite_main(argv: Sequence[str]) -> int:
    """``elmo-bench probe-suite``: every probe of the suite on one encoder (see the module docstring)."""
    args = build_suite_parser().parse_args(list(argv))
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    out = Path(args.out)
    names = suite_probes()
    wanted = [p.strip() for p in args.probes.split(",")] if args.probes else list(names)
    unknown = sorted(set(wanted) - set(names))
    if unknown:
        raise ConfigError(f"--probes expects names from {names}, found {unknown}")
    shared = [f"budget={args.budget}", "probe_set=suite", "seed=0", *setting_overrides(suite_data_flags(), args),
              *encoder_overrides(args)]
    suite = {"budget": args.budget, "encoder": args.encoder,
             **({"random_init": args.random_init, "random_seed": args.random_seed} if args.random_init else {}),
             "overrides": [o for o in shared if not o.startswith(("paths.", "threads")) and not absolute(o)]}
    check_suite_dir(out, suite, wanted)
    status: dict[str, Any] = {}
    for i, name in enumerate(p for p in names if p in wanted):
        target = out / name
        before = (target / RESULTS_FILE).exists()
        log.info("[%d/%d] %s", i + 1, len(wanted), name)
        run_alias([f"probe={name}", *shared], str(target))
        status[name] = suite_status(target, not before)
    record = {**suite, "bounds": budget_bounds(args.budget, [p for p in names if p in wanted]), "probes": status}
    record = write_suite(out, record)  # merged under OUT's lock with what another suite command wrote there
    print(json.dumps(record))
    return 0

