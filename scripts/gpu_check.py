"""The measuring steps of scripts/gpu_check.sh, one subcommand each, every one writing one JSON file.

    python scripts/gpu_check.py bilm    --device cuda --out OUT/bilm.json    # embed tokens/s, model-FLOP utilisation
    python scripts/gpu_check.py head    --device cuda --out OUT/head.json    # a paper-size head's steps/s (amp)
    python scripts/gpu_check.py compare --bilm OUT/bilm.json --head OUT/head.json --plan OUT/plan.json --out ...

Why: the plan (elmo_bench.commands.plan) prices runs from FLOPs at an assumed sustained throughput; these steps measure the
throughput a GPU really gives on the two costs a run has (filling the activation cache with the public-size biLM,
training a paper-size head) so the assumption can be checked and replaced (``elmo-bench plan --gpu-tflops``).
The biLM is random, of the public ELMo size (elmo_bench.bilm.public): speed does not depend on the values.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from elmo_bench.base.atomic import atomic_write_text  # noqa: E402
from elmo_bench.commands.plan import GPU_PEAKS, GPU_TFLOPS  # noqa: E402

SENTENCES = REPO.parent / "shared" / "data" / "conll2003" / "eng.train"


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def gpu_key(device: torch.device) -> str | None:
    """The --gpu preset of this device (from its name: 'NVIDIA H200' → h200), None on the CPU or an unknown GPU."""
    if device.type != "cuda":
        return None
    name = torch.cuda.get_device_name(device).lower()
    return next((k for k in GPU_PEAKS if k in name), None)


def sentences(count: int) -> list[list[str]]:
    """``count`` real sentences (CoNLL-2003 train when ../shared/data has it) else a fixed invented text."""
    out: list[list[str]] = []
    if SENTENCES.exists():
        current: list[str] = []
        for line in SENTENCES.read_text(encoding="utf-8").splitlines():
            word = line.split(" ")[0]
            if not line.strip() or word == "-DOCSTART-":
                if current:
                    out.append(current)
                    current = []
                if len(out) == count:
                    break
                continue
            current.append(word)
    base = "the committee said on tuesday that profits of the group rose 12 percent in the third quarter".split()
    while len(out) < count:
        out.append(base[: 5 + len(out) % (len(base) - 5)])
    return out[:count]


def bilm_check(device: torch.device, count: int, options: dict[str, Any] | None = None) -> dict[str, Any]:
    """Fill an activation array for ``count`` sentences with the cache's own routine (elmo_bench.encoders.cache.
    compute_layers, the batches the cache uses), after a warm-up; tokens/s and the model-FLOP utilisation
    (FLOPs of elmo_bench.encoders.costs.bilm_flops_per_position per position / seconds / the GPU's dense bf16 peak)."""
    import numpy as np

    from elmo_bench.bilm.public import write_random_bilm
    from elmo_bench.bilm.weights import load_bilm
    from elmo_bench.encoders.cache_fill import compute_layers
    from elmo_bench.encoders.costs import bilm_flops_per_position, segment_positions

    with tempfile.TemporaryDirectory(prefix="gpu_check_bilm_") as tmp:
        bilm = load_bilm(*write_random_bilm(tmp, options)).to(device)
    text = sentences(count)
    offsets = np.zeros(len(text) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(s) for s in text])
    out = np.zeros((int(offsets[-1]), bilm.num_layers, bilm.output_dim), dtype=np.float16)
    warm = text[: max(1, len(text) // 10)]
    compute_layers(bilm, warm, out, offsets[: len(warm) + 1], progress=False)
    bilm.token_encoder.clear_cache()                  # time the char CNN on every word type again
    _sync(device)
    started = time.perf_counter()
    compute_layers(bilm, text, out, offsets, progress=False)
    _sync(device)
    seconds = time.perf_counter() - started
    tokens = int(offsets[-1])
    positions = sum(segment_positions(len(s), 256) for s in text)
    flops = bilm_flops_per_position(bilm.options) * positions
    key = gpu_key(device)
    achieved = flops / seconds / 1e12
    return {"device": str(device), "gpu": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
            "sentences": len(text), "tokens": tokens, "positions": positions, "seconds": seconds,
            "tokens_per_second": tokens / seconds, "flops_per_position": bilm_flops_per_position(bilm.options),
            "achieved_tflops": achieved, "peak_tflops": GPU_PEAKS.get(key) if key else None,
            "mfu": achieved / GPU_PEAKS[key] if key else None,
            "note": "biLM in fp32 (the cache's precision); MFU against the dense bf16 peak, so well below 1 "
                    "by construction; FLOPs count every position (the word-type cache saves part of the char CNN)"}


def head_check(device: torch.device, task: str, amp: str, steps: int, data: str | None = None) -> dict[str, Any]:
    """``steps`` training steps (after two warm-up steps) of the paper-size head of ``task`` at its paper batch
    size, GloVe 300 + ELMo 1024 (random layers of the public biLM's shape), under ``amp``; steps/s, tokens/s and
    the achieved TFLOP/s from FlopCounterMode's count of the same batches (elmo_bench.commands.plan.measure_model)."""
    from elmo_bench.commands.compose import job_run
    from elmo_bench.commands.plan_measure import measure_model, read_splits, sample_model
    from elmo_bench.engine.experiment import load_task
    from elmo_bench.engine.loop import make_optimizer

    overrides = [f"task={task}", "head=paper", "embedder=glove_elmo", "embedder.glove_source=file",
                 f"amp={amp}", f"data={data or f'default_{task}'}"]
    run = job_run(overrides)  # the door's RunConfig
    task_ = load_task(task)
    splits = read_splits(run, task_)
    if splits is None:
        raise SystemExit(f"error: gpu_check head: data {run.data.name!r} of task {task} cannot be read here")
    task_.fit_labels(splits)
    built = sample_model(run, task_, splits["train"], 3, 1024, 300, steps + 2, seed=0)
    model = built.model.to(device)
    optimizer = make_optimizer(model, built.trainer)
    batches = [built.collator([built.sample[i] for i in rows]) for rows in built.batches]
    tokens = [sum(int(f.mask.sum()) for f in b.fields.values()) for b in batches]
    model.train()

    def step(batch: Any) -> float:
        output = model(batch)
        loss = output["loss"] + model.embedder.penalty()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return float(loss.detach())

    losses = [step(b) for b in batches[:2]]
    _sync(device)
    started = time.perf_counter()
    losses += [step(b) for b in batches[2:]]
    _sync(device)
    seconds = time.perf_counter() - started
    timed = len(batches) - 2
    measured = measure_model(run, task_, splits["train"], 3, 1024, 300, device, n_batches=2, seed=0)
    token_rate = sum(tokens[2:]) / seconds if timed else 0.0
    achieved = measured.train_flops_per_token * token_rate / 1e12
    key = gpu_key(device)
    return {"device": str(device), "task": task, "amp": amp, "data": str(run.data.name),
            "batch_size": built.trainer.batch_size, "steps": timed, "seconds": seconds,
            "steps_per_second": timed / seconds if timed else 0.0, "tokens_per_second": token_rate,
            "finite_losses": all(math.isfinite(v) for v in losses),
            "train_flops_per_token": measured.train_flops_per_token, "achieved_tflops": achieved,
            "peak_tflops": GPU_PEAKS.get(key) if key else None,
            "mfu": achieved / GPU_PEAKS[key] if key else None,
            "peak_memory_bytes": measured.peak_memory_bytes,
            "assumed_sustained_tflops": GPU_TFLOPS.get(key) if key else None}


def compare(bilm: dict[str, Any], head: dict[str, Any], plan: dict[str, Any]) -> dict[str, Any]:
    """The plan's run (the same task and head as ``head``) in measured seconds vs its priced GPU hours: the
    sustained TFLOP/s each part really reached, and what ``--gpu-tflops`` would make the plan match."""
    run = next(r for r in plan["runs"] if r["task"] == head["task"] and r["embedder"] == "glove_elmo")
    rate = plan["gpu_tflops"]
    epoch_tokens = run["tokens"]
    head_seconds = epoch_tokens / head["tokens_per_second"] if head["tokens_per_second"] else None
    bilm_seconds = run["bilm_flops"] / (bilm["achieved_tflops"] * 1e12)
    planned_epoch = run["train_flops_per_epoch"] / (rate * 1e12)
    planned_bilm = run["bilm_flops"] / (rate * 1e12)
    return {"task": head["task"], "assumed_tflops": rate,
            "bilm": {"planned_seconds": planned_bilm, "measured_seconds": bilm_seconds,
                     "measured_tflops": bilm["achieved_tflops"], "ratio_measured_to_planned": bilm_seconds / planned_bilm},
            "train_epoch": {"planned_seconds": planned_epoch, "measured_seconds": head_seconds,
                            "measured_tflops": head["achieved_tflops"],
                            "ratio_measured_to_planned": head_seconds / planned_epoch if head_seconds else None},
            "planned_peak_memory_bytes": run["peak_memory_bytes"],
            "measured_peak_memory_bytes": head["peak_memory_bytes"],
            "note": "ratio > 1: slower than the plan assumed; elmo-bench plan --gpu-tflops <measured_tflops> "
                    "prices the sweep at what this GPU reached"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gpu_check.py", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("bilm")
    b.add_argument("--sentences", type=int, default=2000)
    h = sub.add_parser("head")
    h.add_argument("--task", default="srl")
    h.add_argument("--data", default=None, help="data config (default: default_<task>, the local data)")
    h.add_argument("--amp", default="bf16")
    h.add_argument("--steps", type=int, default=20)
    for p in (b, h):
        p.add_argument("--device", default="cuda")
    c = sub.add_parser("compare")
    c.add_argument("--bilm", required=True)
    c.add_argument("--head", required=True)
    c.add_argument("--plan", required=True)
    for p in (b, h, c):
        p.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    from elmo_bench.base.device import resolve_device

    if args.command == "bilm":
        result = bilm_check(resolve_device(args.device), args.sentences)
    elif args.command == "head":
        result = head_check(resolve_device(args.device), args.task, args.amp, args.steps, args.data)
    else:
        result = compare(*(json.loads(Path(p).read_text()) for p in (args.bilm, args.head, args.plan)))
    atomic_write_text(Path(args.out), json.dumps(result, indent=2) + "\n")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
