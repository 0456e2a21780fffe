"""What is part of a run's identity, for a task run and a probe run alike: one canonical form (:func:`canonical`)
that resume compares with the stored one and the report groups by (less the seed: :func:`experiment`).

An identity is a flat ``dotted.key: value`` dict: the resolved config less the keys that never change a number
(:data:`IGNORED`: where files are, speed, logging, how a number was computed), each data file by a fingerprint of
its content, the encoder by its hash, and each plug-in as ``name@version`` (``plugin.task``, ``plugin.probe``,
``encoder.plugin``). Records of older versions are brought to today's form by the rules of
:mod:`elmo_bench.identity.history` before they are compared.
"""
from __future__ import annotations

import json
from typing import Any, Callable, Mapping

from elmo_bench.identity.history import (
    ADDED_DEFAULTS,
    ENCODER_PLUGIN,
    PLUGIN_KEYS,
    REMOVED_KEYS,
    encoder_plugin,
    version_of_code,
)
from elmo_bench.records.elmo_settings import TASK_ELMO_DEFAULTS, effective_settings

#: keys (or dotted prefixes) that never change a number: where files are (data and models are identified by
#: content instead: fingerprints, ``encoder.hash``, ``bilm.hash``), speed and logging (``device``, like
#: ``threads``, changes speed and floating-point rounding only: a run killed on one GPU may resume on another),
#: refusals that never give another number (``data.allow_identical_splits``, ``data.max_overlap``)
IGNORED = ("progress", "threads", "logger", "paths", "choices", "device", "bilm.options", "bilm.weights",
           "bilm.name", "bilm.base_dir", "encoder.path", "probe.wordnet_work", "data.allow_identical_splits",
           "data.max_overlap")
#: how a number was computed, where that cannot change it: streamed or gathered statistics and their batches,
#: extraction batch sizes, cache shards, where a model spread over devices puts its blocks (``encoder.device_map``,
#: ``max_memory``, ``offload_folder``: each block runs the same kernels in the same dtype, on whichever device; a
#: run with a device map is the run without one). (A task run's ``cache`` is no such key: without the cache its
#: head sees fp32 layers, with it the cache's fp16 ones.)
HOW_COMPUTED = ("shard_sentences", "probe.stream", "probe.batch_tokens", "encoder.batch_size", "encoder.device_map",
                "encoder.max_memory", "encoder.offload_folder")
#: a probe run's own: it fits on the cache's layers or on the same layers computed directly, the same numbers
PROBE_IGNORED = ("cache",)
#: key prefixes that only matter when the run uses encoder layers (a GloVe baseline has none)
ELMO_ONLY = ("task.elmo.", "mix.", "encoder.")
#: the stopping rule's keys: they decide only *when* training stops, never what an epoch computes
STOPPING_RULE = tuple(f"{group}.{key}" for group in ("trainer", "task.trainer")
                      for key in ("max_epochs", "patience", "min_epochs", "scale_epochs", "max_scaled_epochs"))
#: the key of a run's seed: the one difference between two seeds of one experiment
SEED = "seed"
#: plug-in kind ("task", "probe") → its name → {code hash: version} (the manifest's lines and the live code's)
CodeVersions = Mapping[str, Mapping[str, Mapping[str, int]]]
#: a rule of elmo_bench.identity.history that narrows two canonical identities to what an older record can be
#: compared on (``older_results_compared``)
Narrowing = Callable[[Mapping[str, Any], Mapping[str, Any]], tuple[dict[str, Any], dict[str, Any]]]


def flatten(tree: Any, prefix: str = "") -> dict[str, Any]:
    """{"a": {"b": 1}, "c": [1, 2]} → {"a.b": 1, "c": [1, 2]} (lists stay values)."""
    if isinstance(tree, Mapping):
        out: dict[str, Any] = {}
        for key, value in tree.items():
            out.update(flatten(value, f"{prefix}{key}."))
        return out
    return {prefix[:-1]: tree}


def matches(key: str, prefixes: tuple[str, ...]) -> bool:
    """``key`` is one of ``prefixes`` or below one (``a.b`` is below ``a``)."""
    return any(key == p or key.startswith(p + ".") for p in prefixes)


def without_ignored(flat: Mapping[str, Any], extra: tuple[str, ...] = ()) -> dict[str, Any]:
    """``flat`` less :data:`IGNORED`, :data:`HOW_COMPUTED` and ``extra`` (a plug-in's own identity-free keys)."""
    skip = IGNORED + HOW_COMPUTED + extra
    return {k: v for k, v in flat.items() if not matches(k, skip)}


def without_elmo_only(flat: Mapping[str, Any]) -> dict[str, Any]:
    """A flat identity without the ELMo-only keys when the run has no ELMo (``embedder.elmo: false``)."""
    if flat.get("embedder.elmo") is not False:
        return dict(flat)
    return {k: v for k, v in flat.items() if not k.startswith(ELMO_ONLY)}


def effective_elmo(flat: Mapping[str, Any]) -> dict[str, Any]:
    """A flat identity with each ELMo setting as the value the run used: ``task.elmo.K`` (the task's default) and
    ``mix.K`` (a command-line override) become one ``elmo.K``, the override where set. A run of ``mix.dropout=0.5``
    and a run of a task whose default became 0.5 are then the same experiment."""
    if not any(k.startswith(("task.elmo.", "mix.")) for k in flat):
        return dict(flat)
    task_elmo = {key: flat[f"task.elmo.{key}"] for key in TASK_ELMO_DEFAULTS if f"task.elmo.{key}" in flat}
    mix = {key: flat.get(f"mix.{key}") for key in TASK_ELMO_DEFAULTS}
    out = {k: v for k, v in flat.items()
           if not any(k in (f"task.elmo.{key}", f"mix.{key}") for key in TASK_ELMO_DEFAULTS)}
    out.update({f"elmo.{key}": value for key, value in effective_settings(task_elmo, mix).items()})
    return out


def with_added_defaults(flat: Mapping[str, Any], declared: Mapping[str, Any] = {}) -> dict[str, Any]:
    """``flat`` with every added default (:data:`ADDED_DEFAULTS` and a plug-in's ``declared`` ones: its settings'
    and data keys' defaults) it lacks, where its group is there (a top-level key: always; ``trainer.rho``: when
    the identity has a ``trainer`` group), and without :data:`REMOVED_KEYS`."""
    groups = {k.split(".", 1)[0] for k in flat}
    out = {k: v for k, v in flat.items() if k not in REMOVED_KEYS}
    for key, value in {**ADDED_DEFAULTS, **declared}.items():
        if key not in out and ("." not in key or key.split(".", 1)[0] in groups):
            out[key] = value
    return out


def with_versions(flat: Mapping[str, Any], versions: CodeVersions) -> dict[str, Any]:
    """A stored code hash (``code.task``, ``code.probe``: identities before versions) as the plug-in's
    ``name@version`` whose code it is (elmo_bench.identity.history); a hash of no known version stays as it is
    (another version's code: a different identity). ``encoder.plugin`` added where the encoder group is there."""
    out = dict(flat)
    for kind, code_key in PLUGIN_KEYS.items():
        name = out.get(f"{kind}.name")
        code = out.get(code_key)
        if isinstance(code, str) and isinstance(name, str):
            found = version_of_code(code, (versions.get(kind) or {}).get(name) or {})
            if found is not None:
                del out[code_key]
                out[f"plugin.{kind}"] = f"{name}@{found}"
    if ENCODER_PLUGIN not in out and any(k.startswith("encoder.") for k in out):
        out[ENCODER_PLUGIN] = encoder_plugin(out)
    return out


def canonical(flat: Mapping[str, Any], versions: CodeVersions = {}, declared: Mapping[str, Any] = {},
              extra_ignored: tuple[str, ...] = ()) -> dict[str, Any]:
    """The form two identities are compared in: added defaults filled, removed and ignored keys dropped, code
    hashes as versions, the ELMo settings as used, the ELMo-only keys dropped for a run without ELMo."""
    out = with_added_defaults(flat, declared)
    out = with_versions(without_ignored(out, extra_ignored), versions)
    return without_elmo_only(effective_elmo(out))


def compared(stored: Mapping[str, Any], current: Mapping[str, Any], versions: CodeVersions = {},
             declared: Mapping[str, Any] = {}, extra_ignored: tuple[str, ...] = (),
             narrowed: Narrowing | None = None) -> list[str]:
    """The one comparison resume makes, for a task run and a probe run alike: ``key: old → new`` for each
    difference between a stored identity and a live one, both in :func:`canonical` form. An added default
    (:data:`ADDED_DEFAULTS` or ``declared``) that one side holds is given to the other too even where its group is
    absent there (a run from before the ``encoder`` group existed is compared with today's ``encoder.kind``);
    ``narrowed``: history's rule for a record compared on part of its keys, applied to both canonical forms."""
    known = {**ADDED_DEFAULTS, **declared}
    stored_full = {**{k: v for k, v in known.items() if k in current}, **stored}
    current_full = {**{k: v for k, v in known.items() if k in stored}, **current}
    pair = (canonical(stored_full, versions, declared, extra_ignored),
            canonical(current_full, versions, declared, extra_ignored))
    return differences(*(narrowed(*pair) if narrowed is not None else pair))


def experiment(identity: Mapping[str, Any]) -> dict[str, Any]:
    """The identity of the experiment a run is a seed of: its canonical identity less the seed."""
    return {k: v for k, v in identity.items() if k != SEED}


def key_of(identity: Mapping[str, Any]) -> str:
    """An identity as canonical JSON: equal identities, equal keys."""
    return json.dumps(dict(identity), sort_keys=True, default=str)


_ABSENT = object()


def differences(stored: Mapping[str, Any], current: Mapping[str, Any]) -> list[str]:
    """``key: old → new`` for every key whose value differs (missing on one side counts as a difference)."""
    out = []
    for key in sorted(set(stored) | set(current)):
        if stored.get(key, _ABSENT) != current.get(key, _ABSENT):
            out.append(f"{key}: {_show(stored.get(key, _ABSENT))} → {_show(current.get(key, _ABSENT))}")
    return out


def _show(value: Any) -> str:
    return "(absent)" if value is _ABSENT else json.dumps(value, default=str)

