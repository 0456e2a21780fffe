"""Find every results.json below some directories and turn each RunRecord (elmo_bench.records.run_record) into a flat
``Run`` the tables can group.

Unreadable files, and records of a schema this version does not know (a newer elmo-bench wrote them), are skipped
with a warning naming the file. A run whose metric is not finite (NaN, inf: a diverged run) is skipped with a warning,
counted as skipped and kept in ``Collection.non_finite`` so the report shows it as such. Runs that are the same experiment (same task, data, embedder,
seed, fraction, effective ELMo settings, head, trainer and biLM), e.g. a baseline that both the table1 and
table2 sweeps trained, are kept once, so they do not count as extra seeds; two such records that disagree in what
the tables read (metrics, mix weights, a probe's extras) are refused, naming both files
(elmo_bench.report.duplicates.keep_once).
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

from elmo_bench.records import lm_adaptation
from elmo_bench.records.elmo_settings import TASK_ELMO_DEFAULTS
from elmo_bench.records.run_record import REQUIRED_KEYS, RESULTS_FILE, SCHEMA_VERSION, RunRecord
from elmo_bench.report import declared, encoder_names, task_defaults
from elmo_bench.report.declared import PaperNumbers
from elmo_bench.report.duplicates import Disagreement, keep_once

#: overrides of the mix group that make a run differ from the task's paper settings
MIX_OVERRIDES = ("placement", "lambda", "layer_norm", "gamma_init", "dropout")


@dataclass
class Run:
    """One results.json, with the fields the report groups by pulled out; ``record`` is the whole RunRecord (a Run
    built by hand, in tests, has an empty one)."""

    path: Path
    task: str
    embedder: str
    seed: int
    data: str
    fraction: float
    main_metric: str
    metrics: dict[str, Any]
    mixes: dict[str, Any] = field(default_factory=dict)
    elmo: dict[str, Any] | None = None
    mix_config: dict[str, Any] = field(default_factory=dict)
    record: RunRecord = field(default_factory=lambda: RunRecord(task="", metrics={}))
    #: the task's current ELMo defaults (task_defaults.json beside the runs); None: judge by the run's own record
    current_elmo: dict[str, Any] | None = None
    #: a probe's record (its task is a probe's record task, elmo_bench.report.sections.ReportPlugins): it records
    #: an encoder without a +ELMo mix, and no training config tells two such runs apart
    probe_task: bool = False
    #: a record task a probe's section claims (Tables 5 and 6, the probes' own sections): never a task table's row
    shown_apart: bool = False

    @property
    def is_probe(self) -> bool:
        """A probe run's record (``python run.py probe=<name>`` keeps the probe's name and settings): never a task
        table's row, whatever its record task is called."""
        return isinstance(self.record.extra.get("probe"), dict)

    @property
    def has_elmo(self) -> bool:
        return self.elmo is not None

    @property
    def adapted(self) -> bool:
        """+ELMo with a task-adapted biLM (bilm=adapted): its own Table 1 row, never averaged with the base biLM."""
        return bool((self.record.bilm or {}).get("adapted_hash"))

    @property
    def encoder(self) -> dict[str, Any] | None:
        """The frozen encoder whose layers the run used (elmo_bench.report.encoder_names.identity); None for a run
        without them (a GloVe baseline, shared by every encoder's +ELMo runs)."""
        if not self.has_elmo and not self.probe_task:
            return None
        return encoder_names.identity(self.record)

    @property
    def encoder_key(self) -> str | None:
        """The encoder's grouping key (its whole identity as JSON): runs of two encoders never share one."""
        found = self.encoder
        return None if found is None else encoder_names.key_of(found)

    @property
    def mode(self) -> str | None:
        return self.elmo.get("mode") if self.elmo else None

    @property
    def placement(self) -> str | None:
        return self.elmo.get("placement") if self.elmo else None

    @property
    def l2_coef(self) -> float | None:
        return float(self.elmo["l2_coef"]) if self.elmo and self.elmo.get("l2_coef") is not None else None

    @property
    def layer_index(self) -> int | None:
        value = self.elmo.get("layer_index") if self.elmo else None
        return None if value is None else int(value)

    def overrides(self, *keys: str) -> bool:
        """True when any of the mix keys was set away from the task's own setting (a ``mix.layer_norm=true`` run of
        a task whose default is already true is that task's default run: an ablation arm equal to the default).

        With ``current_elmo`` (the task's defaults today) the run's effective settings are compared with those, so a
        run of a default that a later dev ablation replaced counts as that setting's ablation arm."""
        if self.current_elmo is not None and self.elmo is not None:
            return any(task_defaults.differs(self.elmo, self.current_elmo, key) for key in keys)
        task_elmo = (self.record.config.get("task") or {}).get("elmo")
        for key in keys:
            value = self.mix_config.get(key)
            if value is None:
                continue
            if not isinstance(task_elmo, dict):       # the task's own settings are not recorded: any override counts
                return True
            if value != task_elmo.get(key, TASK_ELMO_DEFAULTS.get(key)):
                return True
        return False

    @property
    def is_default(self) -> bool:
        """The task's paper configuration: GloVe only, or +ELMo with a learned mix and no mix overrides."""
        if not self.has_elmo:
            return True
        return self.mode == "learned" and not self.overrides(*MIX_OVERRIDES)

    def value(self, split: str, metric: str | None = None) -> float | None:
        scores = self.metrics.get(split) or {}
        found = scores.get(metric or self.main_metric)
        return None if found is None else float(found)

    def signature(self) -> str:
        config = self.record.config
        task_cfg = config.get("task") or {}
        trainer = dict(task_cfg.get("trainer") or {})
        trainer.update({k: v for k, v in (config.get("trainer") or {}).items() if v is not None and k != "scale_epochs"})
        key = {"task": self.task, "embedder": self.embedder, "seed": self.seed, "data": self.data,
               "fraction": self.fraction, "elmo": self.elmo, "head": task_cfg.get("head"), "trainer": trainer,
               "bilm": (self.record.bilm or {}).get("hash"), "encoder": self.encoder_key}
        if self.probe_task:                             # probes: no training config tells two runs apart
            key["metrics"] = self.metrics
        if self.erase is not None:                     # amnesic runs: another experiment
            key["erase"] = self.erase
        return json.dumps(key, sort_keys=True, default=str)

    @property
    def erase(self) -> dict[str, Any] | None:
        """The run's ``encoder.erase`` settings when erasure was on (a concept set), else None (older records name
        the encoder group by a string, or not at all)."""
        encoder = (self.record.config or {}).get("encoder")
        erase = encoder.get("erase") if isinstance(encoder, dict) else None
        return dict(erase) if isinstance(erase, dict) and erase.get("concept") is not None else None


def seed_pairs(members: Iterable[Run]) -> list[tuple[Run, Run]]:
    """(baseline, +ELMo) runs that share a seed, in seed order: the unit every paired comparison counts in."""
    members = list(members)
    pairs = []
    for seed in sorted({r.seed for r in members}):
        base = next((r for r in members if r.seed == seed and not r.has_elmo), None)
        elmo = next((r for r in members if r.seed == seed and r.has_elmo), None)
        if base is not None and elmo is not None:
            pairs.append((base, elmo))
    return pairs


def _run_from(path: Path, record: RunRecord) -> Run:
    config = record.config
    data = record.data
    choices = config.get("choices") or {}
    return Run(
        path=path,
        task=record.task,
        embedder=str(record.embedder or ("elmo" if record.elmo else "glove")),
        seed=int(record.seed or 0),
        data=str(data.get("name") or choices.get("data") or "—"),
        fraction=float(data.get("fraction", (config.get("data") or {}).get("fraction", 1.0)) or 1.0),
        main_metric=str(record.main_metric or ""),
        metrics=record.metrics,
        mixes=record.mixes,
        elmo=record.elmo,
        mix_config=config.get("mix") or {},
        record=record,
    )


def read_run(path: Path, minimal: frozenset[str] = frozenset()) -> Run:
    """One results.json → Run; ValueError naming the file when it is not one of ours (``minimal``: record tasks
    whose records need only task and metrics, as a section declares)."""
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: unreadable ({exc.__class__.__name__}: {exc})") from exc
    schema = results.get("schema", SCHEMA_VERSION) if isinstance(results, dict) else SCHEMA_VERSION
    if isinstance(schema, bool) or not isinstance(schema, int) or not 1 <= schema <= SCHEMA_VERSION:
        raise ValueError(f"{path}: unknown results.json schema {schema!r} (this version reads schemas 1 to "
                         f"{SCHEMA_VERSION}; written by a newer elmo-bench?)")
    # a probe whose section says so is not a trained model: it needs only task and metrics
    required = ("task", "metrics") if isinstance(results, dict) and results.get("task") in minimal else REQUIRED_KEYS
    record = RunRecord.from_dict(results, str(path), required)      # ValueError naming the file
    for split, scores in record.metrics.items():
        if not isinstance(scores, dict):
            raise ValueError(f"{path}: bad field metrics (expected {{split: {{metric: number}}}})")
        for name, value in scores.items():
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
                raise ValueError(f"{path}: metric {split}.{name} is {value!r}; expected a number")
    try:
        return _run_from(path, record)
    except (TypeError, ValueError, KeyError) as exc:
        raise ValueError(f"{path}: bad field ({exc})") from exc


def non_finite(run: Run) -> list[tuple[str, float]]:
    """``(split.metric, value)`` of every metric of the run that is NaN or infinite."""
    return [(f"{split}.{name}", float(value)) for split, scores in run.metrics.items()
            for name, value in scores.items() if value is not None and not math.isfinite(float(value))]


@dataclass
class Collection:
    runs: list[Run]
    files: int
    duplicates: int
    warnings: list[str]
    adaptations: list[dict[str, Any]] = field(default_factory=list)   # lm_adaptation.json records (Table 7)
    #: runs skipped for a non-finite metric (counted in ``warnings``), with those metrics: the report lists them
    non_finite: list[tuple[Run, list[tuple[str, float]]]] = field(default_factory=list)
    paper: PaperNumbers = field(default_factory=PaperNumbers)          # the tasks' declarations (declared.py)
    #: records of one run that disagree, none of them in a table (each also a warning line)
    disagreeing: list[Disagreement] = field(default_factory=list)
    #: probe records that no section of the report shows (elmo_bench.report.unshown.split_unclaimed)
    unclaimed: list[Run] = field(default_factory=list)


def read_declarations(dirs: Iterable[str | Path], warnings: list[str]) -> PaperNumbers:
    """The paper numbers the tasks declared, from every task_declarations.json below ``dirs`` (sorted; a later file
    adds its tasks); an unreadable file is a warning."""
    merged: dict[str, dict[str, Any]] = {}
    for root in dirs:
        if not Path(root).is_dir():
            continue
        for path in sorted(Path(root).rglob(declared.FILENAME)):
            try:
                merged.update(declared.read(path))
            except ValueError as exc:
                warnings.append(f"warning: skipping {exc}")
    return PaperNumbers(merged)


def _below(path: Path, dirs: Sequence[str | Path]) -> str:
    """``path`` as ``<reported directory's name>/<below it>`` (its name alone when no directory holds it)."""
    for root in dirs:
        root = Path(root).resolve()
        if path.is_relative_to(root):
            return str(Path(root.name) / path.relative_to(root))
    return path.name


def collect(dirs: Iterable[str | Path], record_tasks: frozenset[str] = frozenset(),
            minimal: frozenset[str] = frozenset(), claimed: frozenset[str] = frozenset()) -> Collection:
    """Every results.json below ``dirs`` (sorted, each file once), duplicates of one experiment kept once
    (``record_tasks``: the probes' record tasks, ``minimal``: those whose records need only task and metrics,
    ``claimed``: the record tasks the probes' sections show, from elmo_bench.report.sections.ReportPlugins)."""
    dirs = list(dirs)
    paths: list[Path] = []
    adaptation_paths: list[Path] = []
    defaults_paths: list[Path] = []
    warnings: list[str] = []
    for root in dirs:
        root = Path(root)
        if root.is_file() and root.name == RESULTS_FILE:
            paths.append(root.resolve())
        elif root.is_dir():
            paths.extend(p.resolve() for p in root.rglob(RESULTS_FILE))
            adaptation_paths.extend(p.resolve() for p in root.rglob(lm_adaptation.FILENAME))
            defaults_paths.extend(sorted(root.rglob(task_defaults.FILENAME)))
        else:
            warnings.append(f"warning: {root}: no such directory")
    defaults_by_dir: dict[Path, dict[str, dict[str, Any]]] = {}
    for path in defaults_paths:
        try:
            defaults_by_dir[path.resolve().parent] = task_defaults.read(path)
        except ValueError as exc:
            warnings.append(f"warning: skipping {exc}")
    adaptations = []
    for path in sorted(set(adaptation_paths)):
        try:
            adaptations.append(lm_adaptation.read(path))
        except ValueError as exc:
            warnings.append(f"warning: skipping {exc}")
    runs: list[Run] = []
    non_finite_runs: list[tuple[Run, list[tuple[str, float]]]] = []
    unique = sorted(set(paths))
    for path in unique:
        try:
            run = read_run(path, minimal)
        except ValueError as exc:
            warnings.append(f"warning: skipping {exc}")
            continue
        bad = non_finite(run)
        if bad:
            shown = ", ".join(f"{name} is {value}" for name, value in bad)
            warnings.append(f"warning: skipping {path}: metric {shown} (not finite: the run diverged?)")
            non_finite_runs.append((run, bad))
            continue
        run.probe_task, run.shown_apart = run.task in record_tasks, run.task in claimed
        holder = next((d for d in path.parents if d in defaults_by_dir), None)
        if holder is not None and run.task in defaults_by_dir[holder]:
            run.current_elmo = defaults_by_dir[holder][run.task]
        runs.append(run)
    runs, duplicates, disagreeing = keep_once(runs)
    for found in disagreeing:                    # report.json names them below the reported directory, never where
        found.shown = [_below(path, dirs) for path in found.paths]   # this machine keeps it
    warnings.extend(d.line() for d in disagreeing)
    return Collection(runs=runs, files=len(unique), duplicates=duplicates, warnings=warnings, adaptations=adaptations,
                      non_finite=non_finite_runs, paper=read_declarations(dirs, warnings), disagreeing=disagreeing)
