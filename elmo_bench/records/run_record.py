"""The run record: what one run leaves in its directory for the report, and the one schema of results.json.

The engine (elmo_bench.engine.experiment) and the probes (elmo_bench.probe) write it, the report (elmo_bench.report) and
``export-results`` read it; this module sits at the base (json, gzip, numpy only), so the report reads run records
without importing the engine or any task. A run directory holds:

- ``results.json``: a :class:`RunRecord` (schema ``SCHEMA_VERSION``; keys this version does not know are kept);
- ``predictions_<split>.json``: ``[{"id", "prediction"}]`` in the task's own output format (SQuAD: answer text);
- ``predictions_<split>.json.gz``: ``[{"index": i, "prediction": p}]`` for example i of the split, the task's
  text-free form (``Task.record_predictions``: SQuAD answers as character spans), the form ``export-results`` commits;
- ``scores_test.json.gz``: the test metric's per-example statistics (elmo_bench.records.example_statistics, row i = test
  example i), from which the report's paired bootstrap recomputes the metric on every resample.

Gzip headers carry no time stamp and JSON keys are sorted: the same record gives the same bytes.
"""
from __future__ import annotations

import dataclasses
import gzip
import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from elmo_bench.base.atomic import atomic_write_bytes, atomic_write_text
from elmo_bench.records.example_statistics import Statistics

SCHEMA_VERSION = 1
RESULTS_FILE = "results.json"
SCORES_FILE = "scores_test.json.gz"
#: the keys an engine or probe record always has (a record from elsewhere lacks some)
REQUIRED_KEYS = ("schema", "task", "embedder", "seed", "config", "metrics", "main_metric", "mixes", "epochs",
                 "timings", "bilm", "git_commit", "data")
#: written only when set: the engine's per-epoch summary and device, the encoder's identity, the probes' extras
OPTIONAL_KEYS = ("history", "device", "encoder", "views", "probes")
_DICT_FIELDS = ("config", "data", "metrics", "mixes", "epochs", "timings")


@dataclass
class RunRecord:
    """results.json of one run (a trained task or a probe); ``metrics[split][name]`` are percentages."""

    task: str
    metrics: dict[str, dict[str, Any]]
    schema: int = SCHEMA_VERSION
    embedder: str | None = None
    seed: int | None = None
    #: the resolved Hydra config of the run (a probe: its arguments, plus ``choices``)
    config: dict[str, Any] = field(default_factory=dict)
    #: ``name``, ``fraction`` and example counts of the data the run used
    data: dict[str, Any] = field(default_factory=dict)
    main_metric: str = ""
    #: learned ScalarMix weights and gammas, per mix name
    mixes: dict[str, Any] = field(default_factory=dict)
    #: the effective ELMo settings (placement, l2_coef, ...); None for a run without ELMo
    elmo: dict[str, Any] | None = None
    #: ``run``, ``best``, ``stopped_by`` and the full per-epoch ``history``
    epochs: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    #: the biLM's record (name, paths, hash, layers, dim; an adapted biLM: base and adapted hash)
    bilm: dict[str, Any] | None = None
    git_commit: str | None = None
    #: per epoch: epoch, dev_metric, loss, seconds (engine runs)
    history: list[dict[str, Any]] | None = None
    device: dict[str, Any] | None = None
    #: the encoder's identity (what changes its vectors), for records that name one
    encoder: dict[str, Any] | None = None
    #: WSD probe: the views it scored; POS probe: per-row summaries
    views: Any = None
    probes: Any = None
    #: keys of the file this version does not know, kept as they are
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            if f.name == "extra":
                continue
            value = getattr(self, f.name)
            if f.name in OPTIONAL_KEYS and value is None:
                continue
            out[f.name] = value
        return {**self.extra, **out}

    @classmethod
    def from_dict(cls, results: Any, where: str = RESULTS_FILE,
                  required: Sequence[str] = REQUIRED_KEYS) -> "RunRecord":
        """A parsed results.json → RunRecord; ValueError naming ``where`` when a required key is missing or a
        field has the wrong type."""
        if not isinstance(results, dict):
            raise ValueError(f"{where}: expected a JSON object")
        missing = [k for k in required if k not in results]
        if missing:
            raise ValueError(f"{where}: not a results.json of this project (missing keys {missing})")
        known = {f.name for f in dataclasses.fields(cls)} - {"extra"}
        values = {k: v for k, v in results.items() if k in known}
        for name in _DICT_FIELDS:
            value = values.get(name)
            if value is None:
                values.pop(name, None)
            elif not isinstance(value, dict):
                raise ValueError(f"{where}: bad field ({name} is {type(value).__name__}, expected an object)")
        if "metrics" not in values:
            values["metrics"] = {}
        values["task"] = str(values.get("task", ""))
        return cls(**values, extra={k: v for k, v in results.items() if k not in known})

    @classmethod
    def read(cls, path: str | Path, required: Sequence[str] = REQUIRED_KEYS) -> "RunRecord":
        """ValueError naming the file when it is unreadable or not one of ours."""
        path = Path(path)
        try:
            results = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"{path}: unreadable ({exc.__class__.__name__}: {exc})") from exc
        return cls.from_dict(results, str(path), required)

    def write(self, path: str | Path) -> None:
        """Atomically, keys sorted, two-space indent (the form every committed results.json has)."""
        atomic_write_text(path, json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n")


def git_commit(repo: Path) -> str | None:
    """The repository's HEAD, or None outside a git checkout."""
    try:
        out = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None


# ---- the files beside results.json ------------------------------------------------------------------------------

def write_gz_json(path: Path, value: Any) -> None:
    """Compact JSON, keys sorted, gzip level 9 without a time stamp: deterministic bytes."""
    data = json.dumps(value, separators=(",", ":"), sort_keys=True).encode("utf-8")
    atomic_write_bytes(path, gzip.compress(data, compresslevel=9, mtime=0))


def read_json(path: Path) -> Any:
    """A .json or .json.gz file."""
    if path.suffix == ".gz":
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            return json.load(handle)
    return json.loads(path.read_text(encoding="utf-8"))


def predictions_path(run_dir: Path, split: str, compact: bool = False) -> Path:
    return Path(run_dir) / (f"predictions_{split}.json.gz" if compact else f"predictions_{split}.json")


def write_predictions(run_dir: Path, split: str, ids: Sequence[Any], predictions: Sequence[Any],
                      record_form: Sequence[Any]) -> None:
    """predictions_<split>.json (``{"id", "prediction"}`` per example, the task's output format) and
    predictions_<split>.json.gz (``{"index", "prediction"}``, the task's text-free ``record_form``)."""
    if not len(ids) == len(predictions) == len(record_form):
        raise ValueError(f"{split}: {len(ids)} ids, {len(predictions)} predictions, {len(record_form)} records")
    atomic_write_text(predictions_path(run_dir, split), json.dumps(
        [{"id": i, "prediction": p} for i, p in zip(ids, predictions)]))
    write_gz_json(predictions_path(run_dir, split, compact=True),
                  [{"index": i, "prediction": p} for i, p in enumerate(record_form)])


def write_statistics(run_dir: Path, statistics: Statistics) -> None:
    write_gz_json(Path(run_dir) / SCORES_FILE, statistics.as_json())


def read_statistics(run_dir: Path) -> Statistics | None:
    """The run's test statistics, or None when it has none; ValueError naming the file when it is malformed."""
    path = Path(run_dir) / SCORES_FILE
    if not path.exists():
        return None
    try:
        return Statistics.from_json(read_json(path))
    except (OSError, EOFError, KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{path}: unreadable statistics ({exc.__class__.__name__}: {exc})") from exc
