"""``elmo-bench probe-mdl``'s flags: an alias of ``python run.py probe=mdl`` (the probe: elmo_bench/probe/mdl). The
online codelength (Voita & Titov 2020) of POS tags given each layer, in bits.

Prints, last, one JSON object ``{"train": {"layer_<k>": {"online_bits", "uniform_bits", "compression", "blocks":
[{"end", "bits"}, ...]}}, "test": {"layer_<k>": {"accuracy"}}, ...}`` (accuracy in percent, of the probe trained on
all blocks). Data and layers as ``probe-pos`` (UD English-EWT, the activation cache, the same encoder options).
With ``--out DIR`` it also writes ``DIR/results.json`` (task ``mdl_probe``).
"""
from __future__ import annotations

import argparse

from elmo_bench.base.arguments import ArgumentParser
from elmo_bench.base.paths import CACHE_DIR
from elmo_bench.probe.mdl.config import PROBES
from elmo_bench.probe.pos_cli import DEFAULT_DATA, _positive_int


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="elmo-bench probe-mdl", description=__doc__.splitlines()[0])
    from elmo_bench.encoders.cli_options import add_probe_encoder_arguments  # lazy: torch

    add_probe_encoder_arguments(p)
    p.add_argument("--data-dir", default=str(DEFAULT_DATA),
                   help="UD English-EWT directory (en_ewt-ud-{train,dev,test}.conllu, train may be .gz)")
    p.add_argument("--tag-column", default="xpos", choices=["xpos", "upos"], help="xpos = PTB tags (the paper's)")
    p.add_argument("--max-train-sentences", type=_positive_int, default=None,
                   help="the first N training sentences before shuffling (default: all; at least 1000 for the "
                        "authors' block schedule)")
    p.add_argument("--layers", default=None, help="comma-separated layer indices (default: every layer)")
    p.add_argument("--probe", default="linear", choices=sorted(PROBES),
                   help="the probe trained per block (a ProbeFactory): linear softmax (default), or Hewitt & "
                        "Liang's mlp1 / mlp2 (--hidden units) with their regimen")
    p.add_argument("--hidden", type=_positive_int, default=1000, help="mlp1/mlp2 hidden units (default 1000)")
    p.add_argument("--control", action="store_true",
                   help="also code the control task's labels (Hewitt & Liang: one random tag per word type, drawn "
                        "with --seed): printed under \"control\", as \"train\"/\"test\" are for the tags")
    p.add_argument("--max-epochs", type=_positive_int, default=40, help="at most this many epochs per probe")
    p.add_argument("--seed", type=int, default=0, help="shuffling order and probe initialisation")
    p.add_argument("--cache-dir", default=str(CACHE_DIR / "activations"), help="activation cache directory")
    p.add_argument("--threads", type=_positive_int, default=1, help="torch intra-op threads")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--out", default=None, help="the run directory (default: run.py's, results/probes/mdl/...)")
    return p
