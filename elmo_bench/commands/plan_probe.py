"""``elmo-bench plan probe=<name> ...``: the cost of a probe run (issue 44), one row per probe job of the sweep, priced
with the encoder cost machinery the task rows use (elmo_bench.encoders.costs) and plan's CPU rates (plan_cpu).

Per probe run:

* ``splits``: sentences and tokens of every split the probe sends through the encoder, read here as the probe reads
  them (its declaration's ``sentences`` function: the train split cut to ``probe.max_train_sentences``); where the
  data is not readable here, the probe's documented full sizes (``sizes: documented``, ``size_source`` says why;
  train cut by ``max_train_sentences``, every sentence counted distinct);
* ``encoder_flops``: the encoder's forward FLOPs to fill the activation cache, one entry per split, each over its
  distinct sentences (a biLM: with ``<S>``/``</S>`` around every segment); with ``cache=false`` every read of a
  split computes its layers again (the probe's ``reads``: structural reads each split once per probed layer);
* ``cache_bytes``: per split entry (elmo_bench.encoders.cache), the fp16 layers (distinct tokens x layers x dim x 2
  bytes) plus its two index arrays (``offsets.npy``: distinct sentences + 1 int64, ``rows.npy``: one int64 a
  sentence, each with numpy's 128-byte header); an hdf5 encoder: the file's size;
* ``train_flops``: the probe's training and scoring over cached layers (its declaration's ``cost`` function, whose
  docstring states the formula: ``train_formula``), every full-batch L-BFGS fit at its expected iterations
  (``lbfgs_iterations``: the mean over the committed records' fits, at most ``max_iter``; ``lbfgs_flops``: that
  part), Adam probes at ``max_epochs`` epochs (an upper bound: early stopping ends them sooner);
  ``train_flops_bound`` and ``lbfgs_flops_bound``: the same with ``max_iter`` iterations a fit (the upper bound),
  ``cpu_seconds_bound`` its CPU time; also ``head_flops_total`` (= ``train_flops``, as the task rows name it) so the
  sweep's totals add both kinds;
* ``gpu_hours`` and ``cpu_seconds`` as for a task run: (encoder + train FLOPs) at the chosen throughput, and the run
  overhead + the L-BFGS FLOPs at L-BFGS's GFLOP/s + the other train FLOPs at the head's + a cold cache's encoder
  FLOPs at the encoder's (plan_cpu); ``weight_bytes`` and ``encoder_params`` as for a task row. Probes
  that read the same sentences share the cache entries (``cache_key``), so a sweep fills them once.

A probe that also reads the encoder's ``random_init=all`` twin (conditional with ``probe.baseline`` naming
``random``: its cost's ``twin``) is priced with a second encoder of the same architecture over the same sentences:
the row's ``encoder_flops`` and ``cache_bytes`` count both, ``twin`` holds the twin's share (equal to the encoder's).

A probe that runs the encoder itself instead of reading the activation cache (``amnesic_lm``: the biLM with erasers
inside and its softmax) declares ``run_cost`` instead of ``cost``: it sees the whole run and gives the encoder FLOPs
too (its docstring says what they count); its row has no cache bytes and no cache key, and its ``sentences`` and
``tokens`` are those of its first split when it reads no train split (amnesic_lm: the dev sentences it scores).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, Mapping, Sequence

from elmo_bench.base.errors import ConfigError, DataError
from elmo_bench.commands.text_table import aligned
from elmo_bench.encoders.costs import EncoderCost, bilm_options, cache_numbers, encoder_cost, segment_positions
from elmo_bench.encoders.kinds import kind_of
from elmo_bench.encoders.random_init import check_random_init
from elmo_bench.engine.probe_config import ProbeRunConfig
from elmo_bench.engine.probe_run import data_root, data_settings
from elmo_bench.probe.probe_cost import (
    EXPECTED_ITERATIONS,
    EXTRA_FITS,
    ProbeCost,
    SplitCount,
    counted,
    cut_train,
)
from elmo_bench.probe.registry import declared_function

#: numpy's .npy header (format 1.0, padded to 64 bytes: 128 for a one-dimensional int64 array)
NPY_HEADER = 128
#: the sentences the encoder's subword count (transformers) is sampled from
COST_SAMPLE = 200
#: where a row's expected L-BFGS iterations come from (``lbfgs_iterations``)
EXPECTED_FIT = {"per_fit": EXPECTED_ITERATIONS, "extra_fits_per_row": round(EXTRA_FITS, 3),
                "source": "mean of the 41 fits the committed records docs/results/probes/pos_v2_final_4000 and "
                          "docs/results/probe_suite/bilm_v2/pos list (elmo_bench.probe.probe_cost); at most max_iter"}


@dataclass
class ProbeSizes:
    """A probe's splits as the encoder sees them: counts per split, the distinct sentences' tokens and encoder
    positions (the cache entry's rows and the fill's work), the positions of every sentence (a live read)."""

    splits: dict[str, SplitCount]
    distinct: dict[str, SplitCount]
    positions: dict[str, int]
    all_positions: dict[str, int]
    kind: str                     # measured | documented
    source: str
    key: str                      # fingerprint of the sentences: probes that read the same share cache entries
    sample: list[list[str]]


def measured_sizes(splits: Mapping[str, Sequence[Sequence[str]]], max_segment: int, source: str) -> ProbeSizes:
    """Sizes of sentences read here (each split one cache entry, deduplicated as the cache does)."""
    distinct = {s: sorted({tuple(x) for x in v}) for s, v in splits.items()}
    digest = hashlib.sha256(json.dumps({s: list(map(list, v)) for s, v in splits.items()}).encode()).hexdigest()
    return ProbeSizes({s: counted(v) for s, v in splits.items()}, {s: counted(v) for s, v in distinct.items()},
                      {s: sum(segment_positions(len(x), max_segment) for x in v) for s, v in distinct.items()},
                      {s: sum(segment_positions(len(x), max_segment) for x in v) for s, v in splits.items()},
                      "measured", source, digest[:16], [list(x) for x in main_split(splits)[:COST_SAMPLE]])


def main_split(splits: Mapping[str, Any]) -> Any:
    """The split a row's ``sentences`` and ``tokens`` count: train, or the first split of a probe that trains
    nothing (amnesic_lm scores dev only)."""
    return splits["train"] if "train" in splits else next(iter(splits.values()))


def documented_sizes(run: ProbeRunConfig, why: str) -> ProbeSizes:
    """The probe's documented sizes (every sentence distinct, one segment each), train cut to
    ``max_train_sentences``; DataError when the probe documents none."""
    declared = run.probe.declaration
    if declared.documented is None:
        raise DataError(f"plan: {why}; probe {declared.name} documents no sizes to price it with")
    names = {spec.name for spec in fields(run.probe.settings)}
    sizes = dict(declared.documented)
    if isinstance(getattr(type(run.probe.settings), "encoded_splits", None), property):   # conditional: dev or not
        sizes = {s: sizes[s] for s in run.probe.settings.encoded_splits}
    for key, split in (("max_train_sentences", "train"), ("max_eval_sentences", "dev"), ("max_dev_sentences", "dev")):
        if key in names:
            sizes = cut_train(sizes, getattr(run.probe.settings, key), split)
    positions = {s: c.tokens + 2 * c.sentences for s, c in sizes.items()}
    key = json.dumps({s: asdict(c) for s, c in sizes.items()}, sort_keys=True)
    return ProbeSizes(sizes, dict(sizes), positions, dict(positions), "documented",
                      f"{why}: the probe's documented sizes ({declared.data})", key, [])


def data_here(run: ProbeRunConfig) -> bool:
    """Every data directory the probe reads exists (so a failure to read it is the data's fault)."""
    settings = asdict(run.probe.settings)
    paths = [Path(settings[k]) if settings[k] else data_root(run) / d for k, d in data_settings(run).items()
             if k in settings]
    return bool(paths) and all(p.exists() for p in paths)


def probe_sizes(run: ProbeRunConfig, max_segment: int) -> ProbeSizes:
    """The probe's sentences read here, or its documented sizes when the data is not here (data that is here but
    bad is the run's one line)."""
    declared = run.probe.declaration
    if declared.sentences is None:
        return documented_sizes(run, f"probe {declared.name} declares no sentences function")
    try:
        splits = declared_function(declared, declared.sentences)(run.probe.settings, data_root(run))
    except (DataError, OSError) as exc:
        if data_here(run):
            raise
        return documented_sizes(run, f"{declared.data} not readable here ({str(exc).splitlines()[0]})")
    return measured_sizes(splits, max_segment, f"{declared.data} read here")


def probe_encoder_cost(run: ProbeRunConfig, sample: list[list[str]], memo: dict[str, Any]
                       ) -> tuple[EncoderCost, str]:
    """The run's encoder cost (once per encoder config) and where the biLM's options came from."""
    options, options_source = bilm_options(run.encoder.bilm.options)
    spec = run.encoder.plain()
    key = json.dumps(["encoder", spec, options.to_dict()], sort_keys=True, default=str)
    if key not in memo:
        memo[key] = encoder_cost(spec, options, options_source, sample, amp=run.runtime.amp)
    return memo[key], options_source


def encoder_numbers(cost: EncoderCost, sizes: ProbeSizes, reads: int, cache: bool) -> dict[str, Any]:
    """``encoder_flops`` and ``cache_bytes`` over every split's entry (:func:`cache_numbers`), the index arrays
    added (see the module docstring)."""
    positions = sum(sizes.positions.values())
    distinct = sum(c.tokens for c in sizes.distinct.values())
    live = reads * (sum(sizes.all_positions.values()) if cost.segment_markers
                    else sum(c.tokens for c in sizes.splits.values()))
    numbers = cache_numbers(cost, positions, distinct, live, cache)
    if cache and cost.file_bytes is None:
        numbers["cache_bytes"] += sum(2 * NPY_HEADER + 8 * (sizes.distinct[s].sentences + 1) + 8 * c.sentences
                                      for s, c in sizes.splits.items())
    return numbers


def check_probed_layers(chosen: Sequence[int] | None, indices: Sequence[int]) -> None:
    """``probe.layers`` (the model's layer indices) against the layers the encoder gives, as the run checks them
    (elmo_bench.probe.api.ProbeContext.probed_layers): one ConfigError line."""
    if chosen is not None and (not chosen or len(set(chosen)) != len(chosen) or any(k not in indices for k in chosen)):
        raise ConfigError(f"config: probe.layers expected distinct layer indices of this encoder ({list(indices)}), "
                          f"found {list(chosen)}")


def plan_probe_run(run: ProbeRunConfig, memo: dict[str, Any]) -> dict[str, Any]:
    """One planned probe run (see the module docstring); ``run``: its ProbeRunConfig, through the door."""
    declared, settings = run.probe.declaration, run.probe.settings
    max_segment = int(run.runtime.max_segment)
    data_key = json.dumps(["probe-data", declared.name, asdict(settings), str(data_root(run)), max_segment],
                          sort_keys=True, default=str)
    if data_key not in memo:
        memo[data_key] = probe_sizes(run, max_segment)
    sizes: ProbeSizes = memo[data_key]
    cost, options_source = probe_encoder_cost(run, sizes.sample, memo)
    if "layers" in {spec.name for spec in fields(settings)}:   # probe.layers past the encoder's: the run's line
        check_probed_layers(settings.layers, cost.indices())
    if declared.run_cost is not None:      # the probe runs the encoder itself: no activation cache
        trained: ProbeCost = declared_function(declared, declared.run_cost)(run, sizes.splits)
        return probe_row(run, sizes, cost, options_source, {"encoder_flops": trained.encoder_flops,
                                                            "cache_bytes": 0}, trained, cached=False)
    if declared.cost is None:
        raise DataError(f"plan: probe {declared.name} declares no cost function (its PROBE's cost=)")
    trained = declared_function(declared, declared.cost)(settings, sizes.splits, cost.num_layers, cost.dim)
    encoder = encoder_numbers(cost, sizes, trained.reads, bool(run.runtime.cache))
    row = probe_row(run, sizes, cost, options_source, encoder, trained)
    return with_twin(run, cost, row) if trained.twin else row


def with_twin(run: ProbeRunConfig, cost: EncoderCost, row: dict[str, Any]) -> dict[str, Any]:
    """The row of a run that also reads the encoder's ``random_init=all`` twin (conditional's ``random`` baseline):
    the twin has the same architecture and reads the same sentences into its own cache entries, so its encoder
    FLOPs and cache bytes are this encoder's again (``twin``), added to the row's; the cache key names the twin, so
    a sweep counts the pair's fill once. An encoder kind without a twin is the run's one line."""
    check_random_init(cost.kind, "all", "probe.baseline=random")
    flops = row["encoder_flops"]
    row["twin"] = {"encoder_flops": flops, "cache_bytes": row["cache_bytes"]}
    row["encoder_flops"] = None if flops is None else 2 * flops
    row["cache_bytes"] *= 2
    if row["cache_key"] is not None:
        row["cache_key"] = json.dumps([row["cache_key"], "random_init=all twin"])
    return row


def probe_row(run: ProbeRunConfig, sizes: ProbeSizes, cost: EncoderCost, options_source: str,
              encoder: Mapping[str, Any], trained: ProbeCost, cached: bool = True) -> dict[str, Any]:
    """The row ``plan --format json`` prints for a probe run (``cached``: it reads the activation cache)."""
    train = main_split(sizes.splits)
    cache_key = json.dumps([cost.source, int(run.runtime.max_segment), sizes.key]) \
        if run.runtime.cache and cached else None
    return {
        "probe": run.probe.name, "encoder": encoder_name(run), "encoder_source": cost.source,
        "seed": int(run.runtime.seed),
        "data": run.probe.declaration.data,
        "sizes": sizes.kind, "size_source": sizes.source, "sentences": train.sentences, "tokens": train.tokens,
        "splits": {s: {"sentences": c.sentences, "tokens": c.tokens} for s, c in sizes.splits.items()},
        "encoder_flops": encoder["encoder_flops"], "cache_bytes": int(encoder["cache_bytes"]),
        "train_flops": int(trained.expected_flops), "head_flops_total": int(trained.expected_flops),
        "train_flops_bound": int(trained.train_flops), "lbfgs_flops": int(trained.lbfgs_expected),
        "lbfgs_flops_bound": int(trained.lbfgs_bound), "lbfgs_iterations": EXPECTED_FIT if trained.lbfgs_bound else None,
        "train_formula": trained.formula, "encoder_layers": cost.num_layers, "encoder_dim": cost.dim,
        "encoder_flops_per_token": cost.flops_per_position, "bilm": cost.options_file,
        "encoder_params": cost.params, "weight_bytes": cost.weight_bytes, "encoder_layer_indices": cost.indices(),
        **({"encoder_note": cost.note} if cost.note else {}),
        **({"encoder_devices": dict(cost.devices)} if cost.devices else {}),
        "settings": asdict(run.probe.settings), "gpu_hours": None, "cache_key": cache_key,
    }


def encoder_name(run: ProbeRunConfig) -> str:
    """The encoder as the command line chose it: ``bilm/shipped``, ``transformers``, ... (its kind otherwise)."""
    name = str(run.choices.get("encoder") or run.encoder.kind)
    chosen = [str(run.choices[group]) for group in kind_of(run.encoder.spec).groups if run.choices.get(group)]
    return "/".join([name, *chosen])


def probe_table(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The probe rows of ``plan``'s table (the sweep's totals follow it, as for task rows)."""
    head = ("probe", "encoder", "seed", "sizes", "train sent.", "tokens (all)", "enc. FLOPs", "cache GB", "train FLOPs",
            "train bound", "GPU h", "CPU min", "CPU bound")
    table = [head]
    for r in rows:
        table.append((r["probe"], r["encoder"], str(r["seed"]), r["sizes"], f"{r['sentences']:,}",
                      f"{sum(s['tokens'] for s in r['splits'].values()):,}",
                      "?" if r["encoder_flops"] is None else f"{r['encoder_flops']:.2e}",
                      f"{r['cache_bytes'] / 1e9:.2f}", f"{r['train_flops']:.2e}", f"{r['train_flops_bound']:.2e}",
                      f"{r['gpu_hours']:.3f}", f"{r['cpu_seconds'] / 60:.1f}", f"{r['cpu_seconds_bound'] / 60:.1f}"))
    return aligned(table)
