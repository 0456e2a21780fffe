"""``elmo-bench probe-wsd``'s flags: an alias of ``python run.py probe=wsd`` (the probe: elmo_bench/probe/wsd). The
WSD probe of every layer on the Raganato evaluation sets (paper Table 5).

Writes ``OUT/keys/<set>.<view>.key`` (one predicted key per instance, the framework's answer format, scorable with
``elmo-bench score wsd GOLD PRED``) and ``OUT/results.json`` in the engine's schema: task "wsd", metrics
``{set: {"layer_0_f1": F, ..., "average_f1": F, "mfs_f1": F, "wordnet_first_sense_f1": F, plus _precision,
_recall and _coverage (answered / total, percent)}}``; ``data.coverage`` holds the raw ``[answered, total]``.

"""
from __future__ import annotations

import argparse

from elmo_bench.base.arguments import ArgumentParser
from elmo_bench.base.paths import CACHE_DIR, DATA_ROOT
from elmo_bench.bilm.default import DEFAULT_OPTIONS, DEFAULT_WEIGHTS
from elmo_bench.encoders.segments import MAX_SEGMENT
from elmo_bench.probe.wsd.data import EVAL_SETS
from elmo_bench.probe.wsd.wordnet import DEFAULT_SOURCE as DEFAULT_WORDNET

DATA = DATA_ROOT / "wsd"
DEFAULT_SEMCOR = DATA / "semcor3.0_google_original_format"
DEFAULT_EVAL_ROOT = DATA / "WSD_Evaluation_Framework" / "Evaluation_Datasets"


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog="elmo-bench probe-wsd", description=__doc__.splitlines()[0])
    p.add_argument("--options", default=str(DEFAULT_OPTIONS), help="biLM options.json (default: the shipped biLM)")
    p.add_argument("--weights", default=str(DEFAULT_WEIGHTS), help="biLM weights.hdf5 (default: the shipped biLM)")
    from elmo_bench.encoders.cli_options import add_device_argument, add_encoder_arguments  # lazy: torch

    add_encoder_arguments(p)  # --encoder/--model/--pooling: any frozen encoder instead of the biLM
    add_device_argument(p)
    p.add_argument("--semcor", default=str(DEFAULT_SEMCOR), help="SemCor 3.0 tagfiles directory")
    p.add_argument("--eval-root", default=str(DEFAULT_EVAL_ROOT), help="the framework's Evaluation_Datasets directory")
    p.add_argument("--sets", default=",".join(EVAL_SETS), help="comma-separated evaluation sets")
    p.add_argument("--max-train-sentences", type=int, default=None,
                   help="embed only the first N SemCor sentences (default: all of SemCor; the most-frequent-sense "
                        "counts always use all)")
    p.add_argument("--cache-dir", default=str(CACHE_DIR / "activations"), help="activation cache directory")
    p.add_argument("--max-segment", type=int, default=MAX_SEGMENT)
    p.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    p.add_argument("--wordnet", default=str(DEFAULT_WORDNET),
                   help="WordNet 3.0 database directory (Debian: apt-get install -y wordnet-base)")
    p.add_argument("--wordnet-work", default=str(CACHE_DIR / "nltk_data"),
                   help="where the database is copied for nltk's reader (with a lexnames file)")
    p.add_argument("--no-wordnet", action="store_true",
                   help="no WordNet: no first-sense fallback for lemmas SemCor lacks and no WordNet baseline row")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--out", required=True, help="the run directory (keys/, results.json)")
    return p
