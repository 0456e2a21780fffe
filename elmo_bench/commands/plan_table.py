"""``elmo-bench plan``'s table: task rows, probe rows (elmo_bench.commands.plan_probe), the sweep's totals, the
size notes and one line per counted encoder."""
from __future__ import annotations

from typing import Any, Sequence

from elmo_bench.commands.plan_cpu import format_minutes
from elmo_bench.commands.plan_probe import probe_table
from elmo_bench.commands.text_table import aligned


def _task_table(runs: Sequence[dict[str, Any]]) -> list[str]:
    head = ("task", "embedder", "seed", "sizes", "train ex", "tokens", "enc. FLOPs", "cache GB", "head params",
            "train FLOPs/ep", "peak mem GB", "epochs", "GPU h", "CPU min")
    rows = [head]
    for r in runs:
        rows.append((r["task"], r["embedder"], str(r["seed"]), r["sizes"], f"{r['train_examples']:,}",
                     f"{r['tokens']:,}", "?" if r["encoder_flops"] is None else f"{r['encoder_flops']:.2e}",
                     f"{r['cache_bytes'] / 1e9:.2f}",
                     f"{r['head_params']:,}", f"{r['train_flops_per_epoch']:.2e}",
                     f"{r['peak_memory_bytes'] / 1e9:.2f}", str(r["epochs"]), f"{r['gpu_hours']:.2f}",
                     f"{r['cpu_seconds'] / 60:.1f}"))
    return aligned(rows)


def plan_table(result: dict[str, Any]) -> str:
    """Task rows, then probe rows (each kind its own columns), then the sweep's totals and the size notes."""
    tasks = [r for r in result["runs"] if "task" in r]
    probes = [r for r in result["runs"] if "probe" in r]
    lines = _task_table(tasks) if tasks else []
    if probes:
        lines += ([""] if lines else []) + probe_table(probes)
    bounds = "epochs are max_epochs, early stopping ends most runs sooner"
    if probes:
        bounds += ("; probe training FLOPs: L-BFGS fits at their expected iterations (the mean of the committed "
                   "records' fits), Adam probes at max_epochs; 'bound': every fit at max_iter")
    lines.append(f"\n{len(result['runs'])} runs, {result['total_gpu_hours']:.1f} GPU hours in total at "
                 f"{result['gpu_tflops']:g} TFLOP/s sustained (each activation cache counted once; {bounds})"
                 + (f"; memory measured on {result['device']}" if tasks else "")
                 + (f" ({result['device_note']})" if result.get("device_note") else ""))
    rates = result["cpu_rates"]
    head_rate, encoder_rate = ("per task" if rates[k] is None else f"{rates[k]:.1f} GFLOP/s"
                               for k in ("head_gflops", "encoder_gflops"))
    lbfgs = f"L-BFGS {rates['lbfgs_gflops']:.1f} GFLOP/s, " if any(r.get("lbfgs_flops") for r in probes) else ""
    lines.append(f"predicted CPU wall time, run after run, one thread: {format_minutes(result['total_cpu_seconds'])}"
                 f" (head {head_rate}, encoder {encoder_rate}, {lbfgs}"
                 f"{rates['run_overhead_s']:g} s per run; {rates['source']})")
    notes = sorted({f"{r['task']}/{r['data']}: {r['size_source']}" for r in tasks if r["sizes"] != "measured"}
                   | {f"probe {r['probe']}: {r['size_source']}" for r in probes if r["sizes"] != "measured"})
    return "\n".join(lines + [f"  {n}" for n in notes] + _encoder_lines([*tasks, *probes])
                     + _device_lines([*tasks, *probes]))


def _encoder_lines(runs: Sequence[dict[str, Any]]) -> list[str]:
    """One line per distinct counted encoder: parameters, FLOPs per word position, weight bytes, the layers kept,
    and its note (a config-only model's estimated subword counts)."""
    lines: dict[str, str] = {}
    for r in runs:
        if r.get("encoder_params") is None or r["encoder"] in lines:
            continue
        flops = "?" if r["encoder_flops_per_token"] is None else f"{r['encoder_flops_per_token']:.3g}"
        note = f"; {r['encoder_note']}" if r.get("encoder_note") else ""
        lines[r["encoder"]] = (f"encoder {r['encoder']}: {r['encoder_params']:,} parameters, {flops} FLOPs a word, "
                               f"weights {r['weight_bytes'] / 1e9:.2f} GB, cache layers {r['encoder_layer_indices']} "
                               f"x {r['encoder_dim']} ({r['cache_bytes'] / 1e9:.3f} GB){note}")
    return list(lines.values())


def _device_lines(runs: Sequence[dict[str, Any]]) -> list[str]:
    """A spread encoder's memory per device (``encoder_devices``, one block per distinct encoder and placement):
    weights + one pass's activations against each device's size, and whether the set holds the model."""
    lines: list[str] = []
    seen: set[str] = set()
    for r in runs:
        spread = r.get("encoder_devices")
        key = f"{r['encoder']} {spread}"
        if not spread or key in seen:
            continue
        seen.add(key)
        verdict = {True: "fits", False: "does not fit", None: "no device sizes given (encoder.max_memory)"}
        given = [d for d in spread["devices"] if d["size_bytes"] is not None] or spread["devices"]
        lines.append(f"encoder {r['encoder']} over {len(given)} device{'s' if len(given) > 1 else ''} (device_map="
                     f"{spread['device_map']}, {spread['tokens_per_pass']:,} tokens a pass): "
                     f"{verdict[spread['fits']]}")
        for d in spread["devices"]:
            size = "" if d["size_bytes"] is None else f" of {d['size_bytes'] / 1e9:.1f} GB"
            fits = "" if d["fits"] is None else ("  fits" if d["fits"] else "  too small")
            lines.append(f"  {d['device']}: weights {d['weight_bytes'] / 1e9:.2f} GB + activations "
                         f"{d['activation_bytes'] / 1e9:.2f} GB{size}{fits}")
        if spread.get("run_max_memory") and spread["fits"]:
            room = ",".join(f"{d}:{int(b // 2 ** 20)}MiB" for d, b in spread["run_max_memory"].items())
            lines.append(f"  (placed with each device's size less its activations: run with "
                         f"encoder.max_memory={{{room}}})")
        if spread["offloaded_bytes"]:
            lines.append(f"  {spread['offloaded_bytes'] / 1e9:.2f} GB of weights do not fit the devices given "
                         f"(offloaded to cpu or disk)")
    return lines
