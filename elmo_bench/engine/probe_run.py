"""One probe run (``python run.py probe=<name>``): the same life as a task run (elmo_bench.engine.experiment) on the
Probe plug-in point: the run directory's lock, its identity (resume or skip only on a matching one, otherwise one
line naming the keys that differ), Hydra's records once the run owns the directory, the activation cache, the
probe's fit and score, results.json as a RunRecord.

Identity (run.json): the probe's name and settings, the encoder by its hash (its activation cache id: the biLM's
weights hash, a transformers model's identity; a random twin's), every data directory the probe reads by a
fingerprint of its content (the defaults below ``paths.data_root`` included), the seed, ``max_segment``, ``amp``,
and the probe's version (``plugin.probe``: name@version; its code hash, elmo_bench.engine.plugin_code, is a diagnostic). Paths never take part,
so a moved checkout or model resumes, and records keep them relative to the repository (or the run directory).
A finished probe is never redone or rewritten; a results.json that is truncated, empty or not a record of this
run's identity is redone (when run.json says the directory is ours) or refused (when it does not).
"""
from __future__ import annotations

import json
import logging
import time
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any, Callable, Mapping

from elmo_bench.base.atomic import atomic_write_text
from elmo_bench.base.device import arithmetic, resolve_device
from elmo_bench.base.errors import ConfigError
from elmo_bench.base.paths import DATA_ROOT, REPO
from elmo_bench.base.ranges import default_of
from elmo_bench.encoders.cache import ActivationCache
from elmo_bench.encoders.checkpoints import run_position
from elmo_bench.encoders.cli_options import encoder_info
from elmo_bench.encoders.kinds import encoder_plugin_of, label_record
from elmo_bench.encoders.protocol import moved
from elmo_bench.engine.experiment import seed_everything
from elmo_bench.engine.live_identity import fingerprint
from elmo_bench.engine.plugin_code import plugin_versions, probe_code_hash, with_plugin
from elmo_bench.engine.prepare import load_encoder_info
from elmo_bench.engine.probe_config import ProbeRunConfig
from elmo_bench.engine.run_config import recorded_config
from elmo_bench.engine.run_lock import run_dir_lock_or_undo
from elmo_bench.engine.run_logger import RunLogger
from elmo_bench.engine.run_records import CODE, RUN_FILE, read_record
from elmo_bench.identity.rules import HOW_COMPUTED, PROBE_IGNORED, compared, flatten, matches
from elmo_bench.identity.rules import IGNORED as RULES_IGNORED
from elmo_bench.probe.api import ProbeContext, ProbeOutcome
from elmo_bench.probe.registry import probe_runner
from elmo_bench.probe.settings import dataset_settings
from elmo_bench.records.portable import portable
from elmo_bench.records.run_record import RESULTS_FILE, RunRecord, git_commit

log = logging.getLogger(__name__)
#: resolved-config keys that never change a probe's numbers (speed, logging, where files go) or that stand for
#: something identified by content instead (model files: the encoder hash; data directories: fingerprints)
IGNORED = RULES_IGNORED + PROBE_IGNORED
#: results.json's record of the plug-ins' versions (``name@version``) that made the numbers (issue 54)
PLUGINS = "plugins"
#: the key results.json keeps the printed object under (a skipped run prints it again)
PRINTED = "printed"
#: results.json's ``encoder`` key of where in training its checkpoint was taken (outside the identity)
CHECKPOINT = "checkpoint"
#: results.json's record of what decides the numbers' last bits on a CPU (torch, threads, kernels, MKL, CPU model):
#: beside the numbers, not part of the identity (a resumed run on another machine is the same run)
COMPUTE = "compute"


def data_settings(run: ProbeRunConfig) -> dict[str, str]:
    """The probe's settings that name a data directory, each with where it reads when null (below
    ``paths.data_root``), as the probe's settings declare them (elmo_bench.probe.settings.dataset)."""
    return dataset_settings(type(run.probe.settings))


def data_root(run: ProbeRunConfig) -> Path:
    return Path(run.paths.data_root) if run.paths.data_root else DATA_ROOT


def data_fingerprints(run: ProbeRunConfig) -> dict[str, str]:
    """``data.<setting>`` → the content fingerprint of each data directory the probe reads (absent: "missing",
    left to the probe's reader to say so)."""
    settings = asdict(run.probe.settings)
    out = {}
    for key, default in data_settings(run).items():
        if key in settings:
            path = Path(settings[key]) if settings[key] else data_root(run) / default
            out[f"data.{key}"] = fingerprint(path) if path.exists() else "missing"
    return out


def probe_identity(run: ProbeRunConfig, encoder_hash: str, code_hash: str) -> dict[str, Any]:
    """The flat identity of a probe run (see the module docstring)."""
    data = data_settings(run)
    flat = {k: v for k, v in flatten(run.config()).items() if not matches(k, IGNORED)}
    flat.update({f"probe.{k}": v for k, v in flatten(asdict(run.probe.settings)).items()
                 if f"probe.{k}" not in IGNORED and k not in data})
    for key in data:
        flat.pop(f"probe.{key}", None)
    return {**flat, **data_fingerprints(run), "encoder.hash": encoder_hash, "code.probe": code_hash}


def load_probe_encoder(run: ProbeRunConfig) -> tuple[Any, dict[str, Any], dict[str, Any] | None]:
    """The frozen encoder (bilm=random / encoder.random_init: its random twin), the record a probe gets of it
    (hash, layers, dim, identity; a random twin's mode, seed and trained hash) and the biLM's record (None for
    another kind: a transformers probe's results.json carries no ``bilm`` block)."""
    encoder, bilm_info = load_encoder_info(run.encoder, run.runtime.amp)
    info = encoder_info(encoder)
    record = {"hash": info["hash"], "layers": info["layers"], "dim": info["dim"], "encoder": info["encoder"]}
    record.update({k: info[k] for k in ("random_init", "random_seed", "trained_hash") if info.get(k) is not None})
    return encoder, record, bilm_info


def stored_identity(run_dir: Path) -> dict[str, Any] | None:
    """run.json's identity, or None when the directory holds none (nothing was ever started there)."""
    path = run_dir / RUN_FILE
    return dict(read_record(path).get("identity") or {}) if path.exists() else None


def probe_defaults(run: ProbeRunConfig) -> dict[str, Any]:
    """``probe.<field>`` → its default, for every field of the probe's settings dataclass (data settings: their
    fingerprint key is what the identity holds): a stored identity made before a field was added equals one that
    holds its default (elmo_bench.identity.rules.with_added_defaults), so adding a setting redoes no finished run."""
    data = data_settings(run)
    return {f"probe.{f.name}": default_of(f) for f in fields(run.probe.settings)
            if f.name not in data and f"probe.{f.name}" not in IGNORED}


def identity_differences(stored: Mapping[str, Any], current: Mapping[str, Any], run: ProbeRunConfig,
                         live_code: str = "") -> list[str]:
    """``key: old → new`` for each difference between a probe run's stored identity and the live one, compared as
    a task run's are (elmo_bench.identity.rules.compared): the probe's added defaults filled, ignored and
    how-computed keys dropped, a stored code hash as the probe version it is (the committed manifest's, or
    ``live_code``: the probe's code now, as its declared version)."""
    declared = run.probe.declaration
    versions = plugin_versions("probe", declared.name, declared.version, [live_code] if live_code else [])
    return compared(stored, current, versions, declared=probe_defaults(run), extra_ignored=IGNORED)


def results_of_this_run(record: Mapping[str, Any], run: ProbeRunConfig, current: Mapping[str, Any]) -> str | None:
    """Why a results.json is not this run's (another probe's name, settings, seed or encoder), or None: a run
    directory holding another run's record is never "finished" (a copied or moved results.json)."""
    probe = record.get("probe") if isinstance(record.get("probe"), Mapping) else {}
    config = record.get("config") if isinstance(record.get("config"), Mapping) else {}
    seed = config["seed"] if "seed" in config else record.get("seed")   # the run's (a probe may record its own
    recorded = {"probe": probe.get("name"), "seed": seed,                 # fit's seed: ridge's 0)
                "encoder": (record.get("encoder") or {}).get("hash") if isinstance(record.get("encoder"), Mapping)
                else None}
    wanted = {"probe": run.probe.declaration.name, "seed": int(run.runtime.seed), "encoder": current["encoder.hash"]}
    diff = [f"{key} {recorded[key]!r}, this run's {wanted[key]!r}" for key in wanted if recorded[key] != wanted[key]]
    settings = portable(asdict(run.probe.settings), Path("."))
    stored_settings = probe.get("settings") if isinstance(probe.get("settings"), Mapping) else {}
    data = data_settings(run)
    diff += [f"probe.{key} {stored_settings.get(key)!r}, this run's {value!r}" for key, value in settings.items()
             if key in stored_settings and key not in data and stored_settings[key] != value
             and f"probe.{key}" not in IGNORED and not matches(f"probe.{key}", HOW_COMPUTED)]
    return "; ".join(diff[:4]) or None


def finished_record(run_dir: Path, current: Mapping[str, Any], run: ProbeRunConfig,
                    live_code: str = "") -> dict[str, Any] | None:
    """The finished run's results.json when this directory holds one made by ``current``'s identity; None when
    nothing finished here (a truncated or empty results.json of our own run is redone, with a warning);
    ConfigError (one line) when another configuration made the directory, or its results.json is not ours or is
    another run's record."""
    results = run_dir / RESULTS_FILE
    stored = stored_identity(run_dir)
    if stored is None:
        if results.exists():
            raise ConfigError(f"{results}: a results.json without run.json (not a probe run of this program, or one "
                              f"from before probe runs had identities); refusing to reuse {run_dir}: choose another "
                              f"directory (hydra.run.dir=...) or move the file away")
        return None
    diff = identity_differences(stored, current, run, live_code)
    if diff and results.exists():
        shown = "; ".join(diff[:6]) + (f"; and {len(diff) - 6} more" if len(diff) > 6 else "")
        raise ConfigError(f"{run_dir}: made by a different configuration ({shown}); refusing to resume or reuse it: "
                          f"choose another directory (hydra.run.dir=...) or delete it")
    if not results.exists():
        return None
    try:
        record = read_record(results)
        RunRecord.from_dict(record, str(results))
    except (ConfigError, ValueError) as exc:
        log.warning("%s: %s; the probe runs again", results, str(exc).split(";")[0])
        return None
    other = results_of_this_run(record, run, current)
    if other is not None:
        raise ConfigError(f"{results}: holds another run's record ({other}); refusing to report it as this run's "
                          f"result: move the file away (the run then computes again) or choose another directory "
                          f"(hydra.run.dir=...)")
    return record


def write_identity(run_dir: Path, current: Mapping[str, Any], run: ProbeRunConfig) -> None:
    run_dir.mkdir(parents=True, exist_ok=True)
    atomic_write_text(run_dir / RUN_FILE, json.dumps({"identity": dict(current),
                                                      "config": portable(run.config(), run_dir)}, indent=1))


def run_probe(run: ProbeRunConfig, run_dir: Path, on_claimed: Callable[[Path], None] | None = None
              ) -> dict[str, Any]:
    """One probe run in ``run_dir``, holding its lock; returns its results.json (a finished run's as it is).
    ``on_claimed(run_dir)``: called once the run owns the directory and will compute (Hydra's records)."""
    with run_dir_lock_or_undo(run_dir):    # bad input before anything was computed leaves nothing of this run
        started = time.perf_counter()
        declared = run.probe.declaration
        encoder, record, bilm_info = load_probe_encoder(run)
        code = probe_code_hash(declared.package, declared.resolved_target())
        current = {**with_plugin(probe_identity(run, record["hash"], code), "probe", declared.name, declared.version),
                   "encoder.plugin": encoder_plugin_of(run.encoder.spec)}
        done = finished_record(run_dir, current, run, code)
        if done is not None:
            log.info("%s exists and was made by this configuration: nothing to do", run_dir / RESULTS_FILE)
            return done
        write_identity(run_dir, current, run)
        (on_claimed or (lambda where: None))(run_dir)
        return _probe_and_record(run, run_dir, encoder, record, bilm_info, started)


def _context(run: ProbeRunConfig, run_dir: Path, encoder: Any, record: dict[str, Any]) -> ProbeContext:
    """What the probe gets: the encoder on the run's device, vetted on nothing yet, and the activation cache."""
    import torch  # lazy: torch

    device = resolve_device(run.runtime.device)
    encoder = moved(encoder, device)
    torch.set_num_threads(int(run.runtime.threads) or 1)
    cache = ActivationCache(run.paths.cache_dir, encoder, max_segment=int(run.runtime.max_segment),
                            progress=run.runtime.progress,
                            shard_sentences=int(run.runtime.shard_sentences)) if run.runtime.cache else None
    return ProbeContext(run.probe.settings, encoder, record, cache, device, int(run.runtime.seed),
                        bool(run.runtime.progress), data_root(run), run_dir, int(run.runtime.max_segment),
                        run.paths.cache_dir if run.runtime.cache else None)


def _probe_and_record(run: ProbeRunConfig, run_dir: Path, encoder: Any, record: dict[str, Any],
                      bilm_info: dict[str, Any] | None, started: float) -> dict[str, Any]:
    """The computing half: the probe's fit and score, then results.json (and the wandb run)."""
    seed_everything(int(run.runtime.seed))
    context = _context(run, run_dir, encoder, record)
    outcome: ProbeOutcome = probe_runner(run.probe.declaration)(context)
    logger = RunLogger(run, run_dir)  # type: ignore[arg-type]  (reads .logger and .config()); after the probe:
    #                                   bad data it finds leaves no wandb run behind
    seconds = context.cache.seconds_in_bilm if context.cache is not None else 0.0
    results = write_probe_record(run, run_dir, outcome, record, bilm_info, {
        "total_seconds": time.perf_counter() - started, "bilm_seconds": seconds}, str(context.device))
    logger.summary({f"{s}/{k}": v for s, m in outcome.metrics.items() for k, v in m.items()
                    if isinstance(v, (int, float))})
    logger.finish()
    return results


def checkpoint_record(run: ProbeRunConfig) -> dict[str, Any]:
    """``{"checkpoint": {series, step, tokens_seen, from}}`` when the run's weights say where in training they were
    taken (a checkpoint series' point, elmo_bench.encoders.checkpoints), else nothing: beside the encoder's
    identity, not part of it (the weights' content is; the report's "by training step" section reads it)."""
    found = run_position(run.config())
    return {} if found is None else {CHECKPOINT: found}


def write_probe_record(run: ProbeRunConfig, run_dir: Path, outcome: ProbeOutcome, record: dict[str, Any],
                       bilm_info: dict[str, Any] | None, timings: dict[str, float], device: str) -> dict[str, Any]:
    """results.json of a probe run: the report's record (task = the probe's ``record_task``, flat metrics), the
    probe's name and settings, the encoder's identity, the data fingerprints, relative paths only."""
    declared = run.probe.declaration
    config = recorded_config({**portable(run.config(), run_dir),
                              "choices": {**run.choices, "probe": declared.name, "data": declared.data}})
    bilm = None if bilm_info is None else portable({k: v for k, v in bilm_info.items() if k != "encoder"}, run_dir)
    extra = {**outcome.extra, PRINTED: outcome.printed,
             "probe": {"name": declared.name, "settings": portable(asdict(run.probe.settings), run_dir)},
             "data_fingerprint": data_fingerprints(run), COMPUTE: arithmetic(),
             PLUGINS: {"probe": f"{declared.name}@{declared.version}", "encoder": encoder_plugin_of(run.encoder.spec)},
             CODE: {"probe": probe_code_hash(declared.package, declared.resolved_target())},
             **label_record(record["encoder"])}
    results = RunRecord(
        task=declared.record_task, embedder="elmo", seed=int(run.runtime.seed if outcome.seed is None
                                                            else outcome.seed),
        config=config, data=outcome.data, metrics=outcome.metrics, main_metric=outcome.main_metric,
        probes=outcome.probes, views=outcome.views, mixes={}, elmo=None,
        epochs={"run": 0, "best": None, "history": []}, timings=timings,
        device={"device": device, "requested": str(run.runtime.device)}, bilm=bilm,
        encoder={**record["encoder"], **{k: record[k] for k in ("random_init", "random_seed", "trained_hash")
                                         if k in record}, **checkpoint_record(run)},
        extra=extra, git_commit=git_commit(REPO))
    results.write(run_dir / RESULTS_FILE)
    return results.to_dict()
