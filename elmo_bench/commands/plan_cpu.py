"""``plan``'s CPU wall-time prediction (issue 38 item 3): the FLOPs ``plan`` already counts, over throughputs
measured on a CPU, one thread (run.py's ``threads=1``).

Per run: ``run_overhead_s`` (reading and checking the data, building the model, the final evaluation's decoding:
measured as a run's time outside its epochs) + ``head_flops_total`` / ``head_gflops`` (every epoch's training and
dev evaluation and the test split's forward: plan.plan_run) + a cold activation cache's ``encoder_flops`` /
``encoder_gflops``, counted once per cache entry (the first run over the data computes it, the others read it).
The process start (importing torch, composing the config: a few seconds a run) is not in a run's
``timings.total_seconds`` and not in the prediction either.

The default rates (:data:`MEASURED`) were measured on the 2-core machine the committed edge-probing evidence ran on
(docs/edge-probing.md says how); ``elmo-bench plan --measure-cpu`` times the run's own model on this machine's CPU
instead, over one epoch's training batches (at most TIMED_BATCHES of them: :func:`time_training_steps`) and the
biLM over 200 training sentences (:func:`time_encoder`), ``--cpu-gflops`` sets the head's rate by hand."""
from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any, Mapping, Sequence

import numpy as np

#: the training batches ``--measure-cpu`` times (a budget=cpu edge epoch has 63): beyond them the rate is extrapolated
TIMED_BATCHES = 200


@dataclass(frozen=True)
class CpuRates:
    """Sustained throughputs of one CPU thread and the fixed cost of a run; ``source``: where they come from."""

    head_gflops: float          # a task head's training step and evaluation on cached layers
    encoder_gflops: float       # the frozen encoder's forward pass filling the activation cache
    run_overhead_s: float       # a run's seconds outside its epochs and its cache fill
    source: str
    lbfgs_gflops: float = 45.0  # a probe's full-batch L-BFGS fit (one large product a pass): see MEASURED

    def with_head(self, gflops: float, source: str) -> "CpuRates":
        return replace(self, head_gflops=gflops, source=source)

    def with_encoder(self, gflops: float, source: str) -> "CpuRates":
        return replace(self, encoder_gflops=gflops, source=source)


#: measured on that machine, niced, one thread, while other jobs shared its 2 cores (load 4-5): the head's rate is
#: ``elmo-bench plan task=edge_pos embedder=elmo budget=cpu --device cpu --measure-cpu --sample-batches 8`` (9.7 and
#: 10.8 GFLOP/s); the encoder's is the shipped biLM's forward over 400 EWT dev sentences as the cache fill computes it
#: (38.7 and 37.4 GFLOP/s); the overhead is the median, over the 54 committed edge runs (docs/results/edge_probing),
#: of total_seconds minus their epochs' seconds and cache fill (10.0 s: reading the data, the final evaluation)
#: L-BFGS's rate: the committed probe record docs/results/probes/pos_v2_final_4000 (the shipped biLM, 4,000 EWT
#: sentences, one thread, alone on that machine): the FLOPs of its 24 fits at their recorded iterations (6 w K T an
#: iteration, 2.15e13) over its seconds outside the cache fill and the run overhead (477 s): 45 GFLOP/s
MEASURED = CpuRates(head_gflops=10.0, encoder_gflops=38.0, run_overhead_s=10.0,
                    source="rates measured on the project's 2-core CPU machine, one thread", lbfgs_gflops=45.0)


def run_cpu_seconds(run: Mapping[str, Any], rates: CpuRates, cold_cache: bool) -> float:
    """One planned run's predicted seconds (``run``: a row of plan.plan_run); ``cold_cache``: it fills the
    activation cache. None-valued encoder FLOPs (an encoder plan cannot count) add nothing. A probe row's L-BFGS
    part (``lbfgs_flops``) runs at L-BFGS's rate, the rest of its training at the head's."""
    lbfgs = run.get("lbfgs_flops") or 0
    seconds = rates.run_overhead_s + (run["head_flops_total"] - lbfgs) / (rates.head_gflops * 1e9) \
        + lbfgs / (rates.lbfgs_gflops * 1e9)
    if cold_cache:
        seconds += (run["encoder_flops"] or 0) / (rates.encoder_gflops * 1e9)
    return seconds


def sweep_cpu_seconds(runs: Sequence[Mapping[str, Any]], cache_keys: Sequence[Any],
                      rates: CpuRates | Sequence[CpuRates]) -> list[float]:
    """Every run's predicted seconds in order, the first run over each cache entry filling it (``cache_keys``:
    each run's entry, None for a run without a cache, which computes its layers itself); ``rates``: one for all
    runs or one per run."""
    per_run = [rates] * len(runs) if isinstance(rates, CpuRates) else list(rates)
    seen: set[Any] = set()
    out = []
    for run, key, run_rates in zip(runs, cache_keys, per_run):
        out.append(run_cpu_seconds(run, run_rates, cold_cache=key is None or key not in seen))
        seen.add(key)
    return out


def time_training_steps(model: Any, collator: Any, sample: list[dict], batches: list[list[int]],
                        trainer: Any) -> float:
    """Seconds of one pass of training steps (collate, forward, backward, optimiser step) over ``batches`` on the
    CPU with one thread, after two untimed steps (the first steps allocate)."""
    import torch  # lazy: torch

    from elmo_bench.engine.loop import make_optimizer  # lazy: torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    model.to("cpu").train()
    optimizer = make_optimizer(model, trainer)

    def steps(chosen: list[list[int]]) -> None:
        for rows in chosen:
            output = model(collator([sample[i] for i in rows]))
            optimizer.zero_grad()
            (output["loss"] + model.embedder.penalty()).backward()
            optimizer.step()

    try:
        steps(batches[:2])
        started = time.perf_counter()
        steps(batches)
        return time.perf_counter() - started
    finally:
        torch.set_num_threads(threads)


def time_encoder(encoder: Any, sentences: list[list[str]], max_segment: int) -> float:
    """Seconds the encoder takes to compute the layers of ``sentences`` as the cache fill does
    (elmo_bench.encoders.cache.compute_layers), on the CPU with one thread, after an untimed warm-up on a few."""
    import torch  # lazy: torch

    from elmo_bench.encoders.cache_fill import compute_layers  # lazy: torch

    def fill(chunk: list[list[str]]) -> None:
        offsets = np.concatenate([[0], np.cumsum([len(s) for s in chunk])]).astype(np.int64)
        out = np.zeros((int(offsets[-1]), encoder.num_layers, encoder.dim), dtype=np.float16)
        compute_layers(encoder, chunk, out, offsets, max_segment=max_segment, progress=False)

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        fill(sentences[:8])
        started = time.perf_counter()
        fill(sentences)
        return time.perf_counter() - started
    finally:
        torch.set_num_threads(threads)


def format_minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f} min" if seconds < 3 * 3600 else f"{seconds / 3600:.1f} h"
