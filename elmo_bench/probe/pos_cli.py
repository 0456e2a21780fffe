"""``elmo-bench probe-pos``'s flags: an alias of ``python run.py probe=pos`` (elmo_bench.commands.probe_aliases maps
them to ``probe.*`` keys; the probe itself is elmo_bench/probe/pos). The converged linear POS probe of every
layer, GloVe and the most-frequent-tag baseline on one split (paper Table 6), printed as one JSON object.

Prints ``{"data", "tag_column", "train_sentences", "train_tokens", "dev_tokens", "test_tokens", "bilm" (another
encoder than the biLM: "encoder", its hash),
"test": {row: accuracy}, "dev": {row: accuracy}, "l2": {row: chosen L2}, "converged": {row: bool}}`` with rows
``layer_0 .. layer_L, average, glove, most_frequent_tag`` (accuracy in percent). With ``--out DIR`` it also writes
``DIR/results.json`` (task ``pos_probe``; the report's Table 6 reads it). The biLM layers come from the activation
cache (``--cache-dir``): a second run on the same sentences and biLM does not run the biLM.
"""
from __future__ import annotations

import argparse

from elmo_bench.base.arguments import ArgumentParser
from elmo_bench.base.paths import CACHE_DIR, DATA_ROOT
from elmo_bench.bilm.default import DEFAULT_OPTIONS, DEFAULT_WEIGHTS

DEFAULT_DATA = DATA_ROOT / "pos" / "ud_english_ewt"
DEFAULT_L2 = "1e-2,1e-3,1e-4,1e-5"


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, found {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="elmo-bench probe-pos", description=__doc__.splitlines()[0])
    p.add_argument("--options", default=str(DEFAULT_OPTIONS), help="biLM options.json (default: the shipped biLM)")
    p.add_argument("--weights", default=str(DEFAULT_WEIGHTS), help="biLM weights.hdf5 (default: the shipped biLM)")
    from elmo_bench.encoders.cli_options import add_encoder_arguments  # lazy: torch

    add_encoder_arguments(p)  # --encoder/--model/--pooling: any frozen encoder instead of the biLM
    p.add_argument("--data-dir", default=str(DEFAULT_DATA),
                   help="UD English-EWT directory (en_ewt-ud-{train,dev,test}.conllu, train may be .gz)")
    p.add_argument("--max-dev-sentences", type=_positive_int, default=None,
                   help="the first N dev sentences (default: all; bounds the Adam probes' per-epoch dev pass)")
    p.add_argument("--tag-column", default="xpos", choices=["xpos", "upos"], help="xpos = PTB tags (the paper's)")
    p.add_argument("--max-train-sentences", type=_positive_int, default=None,
                   help="the first N training sentences (default: all of them)")
    p.add_argument("--l2-grid", default=DEFAULT_L2, help=f"L2 strengths tried, best on dev kept; when the weakest wins, up to 3 more fits go "
                        f"down by factors of 10 (default {DEFAULT_L2})")
    p.add_argument("--max-iter", type=_positive_int, default=1000, help="L-BFGS iterations per fit at most")
    p.add_argument("--tol", type=float, default=1e-4, help="converged when the gradient max-norm is below this")
    p.add_argument("--no-glove", action="store_true", help="leave out the GloVe row")
    p.add_argument("--cache-dir", default=str(CACHE_DIR / "activations"), help="activation cache directory")
    p.add_argument("--threads", type=_positive_int, default=1, help="torch intra-op threads")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--out", default=None, help="the run directory (default: run.py's, results/probes/pos/...)")
    add_probe_arguments(p)
    return p


def add_probe_arguments(p: argparse.ArgumentParser) -> None:
    """The control task, the papers' probes, seeds, random encoders and the device (elmo_bench.probe.pos.fits)."""
    from elmo_bench.encoders.cli_options import add_device_argument, add_random_init_arguments  # lazy: torch

    add_device_argument(p)
    p.add_argument("--probe", default="converged",
                   help="converged | linear | mlp1 | mlp2, or a comma list of them (default converged: L-BFGS); "
                        "with any other than converged alone, rows are keyed <probe>/<row>")
    p.add_argument("--control", action="store_true",
                   help="also train each probe on the control task (Hewitt & Liang 2019): control and selectivity")
    p.add_argument("--seeds", default="1", help="comma list: control-label draws and Adam-probe seeds (mean ± sd)")
    p.add_argument("--hidden", type=int, default=1000, help="mlp1/mlp2 hidden units (default 1000, the papers')")
    p.add_argument("--rank", type=int, default=1000, help="linear probe's rank bound (default 1000, the papers')")
    p.add_argument("--dropout", type=float, default=0.0, help="Adam probes' dropout (default 0, the papers')")
    p.add_argument("--weight-decay", type=float, default=0.0, help="Adam probes' weight decay (default 0)")
    p.add_argument("--max-epochs", type=int, default=40, help="Adam probes' epoch cap (default 40)")
    p.add_argument("--batch-sentences", type=_positive_int, default=20, help="sentences per Adam step (default 20)")
    add_random_init_arguments(p)
    p.add_argument("--rows", default=None,
                   help="probe only these rows, a comma list of layer_<k> / average / glove (default: every row)")
