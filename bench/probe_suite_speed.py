"""Issue 58: the probe suite's Adam-trained probes with every layer (and both labellings: the tags and the control
task's) trained together (elmo_bench.probe.lib.stacked) against one problem at a time, both paths in this process,
back to back, on the same features read once from a warm activation cache (the shipped biLM at ``budget=cpu
probe_set=suite seed=0``: 2,000 UD EWT training sentences, layers 0-2, MLP width 256).

- ``pos_controls``: elmo_bench.probe.pos.fits.run_probes(stacked=True|False) on the rows probe=pos_controls probes
  (layers 0-2 and their average), linear (rank 1000) and MLP-1 probes, real and control tags, 10 epochs at most;
- ``mdl``: elmo_bench.probe.mdl.probe.online_codes with the linear probe of every block trained together or per
  layer (the probe's MANY; ``many=None``: the per-layer loop), tags and control labels, 40 epochs at most;
- ``mdl_mlp``: the same with Hewitt & Liang's MLP-1 (width 256).

Prints one JSON line per probe (both paths' fitting seconds, their ratio, whether every number of the probe's
output is identical) and, last, one JSON object with the totals. ``--train N`` fits on the first N training
sentences (a quicker look; the ratios move with the size; MDL takes at least 1,000, its schedule's smallest).

    nice -n 10 python bench/probe_suite_speed.py [--probes pos_controls,mdl,mdl_mlp] [--train 2000] [--threads 1]
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # this checkout's elmo_bench, whatever is installed


def context_of(probe: str, cache: Path, train: int | None) -> tuple:
    """(context, splits, labels, layers {split: (tokens, layers, dim) float32}) of ``probe`` at budget=cpu."""
    from elmo_bench.commands.compose import job_run
    from elmo_bench.engine.probe_run import _context, load_probe_encoder
    from elmo_bench.probe.lib.features import layer_features
    from elmo_bench.probe.lib.ud_data import SPLITS, read_tagged
    from elmo_bench.probe.settings import UD_EWT

    run = job_run([f"probe={probe}", "budget=cpu", "probe_set=suite", "seed=0", f"paths.cache_dir={cache}",
                   "logger=disabled", "progress=false", *([f"probe.max_train_sentences={train}"] if train else [])])
    encoder, record, _ = load_probe_encoder(run)
    context = _context(run, cache.parent / "run", encoder, record)
    settings = context.settings
    dev = settings.max_dev_sentences if probe == "pos_controls" else None     # as each probe reads its data
    read = read_tagged(context.data_dir(settings.data_dir, UD_EWT), settings.tags, settings.max_train_sentences, dev)
    labels = sorted({t for ex in read.splits["train"] for t in ex["tags"]})
    layers = {s: layer_features(context.layers([ex["tokens"] for ex in read.splits[s]], f"pos/{s}"),
                                len(read.splits[s])) for s in SPLITS}
    return context, read.splits, labels, layers


def timed(fn) -> tuple[float, object]:
    started = time.perf_counter()
    found = fn()
    return time.perf_counter() - started, found


def pos_controls(cache: Path, train: int | None) -> dict:
    """Both paths of pos_controls' papers' probes on its rows."""
    import numpy as np

    from elmo_bench.probe.pos.fits import run_probes
    from elmo_bench.probe.pos.probe import probe_settings, views

    context, splits, labels, layers = context_of("pos_controls", cache, train)
    fitting = probe_settings(context.settings)
    fitting.probes = [p for p in fitting.probes if p != "converged"]
    rows = {n: {s: np.asarray(v, dtype=np.float32) for s, v in r.items()}
            for n, r in views(context.settings, splits, layers, context.probed_layers(context.settings.layers)).items()}
    found = {}
    for path, stacked in (("stacked", True), ("per_layer", False)):
        seconds, outcome = timed(lambda: run_probes(rows, splits, labels, fitting, context.device, stacked=stacked))
        found[path] = (seconds, {k: [(f.dev, f.test, f.extra, f.correct.tolist()) for f in v]
                                 for fits in (outcome.real, outcome.control) for k, v in fits.items()})
    return summary("pos_controls", found, {"rows": list(rows), "probes": fitting.probes})


def mdl(probe: str, cache: Path, train: int | None) -> dict:
    """Both paths of mdl / mdl_mlp's online codes (tags and control labels, every layer)."""
    from elmo_bench.probe.lib.control import control_tags
    from elmo_bench.probe.lib.features import tag_ids
    from elmo_bench.probe.mdl.probe import FACTORIES, MANY, online_codes

    context, splits, labels, layers = context_of(probe, cache, train)
    settings = context.settings
    targets = {"task": {s: tag_ids(splits[s], labels) for s in splits},
               "control": control_tags(splits, labels, context.seed)}
    trainer = FACTORIES[settings.probe](len(labels), settings, context.device)
    many = MANY[settings.probe](len(labels), settings, context.device)
    probed = context.probed_layers(settings.layers)
    found = {}
    for path, stacking in (("stacked", many), ("per_layer", None)):
        found[path] = timed(lambda: online_codes(layers, splits, targets, probed, trainer, context.seed, len(labels),
                                                 stacking))
    return summary(probe, found, {"classifier": settings.probe, "layers": [k for _, k in probed]})


def summary(name: str, found: dict, extra: dict) -> dict:
    (stacked, a), (per_layer, b) = found["stacked"], found["per_layer"]
    return {"probe": name, **extra, "stacked_s": round(stacked, 1), "per_layer_s": round(per_layer, 1),
            "ratio": round(per_layer / stacked, 3), "identical": a == b}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--probes", default="pos_controls,mdl,mdl_mlp")
    parser.add_argument("--train", type=int, default=None, help="training sentences (default: the budget's 2,000)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--cache", default=None, help="an activation cache directory to reuse (default: a new one)")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    cache = Path(args.cache) if args.cache else Path(tempfile.mkdtemp(prefix="probe_suite_speed_")) / "cache"
    rows = []
    for probe in args.probes.split(","):
        # MDL's block schedule needs 1,000 training sentences at least (online_code.check_blocks)
        rows.append(pos_controls(cache, args.train) if probe == "pos_controls" else
                    mdl(probe, cache, max(args.train, 1000) if args.train else None))
        print(json.dumps(rows[-1]), flush=True)
    stacked, per_layer = sum(r["stacked_s"] for r in rows), sum(r["per_layer_s"] for r in rows)
    print(json.dumps({"probes": [r["probe"] for r in rows], "threads": args.threads, "train": args.train or 2000,
                      "stacked_s": round(stacked, 1), "per_layer_s": round(per_layer, 1),
                      "ratio": round(per_layer / stacked, 3), "identical": all(r["identical"] for r in rows)}))


if __name__ == "__main__":
    main()
