"""The ``elmo-bench probe-*`` commands as thin aliases of ``python run.py probe=<name>``: each parses its flags
(the parsers in elmo_bench/probe/*_cli.py), maps them to config overrides (:func:`encoder_overrides` and the
command's own table), composes conf/config.yaml with them and runs the probe through the same door, identity,
resume and records as run.py (elmo_bench.engine.probe_run); it prints the same JSON object. ``--out DIR`` is the
run directory (``hydra.run.dir``: resumed, or skipped when finished); without it, as the commands always did, the
probe prints its object and writes nothing (it runs in a temporary directory, removed after).
No probe is implemented here: one implementation per probe (elmo_bench/probes/<name>/probe.py).

``probe-suite`` is ``experiment=probe_suite``'s loop for one encoder: every probe of the suite with
``budget=<b> probe_set=suite`` into ``OUT/<probe>``, then ``OUT/suite.json`` (made from the probes' own records, so
resuming never loses a finished probe's time).
"""
from __future__ import annotations

import argparse
import json
import logging
import tempfile
from pathlib import Path
from typing import Any, Callable, Sequence

from omegaconf import OmegaConf, open_dict

from elmo_bench.base.atomic import atomic_write_text
from elmo_bench.base.errors import ConfigError
from elmo_bench.base.overrides import quoted
from elmo_bench.base.paths import CACHE_DIR, CONF_DIR, DATA_ROOT
from elmo_bench.commands.hydra_setup import compose_config
from elmo_bench.commands.suite_record import check_suite_before, write_suite
from elmo_bench.encoders.random_init import check_random_init
from elmo_bench.engine.config_door import resolve_run_config
from elmo_bench.engine.probe_config import ProbeRunConfig
from elmo_bench.probe import mdl_cli, pos_cli, structural_cli, suite_cli, wsd_cli
from elmo_bench.probe.settings import UD_EWT
from elmo_bench.records.run_record import RESULTS_FILE

log = logging.getLogger("elmo_bench.probe")


def listed(text: str | None, flag: str, cast: Callable[[str], Any] = str) -> str | None:
    """A comma list flag (``--seeds 1,2``) as a Hydra list (``[1,2]``); one line for a value ``cast`` refuses."""
    if text is None:
        return None
    items = [t.strip() for t in str(text).split(",") if t.strip()]
    if not items:
        raise ConfigError(f"{flag} expected a comma-separated list, found {text!r} (empty)")
    try:
        values = [cast(t) for t in items]
    except ValueError:
        raise ConfigError(f"{flag} expected comma-separated {cast.__name__} values, found {text!r}") from None
    return "[" + ",".join(quoted(v) if cast is str else repr(v) for v in values) + "]"


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


def _set(out: list[str], key: str, value: Any) -> None:
    if value is not None:
        out.append(f"{key}={value}")


def ud_overrides(args: argparse.Namespace) -> list[str]:
    """``--data-dir``, ``--max-train-sentences``, ``--layers`` (every UD probe's)."""
    out: list[str] = []
    if getattr(args, "data_dir", None) and Path(args.data_dir).resolve() != default_ud().resolve():
        out.append(f"probe.data_dir={quoted(args.data_dir)}")
    _set(out, "probe.max_train_sentences", getattr(args, "max_train_sentences", None))
    _set(out, "probe.layers", listed(getattr(args, "layers", None), "--layers", int))
    return out


def default_ud() -> Path:
    """UD English-EWT's default directory (a ``--data-dir`` equal to it is no override)."""
    return DATA_ROOT / UD_EWT


def pos_overrides(args: argparse.Namespace) -> list[str]:
    """``probe-pos``'s flags → ``probe=pos`` and its settings."""
    out = ["probe=pos", *ud_overrides(args), f"probe.tags={args.tag_column}",
           f"probe.probe={listed(args.probe, '--probe')}", f"probe.control={str(bool(args.control)).lower()}",
           f"probe.seeds={listed(args.seeds, '--seeds', int)}", f"probe.hidden={args.hidden}",
           f"probe.rank={args.rank}", f"probe.dropout={args.dropout!r}", f"probe.weight_decay={args.weight_decay!r}",
           f"probe.max_epochs={args.max_epochs}", f"probe.batch_sentences={args.batch_sentences}",
           f"probe.l2_grid={listed(args.l2_grid, '--l2-grid', float)}", f"probe.max_iter={args.max_iter}",
           f"probe.tol={args.tol!r}", f"probe.glove={str(not args.no_glove).lower()}"]
    _set(out, "probe.rows", listed(args.rows, "--rows"))
    _set(out, "probe.max_dev_sentences", args.max_dev_sentences)
    return out


def structural_overrides(args: argparse.Namespace) -> list[str]:
    """``probe-structural``'s flags → ``probe=structural`` (``--seed``: the run's seed)."""
    out = ["probe=structural", *ud_overrides(args), f"probe.punct={args.punct}", f"probe.max_epochs={args.max_epochs}",
           f"probe.batch_size={args.batch_size}", f"seed={args.seed}"]
    _set(out, "probe.rank", args.rank)
    return out


def mdl_overrides(args: argparse.Namespace) -> list[str]:
    """``probe-mdl``'s flags → ``probe=mdl`` (``--seed``: the run's seed)."""
    return ["probe=mdl", *ud_overrides(args), f"probe.tags={args.tag_column}", f"probe.probe={args.probe}",
            f"probe.hidden={args.hidden}", f"probe.control={str(bool(args.control)).lower()}",
            f"probe.max_epochs={args.max_epochs}", f"seed={args.seed}"]


def wsd_overrides(args: argparse.Namespace) -> list[str]:
    """``probe-wsd``'s flags → ``probe=wsd`` (``--max-segment``: the run's ``max_segment``)."""
    out = ["probe=wsd", f"probe.semcor={quoted(args.semcor)}", f"probe.eval_root={quoted(args.eval_root)}",
           f"probe.sets={listed(args.sets, '--sets')}", f"max_segment={args.max_segment}",
           f"probe.wordnet={'null' if args.no_wordnet else quoted(args.wordnet)}",
           f"probe.wordnet_work={quoted(args.wordnet_work)}"]
    _set(out, "probe.max_train_sentences", args.max_train_sentences)
    return out


#: the config keys an error may name (ConfigError.key) → the flag these commands take them as: a refusal names what
#: the user typed (``python run.py probe=...`` names the keys themselves)
FLAGS = {"probe.max_train_sentences": "--max-train-sentences", "probe.data_dir": "--data-dir",
         "probe.layers": "--layers", "bilm.random_init": "--random-init", "encoder.random_init": "--random-init"}


def run_alias(overrides: Sequence[str], out: str | None) -> dict[str, Any]:
    """Compose ``overrides`` as run.py would, through the door, and run the probe in ``out`` (or run.py's
    directory for it); returns its results.json. A refusal that names a config key a flag set names the flag."""
    try:
        return _run_alias(overrides, out)
    except ConfigError as error:
        spelled = error.spelled(FLAGS)
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


def alias(parser: Callable[[], argparse.ArgumentParser], to_overrides: Callable[[argparse.Namespace], list[str]]
          ) -> Callable[[Sequence[str]], int]:
    """An ``elmo-bench probe-*`` command: its flags → overrides → the probe run; prints the probe's JSON object."""
    def main(argv: Sequence[str]) -> int:
        args = parser().parse_args(list(argv))
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
        results = run_alias([*to_overrides(args), *encoder_overrides(args)], getattr(args, "out", None))
        print(json.dumps(results.get("printed")))
        return 0

    return main


#: the suite's probes in order (conf/experiment/probe_suite.yaml sweeps the same list)
SUITE = ("pos", "pos_controls", "structural", "mdl", "mdl_mlp")


def suite_status(target: Path, ran: bool) -> dict[str, Any]:
    """One probe's line in suite.json, from its own results.json (its time is kept whenever it was run)."""
    timings = json.loads((target / RESULTS_FILE).read_text()).get("timings") or {}
    return {"status": "ran" if ran else "finished before", "seconds": round(float(timings.get("total_seconds", 0)), 1)}


def budget_bounds(budget: str, names: Sequence[str]) -> dict[str, Any]:
    """Each probe's bounds under ``budget``: conf/probe_budget/<budget>_<probe>.yaml (none: the probe's defaults)."""
    files = {name: CONF_DIR / "probe_budget" / f"{budget}_{name}.yaml" for name in names}
    return {name: OmegaConf.to_container(OmegaConf.load(path)) if path.is_file() else {}
            for name, path in files.items()}


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
    args = suite_cli.build_parser().parse_args(list(argv))
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    out = Path(args.out)
    wanted = [p.strip() for p in args.probes.split(",")] if args.probes else list(SUITE)
    unknown = sorted(set(wanted) - set(SUITE))
    if unknown:
        raise ConfigError(f"--probes expects names from {list(SUITE)}, found {unknown}")
    shared = [f"budget={args.budget}", "probe_set=suite", "seed=0", *ud_overrides(args), *encoder_overrides(args)]
    suite = {"budget": args.budget, "encoder": args.encoder,
             **({"random_init": args.random_init, "random_seed": args.random_seed} if args.random_init else {}),
             "overrides": [o for o in shared if not o.startswith(("paths.", "threads")) and not absolute(o)]}
    check_suite_dir(out, suite, wanted)
    status: dict[str, Any] = {}
    for i, name in enumerate(p for p in SUITE if p in wanted):
        target = out / name
        before = (target / RESULTS_FILE).exists()
        log.info("[%d/%d] %s", i + 1, len(wanted), name)
        run_alias([f"probe={name}", *shared], str(target))
        status[name] = suite_status(target, not before)
    record = {**suite, "bounds": budget_bounds(args.budget, [p for p in SUITE if p in wanted]), "probes": status}
    record = write_suite(out, record)  # merged under OUT's lock with what another suite command wrote there
    print(json.dumps(record))
    return 0


#: the aliases elmo_bench.commands.main's COMMANDS runs
probe_pos_main = alias(pos_cli.build_parser, pos_overrides)
probe_structural_main = alias(structural_cli.build_parser, structural_overrides)
probe_mdl_main = alias(mdl_cli.build_parser, mdl_overrides)
probe_wsd_main = alias(wsd_cli.build_parser, wsd_overrides)
