"""probe-pos with the papers' probes and/or the control task: run them, print one JSON object, write results.json.

Printed (and recorded in results.json, same shape): ``"test"`` / ``"dev"`` accuracy per key (``<probe>/<row>``, or
today's bare ``<row>`` when the converged probe runs alone) plus ``most_frequent_tag``; with ``--control``
``"control"`` and ``"selectivity"`` = ``{"dev": {key: acc}, "test": {key: acc}}``; ``"sd"`` (standard deviations
over seeds, same shapes, several seeds only); ``"best_layer"`` per probe (test split: best and runner-up layer,
difference, paired-bootstrap p-value over sentences); ``"probing"`` (probes, seeds, knobs, regimen); the converged
probe's ``"l2"`` and ``"converged"`` per key. Every accuracy is the mean over seeds, in percent.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

import torch

from elmo_bench.base.paths import REPO
from elmo_bench.probe.pos_controls import ProbeSettings, probe_details, rounded, run_probes, summarise
from elmo_bench.probe.wsd_cli import bilm_name
from elmo_bench.records.run_record import RESULTS_FILE, RunRecord, git_commit

#: the summary's accuracy trees, printed to 2 decimals (p-values to 4); knobs and L2 values print as they are
ROUNDED = ("dev", "test", "control", "selectivity", "sd", "best_layer")


def probe_and_write(args: argparse.Namespace, settings: ProbeSettings, splits: Mapping[str, Sequence[dict]],
                    labels: Sequence[str], views: Mapping[str, Any], baseline: Mapping[str, float],
                    bilm: Mapping[str, Any], head: Mapping[str, Any], device: torch.device,
                    started: float) -> dict[str, Any]:
    """Train every probe, summarise, write OUT/results.json (with ``--out``); returns the printed summary."""
    outcome = run_probes(views, splits, labels, settings, device)
    scores = summarise(outcome, settings, [len(ex["tokens"]) for ex in splits["test"]])
    for split in ("dev", "test"):
        scores[split]["most_frequent_tag"] = baseline[split]
    converged = {settings.key("converged", row): fits[0].extra for (probe, row), fits in outcome.real.items()
                 if probe == "converged"}
    summary = {**head, **scores, "probing": settings.record()}
    if converged:
        summary["l2"] = {k: e["l2"] for k, e in converged.items()}
        summary["converged"] = {k: e["converged"] for k, e in converged.items()}
    if args.random_init:
        summary["random_init"] = {"mode": args.random_init, "seed": args.random_seed}
    if args.out:
        write(Path(args.out), args, settings, splits, summary, probe_details(outcome, settings), bilm,
              time.perf_counter() - started)
    return {k: rounded(v) if k in ROUNDED else v for k, v in summary.items()}


def write(out: Path, args: argparse.Namespace, settings: ProbeSettings, splits: Mapping[str, Sequence[dict]],
          summary: Mapping[str, Any], details: Mapping[str, Any], bilm: Mapping[str, Any], seconds: float) -> None:
    """OUT/results.json (task ``pos_probe``): metrics ``<key>_accuracy`` per split, the rest of the summary beside."""
    metrics = {split: {f"{k}_accuracy": v for k, v in summary[split].items()} for split in ("dev", "test")}
    config = dict(vars(args))
    config["choices"] = {"task": "pos_probe", "data": "ud_ewt_pos", "bilm": bilm_name(args.options), "embedder": "elmo"}
    full = len(splits["train"]) if not args.max_train_sentences else None
    extra = {k: summary[k] for k in ("control", "selectivity", "sd", "best_layer", "probing", "random_init")
             if k in summary}
    out.mkdir(parents=True, exist_ok=True)
    RunRecord(
        task="pos_probe", embedder="elmo", seed=settings.seeds[0], config=config,
        data={"name": "ud_ewt_pos", "fraction": 1.0, "train_sentences": len(splits["train"]),
              "all_train_sentences": full, "tag_column": args.tag_column, "dev_sentences": len(splits["dev"]),
              "test_sentences": len(splits["test"])},
        metrics=metrics, main_metric=f"{settings.key(settings.probes[0], 'layer_1')}_accuracy",
        probes=dict(details), mixes={}, elmo=None, epochs={"run": 0, "best": None, "history": []},
        timings={"total_seconds": seconds, "bilm_seconds": bilm["seconds_in_bilm"]},
        bilm={"name": bilm_name(args.options), **{k: v for k, v in bilm.items()
                                                    if k not in ("seconds_in_bilm", "encoder")}}
        if args.encoder == "bilm" else None,
        encoder=bilm["encoder"], extra=extra, git_commit=git_commit(REPO),
    ).write(out / RESULTS_FILE)
