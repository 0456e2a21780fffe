"""Which frozen encoder gave a run's layers, and the name the report shows for it.

A run's encoder is keyed by its whole recorded identity (results.json ``encoder`` without ``layers``/``dim``), so two
encoders that differ in anything (model, revision, pooling, weights hash, ...) are never grouped together; only
their display names are shortened. A record written before encoders existed has no ``encoder`` key: it is the biLM
of its ``bilm`` hash. A ``bilm=adapted`` run counts as its base biLM (Table 1 already gives it a row of its own).

The report switches to a per-encoder layout (an Encoder column, one row block per encoder) only where the runs a
table reads come from several encoders, or from any encoder that is not a biLM: with the biLM alone every table is
exactly as before encoders existed.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any, Iterable

from elmo_bench.identity.history import LEGACY_KIND, without_implied_entries
from elmo_bench.records.run_record import RunRecord

#: the biLM's kind: what a record written before encoders existed was made by (it names none)
BILM = LEGACY_KIND
#: identity entries that are facts about the layers, not part of who the encoder is
_SHAPE_KEYS = ("layers", "dim", "layer_precision", "forced_unknown_words", "model_layers")
#: where in training the encoder's checkpoint was taken (a checkpoint series' point): a fact about the weights,
#: whose content the identity holds already; read by the "by training step" section (elmo_bench.report.by_step)
CHECKPOINT = "checkpoint"


def identity(record: RunRecord) -> dict[str, Any]:
    """The run's encoder identity, normalised so every run of one encoder has the same dict."""
    bilm = record.bilm or {}
    recorded = record.encoder or {}
    if recorded.get("kind", BILM) == BILM:
        if bilm.get("adapted_hash"):
            return {"kind": BILM, "hash": bilm.get("base_hash")}
        return {"kind": BILM, "hash": bilm.get("hash") or recorded.get("hash")}
    # an entry recorded since it was added, with the value older records implied: elmo_bench.identity.history
    return without_implied_entries({k: v for k, v in recorded.items() if k not in _SHAPE_KEYS and k != CHECKPOINT})


def checkpoint_position(record: RunRecord) -> dict[str, Any] | None:
    """Where in training the record's checkpoint was taken (results.json ``encoder.checkpoint``: series, step,
    tokens_seen), None for a record of no checkpoint series."""
    found = (record.encoder or {}).get(CHECKPOINT)
    return dict(found) if isinstance(found, dict) and isinstance(found.get("step"), int) else None


def key_of(ident: dict[str, Any]) -> str:
    """The grouping key: the identity as canonical JSON."""
    return json.dumps(ident, sort_keys=True, default=str)


def layer_count(record: RunRecord) -> int | None:
    """How many layers the run's encoder gives (``encoder.layers``, else the biLM record's), None if unrecorded."""
    value = (record.encoder or {}).get("layers", (record.bilm or {}).get("layers"))
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def layer_numbers(record: RunRecord) -> list[int] | None:
    """The model's number of each layer the run's encoder gives, in its order: ``encoder_layer_indices`` where
    ``encoder.layers`` kept some (issue 46: 0, 4, 8, ...), else 0..layers−1; None if unrecorded. Mix weights, sweeps
    and probe metrics name these numbers, never positions among them."""
    kept = (record.encoder or {}).get("encoder_layer_indices")
    if isinstance(kept, list) and kept and all(isinstance(i, int) and not isinstance(i, bool) for i in kept):
        return [int(i) for i in kept]
    count = layer_count(record)
    return None if count is None else list(range(count))


def last_layer(record: RunRecord) -> int | None:
    """The model's last layer number, the denominator of relative depth (l / L): recorded as ``model_layers`` − 1
    where ``encoder.layers`` kept a subset (an explicit list may stop short of it: [0, 4, 8] of 13); before that
    was recorded, and for all layers or every:K (which always keeps the last), the deepest layer the run's encoder
    gives. Unrecorded: None."""
    total = (record.encoder or {}).get("model_layers")
    if isinstance(total, int) and not isinstance(total, bool) and total > 0:
        return total - 1
    numbers = layer_numbers(record)
    return max(numbers) if numbers else None


def kept_layers(records: Iterable[RunRecord]) -> list[int] | None:
    """The model's numbers of the layers a mix over these runs' encoder weighs, where ``encoder.layers`` kept a
    subset (0, 4, 8, 11: the mix's position j is layer kept[j]); None for layers 0..L, named by position."""
    for record in records:
        numbers = layer_numbers(record)
        if numbers is not None and numbers != list(range(len(numbers))):
            return numbers
    return None


def depth_span(record: RunRecord) -> int | None:
    """L + 1 for relative depth l / L: the run's layer count, or for an encoder that kept some of a model's layers
    (``encoder.layers``) the model's last layer number + 1 (:func:`last_layer`), since its layers are named by
    those numbers."""
    last = last_layer(record)
    return None if last is None else last + 1


def variant_words(ident: dict[str, Any]) -> list[str]:
    """What else tells an encoder apart, in words (issue 56: only the identity's hash did): the weights' dtype
    ("bfloat16 weights"), an autocast precision ("fp16 autocast"), an eraser inside ("erased UPOS at layer 3", "random
    control for UPOS at layer 3, seed 2", "orth control ...")."""
    words = []
    if ident.get("dtype") not in (None, "float32"):
        words.append(f"{ident['dtype']} weights")
    elif ident.get("precision") not in (None, "fp32"):
        words.append(f"{ident['precision']} autocast")
    erase = ident.get("erase")
    if isinstance(erase, dict) and erase.get("concept") is not None:
        where = f"{str(erase['concept']).upper()} at layer {erase.get('layer')}"
        control = erase.get("control") or "none"
        seed = f", seed {erase['seed']}" if erase.get("seed") is not None else ""
        words.append(f"erased {where}" if control == "none" else f"{control} control for {where}{seed}")
    return words


def base_label(ident: dict[str, Any], recorded: str | None = None) -> str:
    """A short display name: the label its kind declared, recorded with the run (``recorded``: results.json's
    ``encoder_label``, elmo_bench.encoders.kinds); else named from the identity's own fields, whatever its kind:
    "ELMo (biLM <hash8>)", a user class's ``target``, "<kind> <file>" for layers read from a file (hdf5), a model
    that pools subwords by its name (with its pooling when not the default ``first``; either with
    :func:`variant_words`), "<kind> <model>", else the kind."""
    if recorded:
        return recorded
    kind = ident.get("kind")
    words = variant_words(ident)
    if kind == BILM:
        if not ident.get("hash"):
            return "ELMo (biLM" + "".join(f", {w}" for w in words) + ")"
        trained, _, random = str(ident["hash"]).partition("-random-")   # bilm=random: <hash>-random-<mode>-<seed>
        mode, _, seed = random.rpartition("-")
        return (f"ELMo (biLM {trained[:8]}{f', random {mode}, seed {seed}' if random else ''}"
                + "".join(f", {w}" for w in words) + ")")
    if "target" in ident:
        return str(ident.get("target"))
    if "file" in ident:
        return f"{kind} {ident.get('file')}"
    if "model" in ident and "pooling" in ident:
        pooling = ident.get("pooling")
        random = (f", random {ident['random_init']}, seed {ident.get('random_seed') or 0}"
                  if ident.get("random_init") else "")
        inside = [f"{pooling} pooling"] * (pooling not in (None, "first")) + words
        return str(ident.get("model")) + (f" ({', '.join(inside)})" if inside else "") + random
    if "model" in ident:
        return f"{kind} {ident.get('model')}"
    return str(kind)


def recorded_label(record: RunRecord) -> str | None:
    """The label the run's encoder kind declared, as results.json records it (``encoder_label``), or None."""
    label = record.extra.get("encoder_label")
    return str(label) if isinstance(label, str) and label else None


class EncoderNames:
    """Every encoder found among some runs, in report order (biLMs first, then by name), each with a unique label
    (a label two identities would share gets the first 8 hex digits of the identity's sha256 appended)."""

    def __init__(self, runs: Iterable[Any]) -> None:
        found: dict[str, dict[str, Any]] = {}
        #: the label each encoder's kind declared, where its runs recorded one
        self.recorded: dict[str, str | None] = {}
        self.layers: dict[str, int | None] = {}
        #: L + 1 of relative depth per encoder (depth_span): the layer count, unless encoder.layers kept a subset
        self.spans: dict[str, int | None] = {}
        for run in runs:
            key = run.encoder_key
            if key is not None and key not in found:
                found[key] = run.encoder
                self.recorded[key] = recorded_label(run.record)
                self.layers[key] = layer_count(run.record)
                self.spans[key] = depth_span(run.record)
        base = {key: base_label(ident, self.recorded[key]) for key, ident in found.items()}
        counts: dict[str, int] = {}
        for label in base.values():
            counts[label] = counts.get(label, 0) + 1
        self.labels = {key: label if counts[label] == 1 else f"{label} [{hashlib.sha256(key.encode()).hexdigest()[:8]}]"
                       for key, label in base.items()}
        self.identities = found
        self.order = sorted(found, key=lambda k: (found[k].get("kind") != BILM, self.labels[k], k))

    def label(self, key: str | None) -> str:
        return self.labels.get(key, "—") if key is not None else "—"

    def is_bilm(self, key: str | None) -> bool:
        return key is None or self.identities.get(key, {}).get("kind") == BILM

    def several(self, runs: Iterable[Any]) -> bool:
        """True when ``runs`` come from two or more encoders, or from any encoder that is not a biLM. A biLM whose
        record names no hash (a hand-written record) cannot be told from another biLM and does not count."""
        keys = {r.encoder_key for r in runs if r.encoder_key is not None}
        known = {k for k in keys if not (self.is_bilm(k) and not self.identities.get(k, {}).get("hash"))}
        return len(known) > 1 or any(not self.is_bilm(k) for k in keys)

    def split(self, runs: Iterable[Any]) -> list[tuple[str | None, list[Any]]]:
        """``runs`` grouped by encoder, in report order; [(None, [])] when there are none."""
        groups: dict[str, list[Any]] = {}
        for run in runs:
            groups.setdefault(run.encoder_key, []).append(run)
        ordered = [(k, groups[k]) for k in self.order if k in groups]
        ordered += [(k, v) for k, v in groups.items() if k not in self.order]
        return ordered or [(None, [])]

    def reference(self, runs: Iterable[Any]) -> str | None:
        """The encoder whose runs the single-encoder tables read when there are several: the biLM with the most runs
        (ties: report order), else the encoder with the most runs."""
        counts: dict[str, int] = {}
        for run in runs:
            if run.encoder_key is not None:
                counts[run.encoder_key] = counts.get(run.encoder_key, 0) + 1
        found = [k for k in self.order if k in counts]
        candidates = [k for k in found if self.is_bilm(k)] or found
        return max(candidates, key=lambda k: counts[k]) if candidates else None

    def reference_runs(self, runs: list[Any]) -> list[Any]:
        """``runs`` themselves when they come from one biLM; else the runs without an encoder (GloVe baselines) and
        those of the reference encoder: Tables 2 and 3, Figure 2, the dev curves, the budget, the scale ablation
        and Directions compare one encoder's settings (the paper's claims are about its biLM)."""
        if not self.several(runs):
            return runs
        keep = self.reference(runs)
        return [r for r in runs if r.encoder_key is None or r.encoder_key == keep]

    def as_json(self) -> list[dict[str, Any]]:
        """report.json's ``encoders``: each encoder's label, kind, identity and layer count, in report order."""
        return [{"label": self.labels[k], "kind": self.identities[k].get("kind"), "identity": self.identities[k],
                 "layers": self.layers[k]} for k in self.order]
