"""Build the Encoder a run (``encoder=<kind>``) or a command (``--encoder <kind>``) asks for.

Kinds: ``bilm`` (the project's biLM from ``bilm.options`` / ``bilm.weights``: today's default, no ``encoder=``
needed), ``transformers`` (a Hugging Face model: ``encoder.path`` = directory or hub name), ``hdf5`` (layers computed
elsewhere: ``encoder.path`` = the file ``elmo-bench embed --layers all`` writes), ``manylangs`` (an
ELMoForManyLangs model directory) and ``python`` (``encoder._target_`` = any class, built by Hydra's
``instantiate`` with the other ``encoder.*`` keys as arguments).
"""
from __future__ import annotations

from typing import Any, Mapping

from elmo_bench.encoders.protocol import Encoder
from elmo_bench.base.errors import ConfigError
from elmo_bench.encoders.manylangs import ManyLangsEncoder
from elmo_bench.encoders.python import instantiate_encoder
from elmo_bench.encoders.transformers import TransformersEncoder

KINDS = ("bilm", "transformers", "hdf5", "manylangs", "python")


def _need_path(spec: Mapping[str, Any], kind: str) -> str:
    path = spec.get("path")
    if not path:
        raise ConfigError(f"config: encoder={kind} needs encoder.path (found none)")
    return str(path)


def build_encoder(spec: Mapping[str, Any], amp: Any = "off") -> Encoder:
    """The encoder described by ``spec`` (the ``encoder`` config group as a plain dict) of any kind but ``bilm``,
    which its callers load from the ``bilm`` group (elmo_bench.encoders.bilm); ``amp`` is the run's, the default
    precision of a transformer."""
    kind = spec.get("kind", "bilm")
    if kind == "transformers":
        return TransformersEncoder(_need_path(spec, kind), pooling=str(spec.get("pooling") or "first"),
                                   revision=spec.get("revision"),
                                   amp=spec.get("amp") if spec.get("amp") is not None else amp,
                                   max_length=spec.get("max_length"), batch_size=int(spec.get("batch_size") or 32))
    if kind == "hdf5":
        from elmo_bench.encoders.hdf5 import Hdf5Encoder  # lazy: h5py

        return Hdf5Encoder(_need_path(spec, kind))
    if kind == "manylangs":
        return ManyLangsEncoder(_need_path(spec, kind))
    if kind == "python":
        return instantiate_encoder(spec)
    raise ConfigError(f"config: encoder.kind expected one of {', '.join(KINDS)}, found {kind!r}")


def encoder_record(encoder: Encoder) -> dict[str, Any]:
    """What results.json records under ``encoder``: the identity plus the layer count and width."""
    return {**encoder.identity(), "layers": encoder.num_layers, "dim": encoder.dim}
