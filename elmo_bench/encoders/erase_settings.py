"""``encoder.erase.*`` (amnesic probing inside the forward pass, issue 47 item 3), checked torch-free at the door.

``encoder.erase.concept`` null (the default) leaves the encoder exactly as it was: no key reaches its identity or
cache key. Set, it names the concept a ``probe=erasure`` run erased (upos | xpos | deprel); ``encoder.erase.layer``
the model's layer index whose output is erased inside the encoder; ``encoder.erase.path`` that run's eraser file
(``<run>/erasers/layer_<k>.pt``) or the run directory; ``encoder.erase.control`` none (the fitted eraser) | random
(the same whitening and mean on a random orthonormal frame of the same rank) | orth (amnesic probing's uniform
random directions, projected out); ``encoder.erase.seed`` the control's draw.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from elmo_bench.base.errors import ConfigError
from elmo_bench.base.ranges import check_number
from elmo_bench.encoders.kinds import encoder_kinds

#: the concepts probe=erasure fits (its probe.tags)
CONCEPTS = ("upos", "xpos", "deprel")
#: none = the fitted LEACE eraser; random = its whitening and mean on a random frame; orth = amnesic probing's
CONTROLS = ("none", "random", "orth")
#: the group's keys and their off values (the options of the kinds that declare ``erasure``)
OFF = {"concept": None, "layer": None, "control": "none", "seed": 0, "path": None}


def erasable() -> tuple[str, ...]:
    """The kinds whose forward pass can take an eraser (they declare ``erasure``)."""
    return tuple(name for name, kind in encoder_kinds().items() if kind.erasure is not None)


def check_erasable(spec: Mapping[str, Any], prefix: str = "encoder") -> None:
    """An ``erase`` key set on a kind whose forward pass does not run here (hdf5, manylangs, python): one line naming
    the kinds that erase and the key to remove (``encoder.erase.concept`` first)."""
    group = spec.get("erase")
    if not isinstance(group, Mapping) or spec.get("kind") in erasable():
        return
    given = [key for key in (*OFF, *sorted(set(group) - set(OFF)))
             if key in group and (key not in OFF or group[key] != OFF[key])]
    if given:
        raise ConfigError(f"config: {prefix}.erase applies to encoder={'|'.join(erasable())} (the forward pass runs "
                          f"here), found encoder={spec.get('kind')}; remove {prefix}.erase.{given[0]}")


def erase_spec(spec: Mapping[str, Any], prefix: str = "encoder") -> dict[str, Any] | None:
    """The checked ``encoder.erase`` settings, or None when erasure is off (``concept`` null or the group absent);
    ConfigError (one line) for an unknown key, a concept, control or kind outside their sets, a missing layer or
    path, a negative layer or seed."""
    group = spec["erase"] if "erase" in spec else None
    if group is None:
        return None
    check_erasable(spec, prefix)
    unknown = sorted(set(group) - set(OFF))
    if unknown:
        raise ConfigError(f"config: {prefix}.erase.{unknown[0]} is not a key (expected {', '.join(OFF)})")
    given = {**OFF, **dict(group)}
    if given["concept"] is None:
        return None
    if given["concept"] not in CONCEPTS:
        raise ConfigError(f"config: {prefix}.erase.concept expected one of {', '.join(CONCEPTS)} or null, found "
                          f"{given['concept']!r}")
    if given["control"] not in CONTROLS:
        raise ConfigError(f"config: {prefix}.erase.control expected one of {', '.join(CONTROLS)}, found "
                          f"{given['control']!r}")
    if given["layer"] is None:
        raise ConfigError(f"config: {prefix}.erase.concept={given['concept']} needs {prefix}.erase.layer (the "
                          f"model's layer index to erase); found none")
    check_number(f"{prefix}.erase.layer", given["layer"], int, low=0)
    check_number(f"{prefix}.erase.seed", given["seed"], int, low=0)
    if given["path"] is None or not str(given["path"]).strip():
        raise ConfigError(f"config: {prefix}.erase.concept={given['concept']} needs {prefix}.erase.path (a "
                          f"probe=erasure run directory or its erasers/layer_<k>.pt); found none")
    return {"concept": str(given["concept"]), "layer": int(given["layer"]), "control": str(given["control"]),
            "seed": int(given["seed"]), "path": str(given["path"])}


def refuse_layer(layer: int, kind: str, top: int, note: str = "") -> None:
    """One line when ``encoder.erase.layer`` is above ``top``, the highest layer ``kind`` can erase (its
    ``erasure.top``; ``note``: what its erasure adds, a transformer's last layer feeding no block)."""
    if layer > top:
        raise ConfigError(f"config: encoder.erase.layer={layer} is outside the encoder (encoder={kind} erases "
                          f"layers 0..{top}{note})")


def eraser_file(path: str, layer: int) -> Path:
    """``encoder.erase.path``: the eraser file itself, or a probe=erasure run directory (its erasers/layer_<k>.pt)."""
    found = Path(path).expanduser()
    if found.is_dir():
        found = found / "erasers" / f"layer_{layer}.pt"
    if not found.is_file():
        raise ConfigError(f"config: encoder.erase.path {path}: no eraser file {found.name} there (expected a "
                          f"probe=erasure run directory or its erasers/layer_{layer}.pt)")
    return found


def check_erase_files(spec: Mapping[str, Any], bilm_options: str | None) -> None:
    """At the door, before any run directory: the eraser file is there and the layer inside the encoder where its
    size can be read without loading it (the biLM's options.json; a transformer directory's config.json)."""
    erase = erase_spec(spec)
    if erase is None:
        return
    kind = encoder_kinds()[str(spec["kind"])]
    top = kind.erasure.top_from_files(spec, bilm_options) if kind.erasure is not None else None
    if top is not None:
        refuse_layer(erase["layer"], kind.name, top, kind.erasure.note)
    eraser_file(erase["path"], erase["layer"])
