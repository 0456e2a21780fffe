"""``elmo-bench probe-structural``'s flags: an alias of ``python run.py probe=structural`` (the probe:
elmo_bench/probe/structural). Hewitt & Manning's distance and depth probes on every layer of a frozen encoder.

Prints, last, one JSON object ``{"dev": {"layer_<k>": {"uuas", "dspr", "root_acc", "nspr"}}, "test": {...},
"baselines": {"linear_chain": {"uuas", "dev_uuas"}}, ...}`` (UUAS and root accuracy in percent, Spearman values in
[-1, 1], null where no sentence has 5..50 words). Data: UD English-EWT CoNLL-U with its basic HEAD column
(``--data-dir``); layers from the activation cache, the same encoder options as ``probe-pos``. With ``--out DIR``
it also writes ``DIR/results.json`` (task ``structural_probe``).
"""
from __future__ import annotations

import argparse

from elmo_bench.base.arguments import ArgumentParser
from elmo_bench.base.paths import CACHE_DIR
from elmo_bench.probe.pos_cli import DEFAULT_DATA, _positive_int


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="elmo-bench probe-structural", description=__doc__.splitlines()[0])
    from elmo_bench.encoders.cli_options import add_probe_encoder_arguments  # lazy: torch

    add_probe_encoder_arguments(p)
    p.add_argument("--data-dir", default=str(DEFAULT_DATA),
                   help="UD English-EWT directory (en_ewt-ud-{train,dev,test}.conllu, train may be .gz)")
    p.add_argument("--max-train-sentences", type=_positive_int, default=None,
                   help="the first N training sentences (default: all of them)")
    p.add_argument("--rank", type=_positive_int, default=None, help="rank of B (default: the layer's width)")
    p.add_argument("--punct", default="xpos", choices=["xpos", "upos"],
                   help="punctuation left out of UUAS and root accuracy: the authors' PTB XPOS list, or UPOS PUNCT")
    p.add_argument("--layers", default=None, help="comma-separated layer indices (default: every layer)")
    p.add_argument("--max-epochs", type=_positive_int, default=40, help="at most this many epochs (authors: 40)")
    p.add_argument("--batch-size", type=_positive_int, default=20, help="sentences per batch (authors: 20)")
    p.add_argument("--seed", type=int, default=0, help="initialisation and shuffling seed")
    p.add_argument("--cache-dir", default=str(CACHE_DIR / "activations"), help="activation cache directory")
    p.add_argument("--threads", type=_positive_int, default=1, help="torch intra-op threads")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--out", default=None, help="the run directory (default: run.py's, results/probes/structural/...)")
    return p
