"""``elmo-bench probe-suite``'s flags: an alias of ``python run.py -m experiment=probe_suite`` for one encoder
(elmo_bench.commands.probe_aliases runs it): every probe of the suite (pos, pos_controls, structural, mdl,
mdl_mlp) on every layer of one encoder into ``OUT/<probe>``, resumable, then ``OUT/suite.json``. ``--budget cpu``
bounds every probe for a small CPU (conf/probe_budget/cpu_<probe>.yaml, recorded in suite.json); ``--budget full``
is the papers' setting (the probes' own defaults).
"""
from __future__ import annotations

import argparse

from elmo_bench.base.arguments import ArgumentParser
from elmo_bench.base.paths import CACHE_DIR
from elmo_bench.probe.pos_cli import DEFAULT_DATA, _positive_int

#: the budgets a suite takes (conf/budget/<name>.yaml; each probe's bounds: conf/probe_budget/<name>_<probe>.yaml)
BUDGET_NAMES = ("cpu", "full")


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="elmo-bench probe-suite", description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, help="OUT/<probe>/results.json per probe, OUT/suite.json")
    p.add_argument("--budget", default="cpu", choices=BUDGET_NAMES,
                   help="cpu: bounded (conf/probe_budget/cpu_<probe>.yaml); full: the papers' settings")
    p.add_argument("--probes", default=None,
                   help="comma-separated subset of pos,pos_controls,structural,mdl,mdl_mlp (default: all)")
    from elmo_bench.encoders.cli_options import add_probe_encoder_arguments  # lazy: torch

    add_probe_encoder_arguments(p)
    p.add_argument("--data-dir", default=str(DEFAULT_DATA), help="UD English-EWT directory")
    p.add_argument("--cache-dir", default=str(CACHE_DIR / "activations"), help="activation cache directory")
    p.add_argument("--threads", type=_positive_int, default=1, help="torch intra-op threads")
    p.add_argument("--no-progress", action="store_true")
    return p
