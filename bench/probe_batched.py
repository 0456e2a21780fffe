"""Issue 58: the converged POS probe (``probe=pos``) fitted row by row (``elmo_bench.probe.pos.probe_features``, the
per-layer path: torch's LBFGS, one layer and one L2 at a time) against every row of one width in one batched solve
(``probe_rows``, the probe's path now), in one process on the same features, one after the other.

Features: ``probe=pos budget=cpu`` on the shipped biLM (``--encoder bilm``: 2,000 UD EWT training sentences, full
dev and test, layers 0-2 and their average), or on a random Llama-style decoder of ``--blocks`` blocks of width
``--hidden`` built here from a LlamaConfig (``--encoder llama``: every layer, ``--blocks`` + 1 of them, on the first
``--train``/``--dev``/``--test`` sentences of UD EWT), read from an activation cache under a temporary directory.
The per-layer path gets float32 copies (what it read before issue 58), the batched one the cache's fp16.

Prints one JSON line per row (both paths' L2, dev and test accuracy, iterations) and, last, one JSON object:
``ratio`` (per-layer seconds / batched seconds), both times, the largest accuracy difference of any row and how many
rows chose the same L2. Fitting only is timed (not the encoding).

    nice -n 10 python bench/probe_batched.py --encoder bilm [--threads 1] [--skip-per-layer]
    nice -n 10 python bench/probe_batched.py --encoder llama --blocks 32 --hidden 512 --train 500 --dev 200 --test 200
"""
from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # this checkout's elmo_bench and tests, whatever is installed


def features(overrides: list[str], work: Path) -> tuple:
    """(rows {name: {split: array}} as probe=pos builds them in the cache's dtype, labels, classes, settings)."""
    import numpy as np

    from elmo_bench.commands.plan import job_run
    from elmo_bench.engine.probe_run import _context, load_probe_encoder
    from elmo_bench.probe.pos import SPLITS, layer_features, tag_ids
    from elmo_bench.probe.settings import UD_EWT
    from elmo_bench.probe.ud_data import read_tagged
    from elmo_bench.probes.pos.probe import views

    run = job_run(["probe=pos", "budget=cpu", "probe.glove=false", f"paths.cache_dir={work / 'cache'}",
                   "logger=disabled", "progress=false", *overrides])
    encoder, record, _ = load_probe_encoder(run)
    context = _context(run, work / "run", encoder, record)
    settings = context.settings
    read = read_tagged(context.data_dir(settings.data_dir, UD_EWT), settings.tags, settings.max_train_sentences,
                       settings.max_dev_sentences)
    labels = sorted({t for ex in read.splits["train"] for t in ex["tags"]})
    y = {s: tag_ids(read.splits[s], labels) for s in SPLITS}
    layers = {s: layer_features(context.layers([ex["tokens"] for ex in read.splits[s]], f"pos/{s}"),
                                len(read.splits[s]), None) for s in SPLITS}
    rows = views(settings, read.splits, layers, context.probed_layers(settings.layers))
    print(json.dumps({"rows": len(rows), "dtype": str(layers["train"].dtype),
                      **{f"{s}_tokens": int(len(y[s])) for s in SPLITS}}), flush=True)
    return rows, y, len(labels), settings, np


def compare(rows, y, classes, settings, np, skip_per_layer: bool) -> dict:
    """Both paths on the same rows, the batched one first; one JSON line a row, the summary returned."""
    from elmo_bench.probe.pos import SPLITS, probe_features, probe_rows

    grid, max_iter, tol = list(settings.l2_grid), settings.max_iter, settings.tol
    started = time.perf_counter()
    batched = probe_rows(rows, y, classes, grid, max_iter, tol)
    batched_s = time.perf_counter() - started
    per, per_s = {}, None
    if not skip_per_layer:
        started = time.perf_counter()
        for name, row in rows.items():
            per[name] = probe_features({s: np.asarray(row[s], dtype=np.float32) for s in SPLITS}, y, classes, grid,
                                       max_iter, tol)
        per_s = time.perf_counter() - started
    for name, row in batched.items():
        line = {"row": name, "batched": {"l2": row.l2, "dev": row.dev, "test": row.test,
                                         "iterations": [p["iterations"] for p in row.path],
                                         "converged": row.converged}}
        if name in per:
            other = per[name]
            line["per_layer"] = {"l2": other.l2, "dev": other.dev, "test": other.test,
                                 "iterations": [p["iterations"] for p in other.path], "converged": other.converged}
        print(json.dumps(line), flush=True)
    out = {"rows": len(rows), "batched_s": round(batched_s, 2)}
    if per:
        out.update({"per_layer_s": round(per_s, 2), "ratio": round(per_s / batched_s, 3),
                    "max_dev_difference": max(abs(batched[n].dev - per[n].dev) for n in per),
                    "max_test_difference": max(abs(batched[n].test - per[n].test) for n in per),
                    "same_l2": sum(batched[n].l2 == per[n].l2 for n in per)})
    out["peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return out


def llama(work: Path, blocks: int, hidden: int, counts: dict[str, int]) -> list[str]:
    """The overrides of probe=pos on a random Llama built here and a slice of UD EWT."""
    from bench.encoder_layers import build_model
    from tests.ud_slice import ewt_slice

    model = build_model(work / "llama", blocks, hidden)
    data = ewt_slice(work, counts)
    return ["encoder=transformers", f"encoder.path={model}", f"probe.data_dir={data}",
            f"probe.max_train_sentences={counts['train']}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--encoder", choices=("bilm", "llama"), default="bilm")
    parser.add_argument("--blocks", type=int, default=32)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--train", type=int, default=500, help="llama: training sentences")
    parser.add_argument("--dev", type=int, default=200, help="llama: dev sentences")
    parser.add_argument("--test", type=int, default=200, help="llama: test sentences")
    parser.add_argument("--tags", default=None, help="probe.tags (xpos | upos; default: the probe's)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--skip-per-layer", action="store_true", help="time the batched path alone")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    work = Path(tempfile.mkdtemp(prefix="probe_batched_"))
    overrides = [f"threads={args.threads}", *([f"probe.tags={args.tags}"] if args.tags else [])]
    if args.encoder == "llama":
        overrides += llama(work, args.blocks, args.hidden, {"train": args.train, "dev": args.dev, "test": args.test})
    rows, y, classes, settings, np = features(overrides, work)
    print(json.dumps({"encoder": args.encoder, **compare(rows, y, classes, settings, np, args.skip_per_layer)}))


if __name__ == "__main__":
    main()
