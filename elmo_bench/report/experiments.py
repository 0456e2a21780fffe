"""Which records are seeds of one experiment, read from the records alone: each record's identity in the one
canonical form that resume uses (elmo_bench.identity.rules), less the seed.

A results.json carries its resolved config, its encoder's identity, its probe's name and settings and the content
fingerprints of the data it read; from those this module builds the record's flat identity and brings it to the
canonical form (older records through the same history rules as resume). Data files a task run names by path are
named by their path below the data root (a record carries no fingerprint of them), so the same file read from two
checkouts is one dataset.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Iterable, Mapping, Sequence

from elmo_bench.identity.history import LEGACY_KIND, plugin_before_versions
from elmo_bench.identity.rules import PROBE_IGNORED, SEED, canonical, experiment, flatten, key_of
from elmo_bench.records.run_record import RunRecord
from elmo_bench.report import encoder_names

#: data keys of a task run that name a file or directory
DATA_PATHS = ("data.train", "data.dev", "data.test", "data.path")
#: identity keys of a record that stand for the encoder, replaced by its normalised identity (encoder_names)
ENCODER_STANDINS = ("bilm.", "encoder.hash")


def data_tail(value: Any) -> Any:
    """A data path as the part below its last ``data`` folder (else its file name): the same file from two
    checkouts, or written absolute by an older version and relative by a newer, is one file."""
    if not isinstance(value, str) or not value:
        return value
    parts = os.path.normpath(value).replace("\\", "/").split("/")
    if "data" in parts:
        return "/".join(parts[len(parts) - parts[::-1].index("data"):])
    return parts[-1]


def probe_part(record: RunRecord) -> dict[str, Any]:
    """A probe record's name, settings (paths of data it read replaced by their fingerprints) and data
    fingerprints, as identity keys; {} for a task run's record."""
    probe = record.extra.get("probe")
    if not isinstance(probe, Mapping):
        return {}
    fingerprints = dict(record.extra.get("data_fingerprint") or {})
    settings = {f"probe.{k}": v for k, v in flatten(probe.get("settings") or {}).items()
                if f"data.{k}" not in fingerprints}
    return {"probe.name": probe.get("name"), **settings, **fingerprints}


def plugins_of(record: RunRecord, probe: Mapping[str, Any]) -> dict[str, Any]:
    """The plug-ins' versions a record names (``plugins``); where a record written before versions names none,
    elmo_bench.identity.history's rule (``plugin_before_versions``)."""
    named = record.extra.get("plugins") if isinstance(record.extra.get("plugins"), Mapping) else {}
    kind = "probe" if probe else "task"
    out = {f"plugin.{kind}": named.get(kind) or plugin_before_versions(probe.get("probe.name") or record.task)}
    if record.elmo is not None or probe:
        out["encoder.plugin"] = named.get("encoder") or plugin_before_versions(
            (record.encoder or {}).get("kind", LEGACY_KIND))
    return out


def identity_of(record: RunRecord) -> dict[str, Any]:
    """The canonical identity of the run a record was made by (see the module docstring)."""
    flat = flatten(record.config or {})
    probe = probe_part(record)
    if probe:
        flat = {k: v for k, v in flat.items() if not k.startswith("probe.")}
    flat = {k: (data_tail(v) if k in DATA_PATHS else v) for k, v in flat.items()
            if not k.startswith(ENCODER_STANDINS)}
    flat.update(probe)
    flat["record.task"] = record.task
    flat.update(plugins_of(record, probe))
    flat.update({f"record.data.{k}": v for k, v in flatten(record.data or {}).items() if not k.endswith("examples")})
    flat.update({f"record.elmo.{k}": v for k, v in (record.elmo or {}).items() if k in ("mode", "layer_index")})
    probing = record.extra.get("probing")            # a control-task record of several probe seeds: its own run
    if isinstance(probing, Mapping) and probing.get("seeds"):
        flat["record.probing.seeds"] = list(probing["seeds"])
    flat[SEED] = record.seed
    if record.elmo is not None or probe or record.encoder or record.bilm:
        flat["encoder.identity"] = encoder_names.key_of(encoder_names.identity(record))
    if (record.bilm or {}).get("adapted_hash"):       # bilm=adapted: its base biLM's name, its own weights
        flat["encoder.adapted_hash"] = record.bilm["adapted_hash"]
    position = encoder_names.checkpoint_position(record)
    if position is not None:      # a series point: identical weights under two steps are two records, both kept
        flat.update({f"checkpoint.{k}": position.get(k) for k in ("series", "step", "tokens_seen")})
    return canonical(flat, extra_ignored=PROBE_IGNORED if probe else ())


def experiment_key(record: RunRecord) -> str:
    """Equal for two records exactly when they are seeds of one experiment."""
    return key_of(experiment(identity_of(record)))


def run_key(record: RunRecord) -> str:
    """Equal for two records of one experiment and one seed: duplicates."""
    return key_of(identity_of(record))


def varying(identities: Iterable[Mapping[str, Any]]) -> list[str]:
    """The keys whose values are not the same in every identity (absent counts as a value), sorted."""
    identities = list(identities)
    keys = sorted({k for ident in identities for k in ident})
    return [k for k in keys if len({key_of({"v": ident.get(k, "(absent)")}) for ident in identities}) > 1]


def words(identity: Mapping[str, Any], keys: Iterable[str]) -> str:
    """``key value`` for each of ``keys`` in an identity, joined: the label of a row block apart."""
    shown = []
    for key in keys:
        value = identity.get(key, "—")
        text = value if isinstance(value, str) else key_of({"v": value})[6:-1]
        shown.append(f"{key.removeprefix('probe.')} {text}")
    return ", ".join(shown)


def apart(runs: Sequence[Any], bucket: Callable[[Any], Any] = lambda run: run.task,
          shown: tuple[str, ...] = ()) -> list[tuple[str, list[Any]]]:
    """``runs`` (of one row or row block) split where records that the table would average as seeds (one
    ``bucket``: by default one record task) are different experiments: the keys that vary inside a bucket
    (``shown``: keys the table already sets apart, e.g. as columns, left out) split every run of the block, each
    part labelled with its values of them in words. [("", runs)] when every bucket holds one experiment."""
    runs = list(runs)
    idents = [experiment(identity_of(run.record)) for run in runs]
    buckets: dict[str, list[dict[str, Any]]] = {}
    for run, ident in zip(runs, idents):
        buckets.setdefault(key_of({"b": bucket(run)}), []).append(ident)
    keys = sorted({k for members in buckets.values() for k in varying(members)
                   if not any(k == s or k.startswith(s + ".") for s in shown)})
    if not keys:
        return [("", runs)]
    parts: dict[str, tuple[dict[str, Any], list[Any]]] = {}
    for run, ident in zip(runs, idents):
        parts.setdefault(key_of({k: ident.get(k, "(absent)") for k in keys}), (ident, []))[1].append(run)
    return sorted(((words(ident, keys), members) for ident, members in parts.values()), key=lambda part: part[0])
