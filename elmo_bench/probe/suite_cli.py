"""``elmo-bench probe-suite [encoder options] --out DIR``: every probe on every layer of one encoder, resumable.

Runs, in order, each probe command with ``--out OUT/<probe>`` and the same encoder options and activation cache:
``pos`` (``probe-pos``, the converged linear POS probe), ``pos_controls`` (``probe-pos --probe linear,mlp1
--control``: Hewitt & Liang's probes, control task and selectivity), ``structural`` (``probe-structural``: distance
and depth probes), ``mdl`` (``probe-mdl --control``: online codelength of the tags and of the control task's
labels, linear probe) and ``mdl_mlp`` (the same with the MLP-1 probe). A probe whose ``OUT/<probe>/results.json`` exists is skipped
(resume); the layers come from the activation cache, so the encoder runs once per split. ``--budget cpu`` bounds
every probe for a small CPU (``BUDGETS``, recorded in ``OUT/suite.json``); ``--budget full`` is the papers' setting.
``--random-init``/``--random-seed`` and ``--device`` go to every probe: the suite of the random-encoder baseline.
"""
from __future__ import annotations

import argparse
import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from elmo_bench.base.arguments import ArgumentParser
from elmo_bench.base.atomic import atomic_write_text
from elmo_bench.base.errors import ConfigError
from elmo_bench.base.paths import CACHE_DIR
from elmo_bench.probe.mdl_cli import probe_mdl_main
from elmo_bench.probe.pos_cli import DEFAULT_DATA, _positive_int, probe_pos_main
from elmo_bench.probe.structural_cli import probe_structural_main
from elmo_bench.records.run_record import RESULTS_FILE

log = logging.getLogger("elmo_bench.probe.suite")

#: what each budget bounds (None: no bound); recorded in OUT/suite.json. MDL keeps the authors' 40 epochs even on
#: the CPU budget: its linear probes are cheap (3 layers, 1,000 sentences: 98 s here) and a 10-epoch cap reversed
#: the layers' order (layer 0 21,968 bits < layer 1 24,326; with 40 epochs 19,376 > 15,464)
BUDGETS: dict[str, dict[str, Any]] = {
    "cpu": {"max_train_sentences": 2000, "max_epochs": 10, "mdl_max_epochs": 40, "mlp_hidden": 256},
    "full": {"max_train_sentences": None, "max_epochs": 40, "mdl_max_epochs": 40, "mlp_hidden": None},
}


@dataclass(frozen=True)
class SuiteProbe:
    """One probe of the suite: its directory name, its command's main, and its budget arguments."""

    name: str
    main: Callable[[Sequence[str]], int]
    budget_args: Callable[[dict[str, Any]], list[str]]


def _train(budget: dict[str, Any]) -> list[str]:
    n = budget["max_train_sentences"]
    return ["--max-train-sentences", str(n)] if n else []


def _epochs(budget: dict[str, Any]) -> list[str]:
    return [*_train(budget), "--max-epochs", str(budget["max_epochs"])]


def _hidden(budget: dict[str, Any]) -> list[str]:
    return ["--hidden", str(budget["mlp_hidden"])] if budget["mlp_hidden"] else []


def _mdl(budget: dict[str, Any]) -> list[str]:
    return [*_train(budget), "--max-epochs", str(budget["mdl_max_epochs"])]


def probes() -> tuple[SuiteProbe, ...]:
    """The suite's probes, in order."""
    return (SuiteProbe("pos", probe_pos_main, lambda b: [*_train(b), "--no-glove"]),
            SuiteProbe("pos_controls", probe_pos_main,
                       lambda b: [*_epochs(b), *_hidden(b), "--no-glove", "--probe", "linear,mlp1", "--control"]),
            SuiteProbe("structural", probe_structural_main, _epochs),
            SuiteProbe("mdl", probe_mdl_main, lambda b: [*_mdl(b), "--control"]),
            SuiteProbe("mdl_mlp", probe_mdl_main, lambda b: [*_mdl(b), *_hidden(b), "--probe", "mlp1", "--control"]))


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="elmo-bench probe-suite", description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, help="OUT/<probe>/results.json per probe, OUT/suite.json")
    p.add_argument("--budget", default="cpu", choices=sorted(BUDGETS), help="cpu: bounded (see BUDGETS); full")
    p.add_argument("--probes", default=None,
                   help="comma-separated subset of pos,pos_controls,structural,mdl,mdl_mlp (default: all)")
    from elmo_bench.encoders.cli_options import add_probe_encoder_arguments  # lazy: torch

    add_probe_encoder_arguments(p)
    p.add_argument("--data-dir", default=str(DEFAULT_DATA), help="UD English-EWT directory")
    p.add_argument("--cache-dir", default=str(CACHE_DIR / "activations"), help="activation cache directory")
    p.add_argument("--threads", type=_positive_int, default=1, help="torch intra-op threads")
    p.add_argument("--no-progress", action="store_true")
    return p


def shared_args(args: argparse.Namespace) -> list[str]:
    """The encoder (random twin and device included), data and cache options every probe command takes, as given to
    the suite."""
    out = ["--encoder", args.encoder, "--options", args.options, "--weights", args.weights, "--pooling", args.pooling,
           "--data-dir", args.data_dir, "--cache-dir", args.cache_dir, "--threads", str(args.threads)]
    out += ["--model", args.model] if args.model else []
    out += ["--revision", args.revision] if args.revision else []
    out += ["--device", args.device]
    out += ["--random-init", args.random_init, "--random-seed", str(args.random_seed)] if args.random_init else []
    return out + (["--no-progress"] if args.no_progress else [])


def _check_budget(out: Path, budget: str) -> None:
    """ConfigError when OUT already holds a suite run with another budget (its results would be mixed)."""
    record = out / "suite.json"
    if record.exists():
        before = json.loads(record.read_text()).get("budget")
        if before != budget:
            raise ConfigError(f"{record}: this directory holds a --budget {before} suite; expected --budget {before} "
                              f"to resume it, or another --out for --budget {budget}")


def _write_record(out: Path, args: argparse.Namespace, status: dict[str, Any]) -> dict[str, Any]:
    """OUT/suite.json: the budget, its bounds, the encoder and each probe's status so far (atomic)."""
    record = {"budget": args.budget, "bounds": BUDGETS[args.budget], "probes": status, "encoder": args.encoder,
              "model": args.model or args.options,
              **({"random_init": args.random_init, "random_seed": args.random_seed} if args.random_init else {})}
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / "suite.json", json.dumps(record, indent=2, sort_keys=True) + "\n")
    return record


def probe_suite_main(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(list(argv))
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    out = Path(args.out)
    known = probes()
    wanted = [p.strip() for p in args.probes.split(",")] if args.probes else [p.name for p in known]
    unknown = sorted(set(wanted) - {p.name for p in known})
    if unknown:
        raise SystemExit(f"elmo-bench probe-suite: --probes expects names from {[p.name for p in known]}, "
                         f"found {unknown}")
    _check_budget(out, args.budget)
    budget = BUDGETS[args.budget]
    status: dict[str, Any] = {}
    _write_record(out, args, status)  # the budget is on record before any probe runs
    for i, probe in enumerate(p for p in known if p.name in wanted):
        target = out / probe.name
        if (target / RESULTS_FILE).exists():
            log.info("[%d/%d] %s: finished before, skipped", i + 1, len(wanted), probe.name)
            status[probe.name] = {"status": "skipped (finished before)"}
            continue
        log.info("[%d/%d] %s: running", i + 1, len(wanted), probe.name)
        started = time.perf_counter()
        code = probe.main([*shared_args(args), *probe.budget_args(budget), "--out", str(target)])
        status[probe.name] = {"status": "ran" if code == 0 else f"exit {code}",
                              "seconds": round(time.perf_counter() - started, 1)}
        if code != 0:
            break
    print(json.dumps(_write_record(out, args, status)))
    return max([0] + [int(s["status"].split()[1]) for s in status.values() if s["status"].startswith("exit")])
