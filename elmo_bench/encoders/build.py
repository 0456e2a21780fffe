"""Build the Encoder a run (``encoder=<kind>``) or a command (``--encoder <kind>``) asks for, by its kind's
declaration (elmo_bench.encoders.kinds: each kind's ``build``; a kind loaded from its own group, the biLM from
``bilm``, by its ``load``). The kinds themselves and what each reads: docs/encoders.md.
"""
from __future__ import annotations

from typing import Any, Mapping

from elmo_bench.base.errors import ConfigError
from elmo_bench.encoders.kinds import encoder_kinds
from elmo_bench.encoders.protocol import Encoder
from elmo_bench.encoders.settings import check_encoder_settings


def build_encoder(spec: Mapping[str, Any], amp: Any = "off") -> Encoder:
    """The encoder described by ``spec`` (the ``encoder`` config group as a plain dict), built by its kind's
    declaration (a kind loaded from its own group, the biLM, is loaded by its callers: its ``load``); ``amp`` is
    the run's, the default precision of a transformer."""
    check_encoder_settings(spec)  # the kind is there and known
    kind = spec["kind"]
    declared = encoder_kinds().get(str(kind))
    if declared is None or declared.build is None:
        built = [name for name, k in encoder_kinds().items() if k.build is not None]
        groups = [f"{name} is built from the {' '.join(k.groups)} group" for name, k in encoder_kinds().items()
                  if k.build is None]
        raise ConfigError(f"config: encoder.kind expected one of {', '.join(built)} here ({'; '.join(groups)}), "
                          f"found {kind!r}")
    return declared.build(spec, amp)


def encoder_record(encoder: Encoder) -> dict[str, Any]:
    """What results.json records under ``encoder``: the identity plus the layer count and width, and the dtype the
    weights ran in where the encoder says (a transformer: ``encoder.dtype``; its identity names it only when not
    float32, so that the identities of the runs before it stay as they were). With ``encoder.layers`` a subset,
    ``model_layers`` is the model's hidden-state count (its last layer + 1): the report's relative depth l / L takes
    L from it, also when the kept list stops short of the last layer ([0, 4, 8] of 13)."""
    ran_in = getattr(encoder, "dtype", None)
    ident = encoder.identity()
    total = getattr(encoder, "total_layers", None)   # a subset kept (encoder.layers): the model's own layer count,
    deep = {"model_layers": int(total)} if "encoder_layer_indices" in ident and isinstance(total, int) else {}
    return {**ident, "layers": encoder.num_layers, "dim": encoder.dim, **deep,   # so that relative depth is l / L
            **({"dtype": ran_in} if isinstance(ran_in, str) else {})}


def layer_ids(encoder: Encoder) -> list[int]:
    """The model's index of each layer ``encoder`` gives, in its order: its identity's ``encoder_layer_indices``
    (``encoder.layers`` kept a subset), else 0..num_layers-1. Mixes, sweeps and probes name layers by these."""
    kept = encoder.identity().get("encoder_layer_indices")
    return [int(i) for i in kept] if kept is not None else list(range(int(encoder.num_layers)))
