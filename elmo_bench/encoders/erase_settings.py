"""``encoder.erase.*`` (amnesic probing inside the forward pass, issue 47 item 3), checked torch-free at the door.

``encoder.erase.concept`` null (the default) leaves the encoder exactly as it was: no key reaches its identity or
cache key. Set, it names the concept a ``probe=erasure`` run erased (upos | xpos | deprel); ``encoder.erase.layer``
the model's layer index whose output is erased inside the encoder; ``encoder.erase.path`` that run's eraser file
(``<run>/erasers/layer_<k>.pt``) or the run directory; ``encoder.erase.control`` none (the fitted eraser) | random
(the same whitening and mean on a random orthonormal frame of the same rank) | orth (amnesic probing's uniform
random directions, projected out); ``encoder.erase.seed`` the control's draw.
"""
from __future__ import annotations

from typing import Any, Mapping

from elmo_bench.base.errors import ConfigError
from elmo_bench.base.ranges import check_number

#: the concepts probe=erasure fits (its probe.tags)
CONCEPTS = ("upos", "xpos", "deprel")
#: none = the fitted LEACE eraser; random = its whitening and mean on a random frame; orth = amnesic probing's
CONTROLS = ("none", "random", "orth")
#: the kinds whose forward pass can take an eraser
ERASABLE = ("bilm", "transformers")
#: the group's keys and their off values (conf/encoder/bilm.yaml, transformers.yaml)
OFF = {"concept": None, "layer": None, "control": "none", "seed": 0, "path": None}


def erase_spec(spec: Mapping[str, Any], prefix: str = "encoder") -> dict[str, Any] | None:
    """The checked ``encoder.erase`` settings, or None when erasure is off (``concept`` null or the group absent);
    ConfigError (one line) for an unknown key, a concept, control or kind outside their sets, a missing layer or
    path, a negative layer or seed."""
    group = spec["erase"] if "erase" in spec else None
    if group is None:
        return None
    unknown = sorted(set(group) - set(OFF))
    if unknown:
        raise ConfigError(f"config: {prefix}.erase.{unknown[0]} is not a key (expected {', '.join(OFF)})")
    given = {**OFF, **dict(group)}
    if given["concept"] is None:
        return None
    if given["concept"] not in CONCEPTS:
        raise ConfigError(f"config: {prefix}.erase.concept expected one of {', '.join(CONCEPTS)} or null, found "
                          f"{given['concept']!r}")
    if spec["kind"] not in ERASABLE:
        raise ConfigError(f"config: {prefix}.erase applies to encoder={'|'.join(ERASABLE)} (the forward pass runs "
                          f"here), found encoder={spec['kind']}; remove {prefix}.erase.concept")
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
