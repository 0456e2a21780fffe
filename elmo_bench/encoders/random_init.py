"""Random-encoder baselines (Zhang & Bowman 2018; Liu et al. 2019; Hewitt & Manning's Proj0): the same architecture
with weights drawn at random, so a probe can tell what training added from what the architecture gives for free.

Each kind declares the twins it can draw (``random_modes``) and draws them (``randomise``; the biLM: bilm/random.py,
all or lstm; a transformer: transformers/random.py, all); a kind that declares none (no architecture of ours to
draw) is one ConfigError line.
A random encoder's identity adds ``random_init`` and ``random_seed`` and its cache id differs from the trained
one's, so activation caches, records and run directories never mix them.
"""
from __future__ import annotations

from typing import Any

from elmo_bench.base.errors import ConfigError
from elmo_bench.encoders.kinds import encoder_kinds


def randomisable() -> dict[str, tuple[str, ...]]:
    """Kind → the random twins it declares (``random_modes``), in kind order."""
    return {name: kind.random_modes for name, kind in encoder_kinds().items() if kind.random_modes}


def modes() -> tuple[str, ...]:
    """Every random twin some kind can draw, first declared first."""
    return tuple(dict.fromkeys(mode for listed in randomisable().values() for mode in listed))


def check_random_init(kind: str, mode: str | None, flag: str = "--random-init") -> None:
    """ConfigError (one line) when ``mode`` is set and the encoder kind cannot be randomised that way."""
    if mode is None:
        return
    if mode not in modes():
        raise ConfigError(f"{flag} expected one of {', '.join(modes())}, found {mode!r}")
    allowed = randomisable().get(kind, ())
    if mode not in allowed:
        can = "; ".join(f"{k}: {'|'.join(m)}" for k, m in randomisable().items())
        raise ConfigError(f"{flag} {mode}: encoder {kind} cannot be randomised that way (randomisable: {can})")


def randomise(encoder: Any, mode: str | None, seed: int) -> Any:
    """``encoder`` itself when ``mode`` is None, else its random counterpart drawn by its kind's ``randomise``
    (ConfigError when it has none)."""
    if mode is None:
        return encoder
    kind = str(encoder.identity().get("kind", type(encoder).__name__))
    check_random_init(kind, mode)
    return encoder_kinds()[kind].randomise(encoder, mode, seed)
