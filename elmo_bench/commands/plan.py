"""``elmo-bench plan OVERRIDES...``: what the runs of a config or sweep will cost, without training them.

The overrides are Hydra overrides of ``conf/config.yaml``, as ``run.py`` takes them; an experiment's sweep
(``hydra.sweeper.params``, e.g. ``experiment=paper_table1``) and comma lists on the command line expand to their
cartesian product, one planned run each, with the command line winning over the experiment (``task=srl`` plans
a slice). Per run:

* examples and tokens per split (tokens: every text field of every example, as the head reads them), read from
  the configured data; where it cannot be read here (a hub dataset offline), examples from the task's declared ``dataset_sizes``
  and tokens per example from the task's local stand-in data (``sizes: documented``), or, with no documented
  count, the stand-in's own sizes (``sizes: proxy``);
* ``encoder_flops``: the frozen encoder's forward FLOPs to fill the activation cache (``encoder_flops_per_token``
  per word position, elmo_bench.encoders.costs: the biLM formula for ``bilm`` and ``manylangs``, counted from the
  model for ``transformers``, 0 for ``hdf5``, null with ``encoder_note`` for ``python``), over every distinct
  sequence of every split and text field (a biLM: each segment of ``max_segment`` tokens plus its
  ``<S>``/``</S>``); ``cache_bytes``: those distinct tokens x layers x dim x 2 bytes (fp16,
  elmo_bench.encoders.cache; hdf5: the file's size). ``bilm_flops`` and ``bilm_flops_per_token`` are aliases;
* ``head_params``: the task head's parameters (GloVe table, biLM and ScalarMixes not counted, as in the presets);
* ``train_flops_per_epoch``: forward + backward FLOPs measured with ``torch.utils.flop_counter.FlopCounterMode``
  on a few sample batches of the train split (oneDNN / cuDNN RNN kernels switched off while counting, since the
  counter does not see inside them), per token, times the train split's tokens; the dev split's forward FLOPs
  per epoch likewise (``eval_flops_per_epoch``);
* ``peak_memory_bytes`` of one training step on the device used: on CUDA ``torch.cuda.max_memory_allocated``
  over forward, backward and the optimiser step; on the CPU (where no allocator statistic exists, and
  tracemalloc does not see torch's allocations) the bytes of the tensors saved for backward, counted by storage
  through ``torch.autograd.graph.saved_tensors_hooks``, plus parameters, gradients and optimiser state (Adam and
  Adadelta keep two tensors per parameter); the largest over the sample batches;
* ``epochs``: the trainer's ``max_epochs`` (an upper bound: early stopping ends most runs sooner);
* ``gpu_hours``: (encoder_flops + epochs x (train + eval FLOPs per epoch) + the test split's forward) / the sustained
  throughput ``--gpu-tflops``. A cache entry is shared by every run over the same data (seeds, embedder arms),
  so ``total_gpu_hours`` counts each entry's biLM FLOPs once; a run's own ``gpu_hours`` assumes a cold cache;
* ``cpu_seconds``: the run's predicted wall time on a CPU, one thread, and ``total_cpu_seconds`` the sweep's, run
  after run (the first run over each cache entry fills it): elmo_bench.commands.plan_cpu, at the rates measured
  here, or timed on this machine with ``--measure-cpu``.

Probe runs (``probe=<name>``, issue 44) are planned too, one row each beside the task runs (elmo_bench.commands.
plan_probe: every number and formula). ``-m`` is accepted as run.py takes it (plan always expands the sweep)::

    elmo-bench plan probe=structural                          # one probe on the shipped biLM
    elmo-bench plan probe=mdl probe.max_train_sentences=2000 encoder=transformers encoder.path=DIR
    elmo-bench plan -m probe=structural,mdl                   # a sweep: a row per probe
    elmo-bench plan -m experiment=probe_suite budget=cpu      # the suite: five rows under the cpu budget
    elmo-bench plan probe=wsd --format json                   # runs[]: probe, encoder, seed, splits, ...

A probe row gives the sentences and tokens per split the probe sends through the encoder (read here as the probe
reads them, ``probe.max_train_sentences`` applied; its documented sizes, ``sizes: documented``, when the data is not
readable here), the encoder's FLOPs and the activation cache's bytes over them (each split one cache entry: fp16
layers of its distinct sentences plus their index), the probe's training FLOPs from its declared formula (each
full-batch L-BFGS fit at its expected iterations, the mean of the committed records' fits, at L-BFGS's own CPU rate;
Adam probes at ``max_epochs`` epochs; the upper bound, ``max_iter`` iterations a fit, beside it as ``train bound``
and ``CPU bound``), and GPU hours and CPU time as for a task
run; probes that read the same sentences share the cache, so a suite fills it once. ``--measure-cpu`` times task
runs only; probe rows keep the given rates.
"""
from __future__ import annotations

import dataclasses
import json
import math
import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Any, Sequence

import torch

from elmo_bench.base.arguments import ArgumentParser
from elmo_bench.base.device import check_device_spec, resolve_device
from elmo_bench.base.errors import DataError
from elmo_bench.base.hub_offline import local_hub_only
from elmo_bench.commands.compose import expand_sweep, job_run
from elmo_bench.commands.plan_cpu import (
    MEASURED,
    TIMED_BATCHES,
    CpuRates,
    sweep_cpu_seconds,
    time_encoder,
    time_training_steps,
)
from elmo_bench.commands.plan_measure import (
    Measured,
    SplitSizes,
    glove_dim,
    measure_model,
    read_splits,
    sample_model,
    split_sizes,
)
from elmo_bench.commands.plan_probe import plan_probe_run
from elmo_bench.commands.plan_table import plan_table
from elmo_bench.encoders.costs import EncoderCost, bilm_options, cache_numbers, encoder_cost, segment_positions
from elmo_bench.engine.encoder_sweep import encoder_sweep_args, swept_options
from elmo_bench.engine.experiment import canonical_run_mix, load_task, trainer_config
from elmo_bench.engine.prepare import distinct_text, load_encoder_info
from elmo_bench.engine.probe_config import ProbeRunConfig
from elmo_bench.engine.run_config import RunConfig
from elmo_bench.tasks.registry import declaration

#: sustained TFLOP/s for --gpu: 30% of the dense bf16 (V100, T4: fp16) tensor-core peak of the vendor's data sheet
GPU_TFLOPS: dict[str, float] = {"a100": 94.0, "h100": 297.0, "h200": 297.0, "v100": 38.0, "t4": 20.0, "l4": 36.0}
GPU_PEAKS = {"a100": 312, "h100": 989, "h200": 989, "v100": 125, "t4": 65, "l4": 121}

#: the local stand-in data whose tokens per example (and distinct-sequence share) fill in a documented dataset
STAND_IN = "default_{task}"


# ------------------------------------------------------------------------------------------------------------- plan

def _bilm_options(run: RunConfig) -> tuple[Any, str]:
    """The biLM's options (the configured file, or the public ELMo architecture when it is not readable here)."""
    return bilm_options(run.encoder.bilm.options)


def _encoder_cost(run: RunConfig, options: Any, options_source: str, data: dict[str, Any], memo: dict[str, Any]
                  ) -> EncoderCost:
    """The run's encoder cost (elmo_bench.encoders.costs), once per encoder config: the biLM of ``options``
    unless ``encoder=`` names another kind, whose subword counts come from the sample's text."""
    spec = run.encoder.plain()
    key = json.dumps(["encoder", spec, options.to_dict()], sort_keys=True, default=str)
    if key not in memo:
        fields = data["task"].text_fields
        sentences = [e[f] for e in data["sample_train"][:200] for f in fields]
        memo[key] = encoder_cost(spec, options, options_source, sentences, amp=run.runtime.amp)
    return memo[key]


def _model_key(run: RunConfig, data_key: str, options: Any) -> str:
    """What the measured model depends on: runs that share it are measured once."""
    config = run.config()
    parts = [config[group] for group in ("task", "embedder", "mix", "trainer")]
    return json.dumps([data_key, *parts, options.to_dict(), str(run.runtime.amp)], sort_keys=True)


def plan_run(overrides: Sequence[str], run: RunConfig, device: torch.device, n_batches: int,
             memo: dict[str, Any]) -> dict[str, Any]:
    """One planned run (see the module docstring for every number); ``run``: its RunConfig, through the door."""
    task_name = run.task.name
    options, options_source = _bilm_options(run)
    max_segment = int(run.runtime.max_segment)
    data_key = json.dumps([task_name, run.data.plain(),
                           int(run.runtime.seed) if run.data.fraction < 1 else None], sort_keys=True)
    if data_key not in memo:
        memo[data_key] = _data_plan(run, task_name, overrides, max_segment)
    data = memo[data_key]
    task = data["task"]

    use_elmo = bool(run.embedder.elmo)
    cost = _encoder_cost(run, options, options_source, data, memo)
    if use_elmo:  # mix.layer past the encoder's top: the line run.py gives, not the model's traceback
        canonical_run_mix(run, cost.indices())
    model_key = _model_key(run, data_key, options) + cost.source
    if model_key not in memo:
        memo[model_key] = measure_model(run, task, data["sample_train"], cost.num_layers, cost.dim,
                                        glove_dim(run), device, n_batches)
    measured: Measured = memo[model_key]

    sizes = data["splits"]
    epochs = trainer_config(run, run.data.fraction).max_epochs
    positions = sum(s.positions for s in sizes.values())
    distinct = sum(s.distinct_tokens for s in sizes.values())
    per_pass = epochs * sum(s.positions if cost.segment_markers else s.tokens   # no cache: every epoch's batches
                            for k, s in sizes.items() if k in ("train", "dev"))
    encoder = (cache_numbers(cost, positions, distinct, per_pass, bool(run.runtime.cache)) if use_elmo
               else {"encoder_flops": 0, "cache_bytes": 0})
    train_tokens = sizes["train"].tokens
    dev_tokens = sizes["dev"].tokens if "dev" in sizes else 0
    test_tokens = sum(s.tokens for k, s in sizes.items() if k not in ("train", "dev"))
    train_flops = measured.train_flops_per_token * train_tokens
    eval_flops = measured.eval_flops_per_token * dev_tokens
    head_flops = epochs * (train_flops + eval_flops) + measured.eval_flops_per_token * test_tokens
    return {
        "task": task_name, "embedder": run.embedder.name, "seed": int(run.runtime.seed),
        "train_examples": sizes["train"].examples, "tokens": train_tokens,
        "encoder_flops": encoder["encoder_flops"], "bilm_flops": encoder["encoder_flops"],  # bilm_*: aliases
        "cache_bytes": int(encoder["cache_bytes"]), "head_params": measured.head_params,
        "train_flops_per_epoch": int(train_flops), "peak_memory_bytes": int(measured.peak_memory_bytes),
        "train_flops_per_token": measured.train_flops_per_token, "encoder_layers": cost.num_layers,
        "encoder_dim": cost.dim,
        "epochs": epochs, "gpu_hours": None,             # filled by plan() at the chosen throughput
        "data": str(run.data.name), "sizes": data["sizes"], "size_source": data["source"],
        "splits": {k: {"examples": s.examples, "tokens": s.tokens} for k, s in sizes.items()},
        "eval_flops_per_epoch": int(eval_flops), "head_flops_total": int(head_flops),
        "bilm": cost.options_file, "encoder": cost.source,
        "encoder_flops_per_token": cost.flops_per_position, "bilm_flops_per_token": cost.flops_per_position,
        "encoder_params": cost.params, "weight_bytes": cost.weight_bytes, "encoder_layer_indices": cost.indices(),
        **({"encoder_note": cost.note} if cost.note else {}),
        **({"encoder_devices": dict(cost.devices)} if cost.devices else {}),
        "cache_key": data_key if use_elmo and run.runtime.cache else None,
        "memory_method": measured.memory_method, "memory_device": str(device),
        "sample": {"batches": measured.sample_batches, "tokens": measured.sample_tokens,
                   "from": data["sample_from"]},
    }


def _data_plan(run: RunConfig, task_name: str, overrides: Sequence[str], max_segment: int) -> dict[str, Any]:
    """Split sizes of the run's data (measured, documented or from the stand-in) and the train examples to sample."""
    task = load_task(task_name)
    splits = read_splits(run, task)
    name = str(run.data.name)
    if splits is not None:
        task.fit_labels(splits)
        sizes = {k: split_sizes(task, v, max_segment) for k, v in splits.items()}
        return {"task": task, "splits": sizes, "sizes": "measured", "source": f"{name} read here",
                "sample_train": splits["train"], "sample_from": name}
    stand_in_run = job_run([*overrides, f"data={STAND_IN.format(task=task_name)}"], check=False)
    stand_in = read_splits(stand_in_run, task)
    if stand_in is None:
        raise DataError(f"plan: data {name!r} of task {task_name} cannot be read here, nor its stand-in "
                        f"{STAND_IN.format(task=task_name)} ({stand_in_run.data.name}); expected the data under "
                        f"paths.data_root or a readable data config")
    task.fit_labels(stand_in)
    local = {k: split_sizes(task, v, max_segment) for k, v in stand_in.items()}
    documented = declaration(task_name).dataset_sizes.get(name)  # the task's own (tasks/<name>/config.py)
    if documented is None:
        return {"task": task, "splits": local, "sizes": "proxy",
                "source": f"{name} not readable here and no documented size: the stand-in "
                          f"{stand_in_run.data.name}'s measured sizes", "sample_train": stand_in["train"],
                "sample_from": str(stand_in_run.data.name)}
    fraction = run.data.fraction
    sizes = {}
    for split in ("train", "dev", "test"):
        proxy = local.get(split) or local["train"]
        count = documented[split] if split != "train" else max(1, math.ceil(documented[split] * fraction))
        scale = count / max(proxy.examples, 1)
        sizes[split] = SplitSizes(count, round(proxy.tokens * scale), round(proxy.positions * scale),
                                  round(proxy.distinct_tokens * scale))
    return {"task": task, "splits": sizes, "sizes": "documented",
            "source": f"{documented['source']}; tokens per example and distinct share from "
                      f"{stand_in_run.data.name}", "sample_train": stand_in["train"],
            "sample_from": str(stand_in_run.data.name)}


def measured_cpu_rates(config: RunConfig, run: dict[str, Any], rates: CpuRates) -> CpuRates:
    """``rates`` with the head's throughput timed here: the run's model trained on the CPU over one epoch's
    training batches (at most plan_cpu.TIMED_BATCHES; the FLOPs per token plan counted on its sample batches, times
    their tokens, over the seconds), and the biLM's forward over 200 training sentences (plan_cpu.time_encoder)."""
    task = load_task(config.task.name)
    splits = read_splits(config, task)
    if splits is None:
        raise DataError(f"plan --measure-cpu: the data of {config.task.name} ({config.data.name}) is not readable "
                        f"here")
    task.fit_labels(splits)
    built = sample_model(config, task, splits["train"], *_layer_shape(run), glove_dim(config), TIMED_BATCHES)
    seconds = time_training_steps(built.model, built.collator, built.sample, built.batches, built.trainer)
    tokens = sum(len(built.sample[i][f]) for rows in built.batches for i in rows for f in task.text_fields)
    head = run["train_flops_per_token"] * tokens / seconds / 1e9
    timed = f"head {head:.1f} GFLOP/s timed here over {len(built.batches)} training batches of {config.task.name}"
    if config.embedder.elmo and run["bilm"] is not None and run["encoder_flops_per_token"]:  # the biLM's formula
        encoder, _ = load_encoder_info(config.encoder, config.runtime.amp)
        sentences = distinct_text(task, splits["train"])[:200]
        max_segment = int(config.runtime.max_segment)
        seconds = time_encoder(encoder, sentences, max_segment)
        flops = sum(segment_positions(len(x), max_segment) for x in sentences) * run["encoder_flops_per_token"]
        timed += f", encoder {flops / seconds / 1e9:.1f} GFLOP/s on 200 of its training sentences"
        rates = rates.with_encoder(flops / seconds / 1e9, rates.source)
    return rates.with_head(head, f"{timed}; the run overhead {rates.source}")


def _layer_shape(run: dict[str, Any]) -> tuple[int, int]:
    return int(run["encoder_layers"]), int(run["encoder_dim"])


def _cpu_prices(configs: Sequence[RunConfig], runs: list[dict[str, Any]], cpu_rates: CpuRates,
                measure_cpu: bool) -> dict[str, Any]:
    """Each run's ``cpu_seconds`` and ``cpu_head_gflops`` (set in ``runs``; with ``measure_cpu`` the head's rate
    timed once per task, on its first run's model), and the sweep's ``total_cpu_seconds`` and ``cpu_rates``."""
    per_run = [cpu_rates] * len(runs)
    if measure_cpu:
        timed: dict[str, CpuRates] = {}
        for i, (config, run) in enumerate(zip(configs, runs)):
            if isinstance(config, ProbeRunConfig):          # a probe row keeps the given rates
                continue
            if run["task"] not in timed:
                timed[run["task"]] = measured_cpu_rates(config, run, cpu_rates)
            per_run[i] = timed[run["task"]]
    cpu = sweep_cpu_seconds(runs, [run["cache_key"] for run in runs], per_run)
    for run, seconds, rates in zip(runs, cpu, per_run):
        run["cpu_seconds"], run["cpu_head_gflops"] = seconds, rates.head_gflops
        if "lbfgs_flops_bound" in run:   # a probe row: its L-BFGS fits at max_iter iterations each (the rest as is)
            run["cpu_seconds_bound"] = seconds + (run["lbfgs_flops_bound"] - run["lbfgs_flops"]) / (
                rates.lbfgs_gflops * 1e9)
    if len(set(per_run)) == 1:
        return {"total_cpu_seconds": sum(cpu), "cpu_rates": dataclasses.asdict(per_run[0])}
    return {"total_cpu_seconds": sum(cpu),
            "cpu_rates": {"head_gflops": None, "encoder_gflops": None, "run_overhead_s": cpu_rates.run_overhead_s,
                          "lbfgs_gflops": cpu_rates.lbfgs_gflops,
                          "source": "rates timed here per task (each run's cpu_head_gflops); "
                                    + "; ".join(sorted({r.source for r in per_run}))}}


def plan(overrides: Sequence[str], gpu_tflops: float, device: torch.device, n_batches: int = 2,
         cpu_rates: CpuRates = MEASURED, measure_cpu: bool = False, stride: int | None = None) -> dict[str, Any]:
    """Every planned run with its GPU hours at ``gpu_tflops`` sustained and its CPU seconds at ``cpu_rates``
    (timed here first with ``measure_cpu``), and the totals (shared caches once); ``stride``: mix=all_modes's."""
    overrides = encoder_sweep_args(["plan", *overrides])[1:]  # encoder=a,b encoder.<key of b>=v: ++ where one lacks it
    jobs = expand_sweep(overrides, stride)
    sweeping = bool(swept_options(overrides))
    configs = [job_run(job, multirun=sweeping) for job in jobs]  # every job through the door before any is priced
    memo: dict[str, Any] = {}
    runs = [plan_probe_run(run, memo) if isinstance(run, ProbeRunConfig) else plan_run(job, run, device, n_batches,
                                                                                       memo)
            for job, run in zip(jobs, configs)]
    cpu = _cpu_prices(configs, runs, cpu_rates, measure_cpu)
    rate = gpu_tflops * 1e12 * 3600
    total, seen = 0.0, set()
    for run in runs:
        run["gpu_hours"] = ((run["encoder_flops"] or 0) + run["head_flops_total"]) / rate  # None: encoder_note
        total += run["head_flops_total"] / rate
        if run["cache_key"] is None or run["cache_key"] not in seen:
            total += (run["encoder_flops"] or 0) / rate
            seen.add(run["cache_key"])
    for run in runs:
        run.pop("cache_key")
    return {"runs": runs, "total_gpu_hours": total, "gpu_tflops": gpu_tflops, "device": str(device), **cpu}


# -------------------------------------------------------------------------------------------------------------- CLI

def build_parser() -> ArgumentParser:
    """``elmo-bench plan``'s arguments: Hydra overrides as run.py takes them, and the pricing flags."""
    presets = ", ".join(f"{k} {v:g} (peak {GPU_PEAKS[k]})" for k, v in GPU_TFLOPS.items())
    parser = ArgumentParser(
        prog="elmo-bench plan",
        description="Cost of the runs a config or sweep would launch (e.g. experiment=paper_table1), without "
                    "training: examples and tokens, biLM FLOPs and cache bytes, head parameters, training FLOPs "
                    "per epoch, peak memory of one batch, epochs, GPU hours.",
        epilog=f"--gpu presets, sustained TFLOP/s = 30% of the dense bf16 peak (V100, T4: fp16): {presets}.")
    parser.add_argument("overrides", nargs="*", help="Hydra overrides, as run.py takes them")
    parser.add_argument("-m", "--multirun", action="store_true",
                        help="accepted as run.py takes it; plan always expands a sweep into its runs")
    parser.add_argument("--format", choices=["table", "json"], default="table")
    parser.add_argument("--gpu", choices=sorted(GPU_TFLOPS), default="a100",
                        help="GPU whose sustained throughput prices the runs (default a100: 94 TFLOP/s)")
    parser.add_argument("--gpu-tflops", type=float, default=None,
                        help="sustained TFLOP/s, overriding --gpu (e.g. 94 for an A100 at 30%% of 312)")
    parser.add_argument("--device", default="auto",
                        help="where peak memory is measured: auto (a GPU when torch sees one) | cpu | cuda | cuda:N")
    parser.add_argument("--sample-batches", type=int, default=2, help="train batches measured per distinct model")
    parser.add_argument("--stride", type=int, default=None, metavar="K",
                        help="mix=all_modes over every K-th of the encoder's layers and the last, as "
                             "elmo-bench modes --stride K (default: every layer)")
    parser.add_argument("--online", action="store_true", help="let hub datasets download (default: local cache only)")
    parser.add_argument("--cpu-gflops", type=float, default=None,
                        help=f"a CPU thread's sustained GFLOP/s for the task head (default {MEASURED.head_gflops:g}, "
                             f"measured here) in the predicted CPU wall time")
    parser.add_argument("--measure-cpu", action="store_true",
                        help="time the first run's model on this machine's CPU (one thread) for the head's rate")
    return parser


def plan_main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_intermixed_args(argv)   # plan A=1 --device cpu B=2: both overrides, the flag between them
    if args.gpu_tflops is not None and not args.gpu_tflops > 0:
        parser.error(f"--gpu-tflops expected a number > 0, found {args.gpu_tflops}")
    if args.sample_batches < 1:
        parser.error(f"--sample-batches expected an integer >= 1, found {args.sample_batches}")
    with nullcontext() if args.online else local_hub_only():  # hub reads without a network retry for minutes
        return _plan_command(parser, args)


def plan_device(spec: str) -> tuple[torch.device, str | None]:
    """Where plan measures a task head's peak memory, and why it is not the device asked for: a plan only prices,
    so ``--device cuda`` on a machine without a GPU counts the memory the CPU way (module docstring) and says so,
    instead of refusing (GPU hours do not depend on this machine)."""
    spec = check_device_spec(spec, "--device")
    if spec not in ("auto", "cpu") and not torch.cuda.is_available():
        return torch.device("cpu"), f"--device {spec}: no GPU here, so peak memory counted the CPU way"
    return resolve_device(spec, "--device"), None


def _plan_command(parser: Any, args: Any) -> int:
    device, device_note = plan_device(args.device)
    tflops = args.gpu_tflops if args.gpu_tflops is not None else GPU_TFLOPS[args.gpu]
    if args.cpu_gflops is not None and not args.cpu_gflops > 0:
        parser.error(f"--cpu-gflops expected a number > 0, found {args.cpu_gflops}")
    if args.cpu_gflops is not None and args.measure_cpu:  # both set the head's rate: one would be dropped unsaid
        parser.error(f"--cpu-gflops {args.cpu_gflops:g} and --measure-cpu both set the head's CPU rate (given by "
                     f"hand, or timed here); give one")
    rates = MEASURED if args.cpu_gflops is None else MEASURED.with_head(args.cpu_gflops, "--cpu-gflops")
    result = plan(args.overrides, tflops, device, args.sample_batches, rates, args.measure_cpu, args.stride)
    if device_note:
        result["device_note"] = device_note
    if args.format == "json":
        sys.stdout.write(json.dumps(result) + "\n")
    else:
        print(plan_table(result))
    return 0
