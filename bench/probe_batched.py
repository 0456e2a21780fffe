"""Issue 58: the converged POS probe (``probe=pos``) fitted row by row (``elmo_bench.probe.pos.converged.probe_features``, the
per-layer path: torch's LBFGS, one layer and one L2 at a time, on float32 features as the probe read them before)
against every row of one width in one batched solve (``probe_rows``, the probe's path now, on the cache's dtype),
each path in its own process (so each peak RSS is that path's) on the same warm activation cache.

Features: ``probe=pos budget=cpu`` on the shipped biLM (``--encoder bilm``: 2,000 UD EWT training sentences, full
dev and test, layers 0-2 and their average), or on a random Llama-style decoder of ``--blocks`` blocks of width
``--hidden`` built here from a LlamaConfig (``--encoder llama``: every layer, ``--blocks`` + 1 of them, and their
average, on the first ``--train``/``--dev``/``--test`` sentences of UD EWT), cached under a temporary directory.

Prints one JSON line per path (fitting seconds, not the encoding; peak RSS), one per row (both paths' L2, dev and
test accuracy, iterations per L2) and, last, one JSON object: ``ratio`` (per-layer seconds / batched seconds), both
times, the largest accuracy difference of any row, how many rows are identical, both peak RSS.

    nice -n 10 python bench/probe_batched.py --encoder bilm [--threads 1]
    nice -n 10 python bench/probe_batched.py --encoder llama --blocks 32 --hidden 512 --train 200 --dev 100 --test 100
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # this checkout's elmo_bench and tests, whatever is installed


def features(overrides: list[str], work: Path, dtype=None) -> tuple:
    """(rows {name: {split: array}} as probe=pos builds them, in ``dtype`` (None: the cache's, what the probe reads
    now; float32: what it read before), labels, classes, settings)."""
    from elmo_bench.commands.compose import job_run
    from elmo_bench.engine.probe_run import _context, load_probe_encoder
    from elmo_bench.probe.lib.features import layer_features, tag_ids
    from elmo_bench.probe.lib.ud_data import SPLITS, read_tagged
    from elmo_bench.probe.pos.probe import views
    from elmo_bench.probe.settings import UD_EWT

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
                                len(read.splits[s]), dtype) for s in SPLITS}
    rows = views(settings, read.splits, layers, context.probed_layers(settings.layers))
    print(json.dumps({"rows": len(rows), "dtype": str(layers["train"].dtype),
                      **{f"{s}_tokens": int(len(y[s])) for s in SPLITS}}), file=sys.stderr, flush=True)
    return rows, y, len(labels), settings


def fit(path: str, rows, y, classes, settings) -> dict:
    """One path's fit of every row in this process: seconds, peak RSS and each row's result."""
    from elmo_bench.probe.pos.converged import probe_features, probe_rows

    grid, max_iter, tol = list(settings.l2_grid), settings.max_iter, settings.tol
    started = time.perf_counter()
    if path == "batched":
        found = probe_rows(rows, y, classes, grid, max_iter, tol)
    else:
        found = {name: probe_features(row, y, classes, grid, max_iter, tol) for name, row in rows.items()}
    seconds = time.perf_counter() - started
    return {"path": path, "seconds": round(seconds, 2),
            "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "rows": {name: {"l2": r.l2, "dev": r.dev, "test": r.test, "converged": r.converged,
                            "iterations": [p["iterations"] for p in r.path]} for name, r in found.items()}}


def compare(found: dict) -> dict:
    """The summary of both paths' results (the last line)."""
    batched, per = found["batched"], found["per_layer"]
    names = list(batched["rows"])
    same = [n for n in names if batched["rows"][n] == per["rows"][n]]
    return {"rows": len(names), "batched_s": batched["seconds"], "per_layer_s": per["seconds"],
            "ratio": round(per["seconds"] / batched["seconds"], 3),
            "max_dev_difference": max(abs(batched["rows"][n]["dev"] - per["rows"][n]["dev"]) for n in names),
            "max_test_difference": max(abs(batched["rows"][n]["test"] - per["rows"][n]["test"]) for n in names),
            "rows_identical": len(same), "peak_rss_mib_batched": batched["peak_rss_mib"],
            "peak_rss_mib_per_layer": per["peak_rss_mib"]}


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
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)        # internal: one path, in this process
    parser.add_argument("--overrides", default=None, help=argparse.SUPPRESS)  # internal: the JSON overrides
    parser.add_argument("--work", default=None, help=argparse.SUPPRESS)       # internal: the warm cache's root
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    if args.one:
        dtype = None if args.one == "batched" else "float32"     # the per-layer path reads as it did before
        rows, y, classes, settings = features(json.loads(args.overrides), Path(args.work), dtype)
        print(json.dumps(fit(args.one, rows, y, classes, settings)))
        return
    work = Path(tempfile.mkdtemp(prefix="probe_batched_"))
    overrides = [f"threads={args.threads}", *([f"probe.tags={args.tags}"] if args.tags else [])]
    if args.encoder == "llama":
        overrides += llama(work, args.blocks, args.hidden, {"train": args.train, "dev": args.dev, "test": args.test})
    features(overrides, work)                                  # encodes once: both paths read the warm cache
    found = {}
    for path in ("batched", "per_layer"):
        done = subprocess.run([sys.executable, __file__, "--one", path, "--overrides", json.dumps(overrides),
                               "--work", str(work), "--threads", str(args.threads)], cwd=REPO, capture_output=True,
                              text=True, check=True)
        found[path] = json.loads(done.stdout.strip().splitlines()[-1])
        print(json.dumps({k: v for k, v in found[path].items() if k != "rows"}), flush=True)
    for name in found["batched"]["rows"]:
        print(json.dumps({"row": name, **{p: found[p]["rows"][name] for p in found}}))
    print(json.dumps({"encoder": args.encoder, **compare(found)}))


if __name__ == "__main__":
    main()
