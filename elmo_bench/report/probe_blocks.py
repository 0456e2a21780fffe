"""A probe's records in row blocks, as the probes' own sections show them (bits beyond a baseline, erasure): per
encoder (trained and random-weights twins apart), labels, training size and the settings that change a
measurement; a block's cells are means over its runs. Names no probe."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Sequence

from elmo_bench.report.collect import Run
from elmo_bench.report.encoder_names import EncoderNames, depth_span
from elmo_bench.report.experiments import apart
from elmo_bench.report.probe_common import Keyed, base_identity, train_sentences, weights_label
from elmo_bench.report.probe_settings import probe_settings
from elmo_bench.report.table import MISSING, Stat, stat

#: probe settings that choose what is measured, not how: records differing only in them are one block
SHARED_SETTINGS = ("baseline", "layers", "bootstrap", "data_dir", "probe", "tags", "max_train_sentences", "name")


#: the identity keys a block's columns and labels already set apart (which baselines, layers or families were
#: asked for, the labels, the training size): records differing only in them are one block
SHOWN = tuple(f"probe.{key}" for key in SHARED_SETTINGS)


@dataclass
class Block:
    """One row block: an encoder, its weights (trained or a random twin), the labels and the training size."""

    encoder: str
    weights: str
    tags: str
    trained: bool
    runs: list[Run]

    @property
    def layer_count(self) -> int:
        """L + 1 of relative depth (encoder_names.depth_span): with encoder.layers a subset, its deepest + 1."""
        counts = [c for r in self.runs if (c := depth_span(r.record))]
        return max(counts) if counts else 1

    def depth(self, layer: int) -> float:
        return layer / (self.layer_count - 1) if self.layer_count > 1 else 0.0


def settings_of(run: Run) -> dict[str, Any]:
    """The probe settings that change a measurement (not which baselines, layers or families were asked for, nor
    the bootstrap's resamples): records that differ in them are never averaged as seeds (issue 45)."""
    return {k: v for k, v in sorted(probe_settings(run.record).items()) if k not in SHARED_SETTINGS}


def _settings_label(settings: dict[str, Any], varying: Sequence[str]) -> str:
    return "".join(f", {k}={settings.get(k)}" for k in varying)


def blocks(runs: Sequence[Run]) -> list[Block]:
    """Runs by (encoder, weights, labels, training size, settings): encoders in report order (biLMs first), trained
    before random; runs of one block are seeds (or baselines run separately) of one measurement, and a block whose
    settings differ from a neighbour's is labelled with them (``trained, max_epochs=40``)."""
    keyed = [Keyed(r.record, base_identity(r.record)) for r in runs]
    names = EncoderNames(keyed)
    found: dict[tuple, list[Run]] = {}
    for run, k in zip(runs, keyed):
        key = (k.encoder_key, weights_label(run.record), str(run.record.data.get("tags") or "upos"),
               train_sentences(run) or 0, json.dumps(settings_of(run), sort_keys=True, default=str))
        found.setdefault(key, []).append(run)
    several_sizes = len({key[3] for key in found}) > 1
    varying: dict[tuple, list[str]] = {}
    for key in found:
        alike = [json.loads(other[4]) for other in found if other[:4] == key[:4]]
        varying[key[:4]] = sorted({k for a in alike for b in alike for k in set(a) | set(b) if a.get(k) != b.get(k)})
    order = {key: i for i, key in enumerate(names.order)}
    ranked = sorted(found, key=lambda key: (order.get(key[0], len(order)), key[1] != "trained", *key[1:]))
    return [Block(names.label(key[0]), key[1] + (f", {key[3]} train sentences" if several_sizes and key[3] else "")
                  + _settings_label(json.loads(key[4]), varying[key[:4]]) + (f", {apart_by}" if apart_by else ""),
                  key[2], key[1] == "trained", part)
            for key in ranked for apart_by, part in apart(found[key], shown=SHOWN)]


def cell(block: Block, key: str) -> Stat | None:
    return stat(r.value("test", key) for r in block.runs)


def interval(low: Stat | None, high: Stat | None) -> str:
    """"lo to hi" (means over runs where several)."""
    return MISSING if low is None or high is None else f"{low.mean:.3f} to {high.mean:.3f}"


def once(block: Block, key: str) -> Stat | None:
    """A value every run of the block shares (the prior's bits, the majority share): one number, not ± 0."""
    values = [v for r in block.runs if (v := r.value("test", key)) is not None]
    return Stat(values[0], None, len(values)) if values and len(set(values)) == 1 else stat(values)
