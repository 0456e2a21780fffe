"""probe-pos beyond the converged probe: the papers' probes (linear, mlp1, mlp2), the control task and selectivity,
several seeds, and the best layer with its bootstrap p-value.

Per (probe, row, seed) one probe is trained on the real tags and, with ``--control``, one on the control tags of
that seed (elmo_bench.probe.lib.control), with the same settings: the converged probe reuses the L2 chosen on the real
task's dev set; the Adam probes use the same flags (their early stopping watches each task's own dev loss, as the
authors' regimen does). The converged probe on real tags is deterministic: it is fitted once, whatever the seeds.
"""
from __future__ import annotations

import logging
import statistics
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
import torch

from elmo_bench.base.errors import ConfigError
from elmo_bench.probe.lib.classifiers import PROBES, ProbeSpec
from elmo_bench.probe.lib.control import control_tags
from elmo_bench.probe.lib.features import tag_ids
from elmo_bench.probe.lib.layer_choice import best_layer
from elmo_bench.probe.lib.linear import Standardiser, fit_select_l2
from elmo_bench.probe.lib.regimen import Regimen, Tokens, TrainedProbe, predict, train_probe
from elmo_bench.probe.lib.stacked import train_probes
from elmo_bench.probe.lib.ud_data import SPLITS

log = logging.getLogger(__name__)
KINDS = ("converged", *PROBES)


@dataclass
class ProbeSettings:
    probes: list[str]
    seeds: list[int]
    control: bool
    spec: dict[str, ProbeSpec]
    regimen: Regimen
    grid: list[float]
    max_iter: int
    tol: float

    @property
    def prefixed(self) -> bool:
        """Rows keyed ``<probe>/<row>`` unless the converged probe alone runs (today's keys)."""
        return self.probes != ["converged"]

    def key(self, probe: str, row: str) -> str:
        return f"{probe}/{row}" if self.prefixed else row

    def record(self) -> dict[str, Any]:
        return {"probes": self.probes, "seeds": self.seeds, "control": self.control,
                "settings": {p: s.record() for p, s in self.spec.items()}, "regimen": self.regimen.record()}


def parse_list(text: str, flag: str, cast: Any) -> list:
    items = [t.strip() for t in str(text).split(",") if t.strip()]
    if not items:
        raise ConfigError(f"{flag} expected a comma-separated list, found {text!r} (empty)")
    try:
        return [cast(t) for t in items]
    except ValueError:
        raise ConfigError(f"{flag} expected comma-separated {cast.__name__} values, found {text!r}") from None


def settings_from_args(args: Any, grid: list[float]) -> ProbeSettings:
    """The probes, seeds and knobs the command line asks for (ConfigError, one line, on a bad value)."""
    probes = parse_list(args.probe, "--probe", str)
    unknown = [p for p in probes if p not in KINDS]
    if unknown:
        raise ConfigError(f"--probe expected a comma-separated subset of {', '.join(KINDS)}, found {unknown[0]!r}")
    seeds = parse_list(args.seeds, "--seeds", int)
    if len(set(seeds)) != len(seeds) or len(set(probes)) != len(probes):
        raise ConfigError("--probe and --seeds: every value once")
    if args.hidden < 1 or args.rank < 1 or not 0.0 <= args.dropout < 1.0 or args.max_epochs < 1:
        raise ConfigError("--hidden, --rank and --max-epochs expect positive integers, --dropout a value in [0, 1)")
    spec = {p: ProbeSpec(p, args.hidden, args.rank, args.dropout) for p in probes if p != "converged"}
    regimen = Regimen(weight_decay=args.weight_decay, max_epochs=args.max_epochs, batch_sentences=args.batch_sentences)
    return ProbeSettings(probes, seeds, bool(args.control), spec, regimen, grid, args.max_iter, args.tol)


@dataclass
class Fit:
    """One trained probe's scores: dev/test accuracy (percent) and correct tokens per test sentence."""

    dev: float
    test: float
    correct: np.ndarray
    extra: dict[str, Any] = field(default_factory=dict)


def _per_sentence(right: torch.Tensor, lengths: Sequence[int]) -> np.ndarray:
    return np.array([int(part.sum()) for part in torch.split(right.long(), list(lengths))], dtype=np.int64)


def fit_converged(x: Mapping[str, torch.Tensor], y: Mapping[str, torch.Tensor], lengths: Sequence[int],
                  classes: int, grid: Sequence[float], max_iter: int, tol: float) -> Fit:
    """The converged probe (standardised features, L-BFGS, L2 from ``grid`` by dev accuracy)."""
    scale = Standardiser.fit(x["train"])
    z = {s: scale(v) for s, v in x.items()}
    chosen = fit_select_l2(z["train"], y["train"], z["dev"], y["dev"], classes, grid, max_iter, tol,
                           extend=3 if len(grid) > 1 else 0)
    right = chosen.probe.predict(z["test"]) == y["test"]
    return Fit(chosen.dev_accuracy, 100.0 * float(right.double().mean()), _per_sentence(right, lengths),
               {"l2": chosen.probe.l2, "converged": chosen.probe.converged, "iterations": chosen.probe.iterations})


def fit_adam(x: Mapping[str, torch.Tensor], y: Mapping[str, torch.Tensor], lengths: Mapping[str, Sequence[int]],
             classes: int, spec: ProbeSpec, regimen: Regimen, device: torch.device) -> Fit:
    """One of the papers' probes trained with their regimen; features per sentence, unscaled (as the authors)."""
    parts = {s: (torch.split(x[s], list(lengths[s])), torch.split(y[s], list(lengths[s]))) for s in SPLITS}
    trained = train_probe(spec, *parts["train"], *parts["dev"], classes, regimen, device)
    return _scored(trained, parts["test"][0], y["test"], lengths["test"])


def _scored(trained: TrainedProbe, test: Sequence[torch.Tensor], gold: torch.Tensor, lengths: Sequence[int]) -> Fit:
    right = predict(trained.probe, test) == gold
    return Fit(trained.dev_accuracy, 100.0 * float(right.double().mean()), _per_sentence(right, lengths),
               {"epochs": trained.epochs, "best_epoch": trained.best_epoch, "dev_loss": trained.dev_loss})


def fit_adam_rows(x: Mapping[str, Mapping[str, torch.Tensor]], labellings: Sequence[Mapping[str, torch.Tensor]],
                  lengths: Mapping[str, Sequence[int]], classes: int, spec: ProbeSpec, regimen: Regimen,
                  device: torch.device, stacked: bool = True) -> dict[str, list[Fit]]:
    """``fit_adam`` of every row of ``x`` ({row: {split: features}}) on every labelling (the real tags, the control
    tags of the regimen's seed), the rows of one width trained together (elmo_bench.probe.lib.stacked: each
    problem's fit is its one-problem fit; ``stacked=False`` trains them one by one): {row: a Fit per labelling}."""
    out: dict[str, list[Fit]] = {}
    widths: dict[int, list[str]] = {}
    for row, features in x.items():
        widths.setdefault(int(features["train"].shape[1]), []).append(row)
    for rows in widths.values():
        tokens = {row: {s: Tokens(torch.split(x[row][s], list(lengths[s])),
                                  torch.split(labellings[0][s], list(lengths[s])), device) for s in ("train", "dev")}
                  for row in rows}
        problems = [(row, i) for row in rows for i in range(len(labellings))]
        trains = [tokens[row]["train"].relabelled(labellings[i]["train"]) if i else tokens[row]["train"]
                  for row, i in problems]
        devs = [tokens[row]["dev"].relabelled(labellings[i]["dev"]) if i else tokens[row]["dev"]
                for row, i in problems]
        trained = train_probes(spec, trains, devs, classes, regimen, device, stacked=stacked)
        for (row, i), fitted in zip(problems, trained):
            test = torch.split(x[row]["test"], list(lengths["test"]))
            out.setdefault(row, []).append(_scored(fitted, test, labellings[i]["test"], lengths["test"]))
    return out


@dataclass
class Outcome:
    """Every fit, keyed (probe, row): one per seed (the converged probe on real tags: one)."""

    real: dict[tuple[str, str], list[Fit]] = field(default_factory=dict)
    control: dict[tuple[str, str], list[Fit]] = field(default_factory=dict)


def _fits(probe: str, x: Mapping[str, torch.Tensor], y: Mapping[str, torch.Tensor], lengths: Mapping[str, list[int]],
          classes: int, settings: ProbeSettings, seed: int, device: torch.device,
          grid: Sequence[float] | None = None) -> Fit:
    if probe == "converged":
        return fit_converged(x, y, lengths["test"], classes, grid or settings.grid, settings.max_iter, settings.tol)
    regimen = Regimen(**{**settings.regimen.record(), "seed": seed})
    return fit_adam(x, y, lengths, classes, settings.spec[probe], regimen, device)


def run_probes(views: Mapping[str, Mapping[str, np.ndarray]], splits: Mapping[str, Sequence[dict]],
               labels: Sequence[str], settings: ProbeSettings, device: torch.device, stacked: bool = True) -> Outcome:
    """Train every probe of ``settings`` on every view (row), on the real tags and (``control``) the control tags;
    the papers' probes of one seed on every row and both labellings together (``fit_adam_rows``; ``stacked=False``:
    one at a time, the same fits)."""
    lengths = {s: [len(ex["tokens"]) for ex in splits[s]] for s in SPLITS}
    y = {s: tag_ids(splits[s], labels) for s in SPLITS}
    controls = {seed: control_tags(splits, labels, seed) for seed in settings.seeds} if settings.control else {}
    x = {row: {s: torch.from_numpy(np.ascontiguousarray(features[s])) for s in SPLITS}
         for row, features in views.items()}
    adam: dict[tuple[str, int], dict[str, list[Fit]]] = {}
    for probe in [p for p in settings.probes if p != "converged"]:
        for seed in settings.seeds:
            regimen = Regimen(**{**settings.regimen.record(), "seed": seed})
            labellings = [y, *([controls[seed]] if controls else [])]
            log.info("probe %s, seed %d: rows %s, %d labellings", probe, seed, ", ".join(x), len(labellings))
            adam[(probe, seed)] = fit_adam_rows(x, labellings, lengths, len(labels), settings.spec[probe], regimen,
                                                device, stacked)
    outcome = Outcome()
    for row in views:                        # the rows' and probes' order of the record, as fitted one by one
        for probe in settings.probes:
            if probe != "converged":
                outcome.real[(probe, row)] = [adam[(probe, seed)][row][0] for seed in settings.seeds]
                outcome.control[(probe, row)] = [adam[(probe, seed)][row][1] for seed in controls]
                continue
            log.info("probe %s on %s: %s features", probe, row, tuple(x[row]["train"].shape))
            real = [_fits(probe, x[row], y, lengths, len(labels), settings, settings.seeds[0], device)]
            outcome.real[(probe, row)] = real
            outcome.control[(probe, row)] = [             # the real task's L2, never its own
                _fits(probe, x[row], controls[seed], lengths, len(labels), settings, seed, device,
                      [real[0].extra["l2"]]) for seed in controls]
    return outcome


def _mean_sd(values: Sequence[float]) -> tuple[float, float]:
    return statistics.fmean(values), statistics.stdev(values) if len(values) > 1 else 0.0


def summarise(outcome: Outcome, settings: ProbeSettings, test_tokens: Sequence[int]) -> dict[str, Any]:
    """The printed / recorded numbers: {"dev", "test"} accuracy per key (mean over seeds), with ``--control``
    "control" and "selectivity" in the same shape, "sd" (standard deviations, same shape, several seeds only) and
    "best_layer" per probe (test split)."""
    out: dict[str, Any] = {"dev": {}, "test": {}}
    sd: dict[str, dict[str, dict[str, float]]] = {}
    for (probe, row), fits in outcome.real.items():
        key = settings.key(probe, row)
        for split in ("dev", "test"):
            real = [getattr(f, split) for f in fits]
            out[split][key], spread = _mean_sd(real)
            if len(real) > 1:
                sd.setdefault("accuracy", {}).setdefault(split, {})[key] = spread
            control = [getattr(f, split) for f in outcome.control.get((probe, row), [])]
            if not control:
                continue
            selectivity = [(real[i] if len(real) > 1 else real[0]) - c for i, c in enumerate(control)]
            for name, values in (("control", control), ("selectivity", selectivity)):
                mean, spread = _mean_sd(values)
                out.setdefault(name, {"dev": {}, "test": {}})[split][key] = mean
                if len(values) > 1:
                    sd.setdefault(name, {}).setdefault(split, {})[key] = spread
    if sd:
        out["sd"] = sd
    tokens = np.asarray(test_tokens)
    best = {probe: best_layer({row: np.stack([f.correct for f in fits]) for (p, row), fits in outcome.real.items()
                               if p == probe}, tokens) for probe in settings.probes}
    out["best_layer"] = {p: b for p, b in best.items() if b is not None}
    return out


def probe_details(outcome: Outcome, settings: ProbeSettings) -> dict[str, Any]:
    """Per key: how each fit ended (L2 and convergence, or epochs and the kept epoch), real and control."""
    return {settings.key(probe, row): {"real": [f.extra for f in fits],
                                       "control": [f.extra for f in outcome.control.get((probe, row), [])]}
            for (probe, row), fits in outcome.real.items()}


def rounded(tree: Any, digits: int = 2) -> Any:
    """``tree`` with every float rounded (the printed summary); p-values keep 4 digits."""
    if isinstance(tree, dict):
        return {k: rounded(v, 4 if k == "p_value" else digits) for k, v in tree.items()}
    if isinstance(tree, list):
        return [rounded(v, digits) for v in tree]
    return round(tree, digits) if isinstance(tree, float) else tree
