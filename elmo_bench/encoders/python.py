"""``encoder=python encoder._target_=pkg.module.Class``: any user class that follows the Encoder protocol.

Hydra's ``instantiate`` builds it from the ``encoder`` group minus ``kind`` (so ``encoder.+dim=64`` reaches the
class as ``dim=64``). The object is checked for the protocol's members at once, and every batch it returns is
shape-checked by the cache (protocol.check_layers), so a broken class fails with one line naming what is wrong.
Its identity gains the target, so two classes never share cache entries.
"""
from __future__ import annotations

from typing import Any, Mapping

from elmo_bench.base.errors import ConfigError
from elmo_bench.encoders.costs import EncoderCost
from elmo_bench.encoders.kinds import EncoderKind
from elmo_bench.encoders.settings import missing


class _Targeted:
    """The user's encoder with ``target`` added to its identity (everything else passes through)."""

    def __init__(self, inner: Any, target: str) -> None:
        self.inner, self.target = inner, target
        self.num_layers, self.dim = int(inner.num_layers), int(inner.dim)
        self.whole_sequences = bool(getattr(inner, "whole_sequences", False))

    def identity(self) -> dict[str, Any]:
        own = dict(self.inner.identity())
        return {"kind": "python", "target": self.target, **{k: v for k, v in own.items() if k != "kind"},
                "class_kind": own.get("kind")}

    def layers(self, sentences: Any) -> Any:
        return self.inner.layers(sentences)

    def to(self, device: Any) -> "_Targeted":
        move = getattr(self.inner, "to", None)
        if callable(move):
            self.inner = move(device) or self.inner
        return self


def instantiate_encoder(spec: Mapping[str, Any]) -> _Targeted:
    from hydra.utils import instantiate

    target = spec.get("_target_")
    if not target or target == "???":
        raise ConfigError("config: encoder=python needs encoder._target_=pkg.module.Class")
    arguments = {k: v for k, v in spec.items() if k not in ("kind", "cache_dtype")}  # cache_dtype: the cache's
    try:
        inner = instantiate(arguments)
    except Exception as exc:  # Hydra wraps import and constructor errors: one line naming the target and cause
        cause = exc.__cause__ or exc
        text = " ".join(line.strip() for line in str(cause).splitlines() if line.strip())
        raise ConfigError(f"config: encoder._target_={target} could not be built: "
                          f"{type(cause).__name__}: {text}") from None
    missing = [name for name in ("identity", "layers", "num_layers", "dim") if not hasattr(inner, name)]
    if missing:
        raise ConfigError(f"config: encoder._target_={target} is not an Encoder: it lacks {', '.join(missing)} "
                          f"(see elmo_bench/encoders/protocol.py)")
    return _Targeted(inner, str(target))


def _check(spec: Mapping[str, Any], prefix: str) -> None:
    """``encoder._target_`` is required."""
    if missing(spec.get("_target_")):
        raise ConfigError(f"config: encoder=python needs {prefix}._target_=pkg.module.Class; found none")


def _price(spec: Mapping[str, Any], options: Any, options_source: str, sentences: Any, amp: Any = "off") -> Any:
    """Unknown FLOPs with a note: nothing in a user class says what it computes."""
    from elmo_bench.encoders.build import build_encoder  # lazy: torch
    encoder = build_encoder(spec, amp=amp)
    return EncoderCost("python", None, encoder.num_layers, encoder.dim, f"python {spec.get('_target_')}",
                       "a python encoder's FLOPs are not known from its config: not counted in gpu_hours")


#: ``encoder=python``: ``encoder._target_`` = any class, the other keys its arguments (elmo_bench.encoders.kinds)
#: (docs/encoders.md):   python run.py task=ner embedder=glove_elmo encoder=python encoder._target_=pkg.module.Class
ENCODER_KIND = EncoderKind("python", lambda spec, amp="off": instantiate_encoder(spec),
                           conf={"_target_": "???", "cache_dtype": "fp16"}, check=_check, free_keys=True,
                           model_key="_target_", price=_price)
