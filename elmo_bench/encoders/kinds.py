"""The encoder kinds, found rather than listed: every module of this package that declares
``ENCODER_KIND = EncoderKind(name, build)`` (bilm.py, transformers.py, hdf5.py, manylangs.py, python.py). A new
kind is a new module with that block; ``encoder=<name>`` and ``--encoder <name>`` then reach it (build.py).

Only the modules whose source declares a kind are imported (the scan reads each file's text first), so finding the
kinds loads no other module of the package.
"""
from __future__ import annotations

import functools
import importlib
import importlib.util
import pkgutil
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

import elmo_bench.encoders as encoders_package
from elmo_bench.base.errors import ConfigError

#: the name of the declaration in an encoder module
DECLARATION = "ENCODER_KIND"


@dataclass(frozen=True)
class EncoderKind:
    """One kind: ``name`` (the value of ``encoder.kind``) and ``build(spec, amp)`` → the Encoder from the encoder
    config group (None: built elsewhere from its own group, as the biLM is from ``bilm``)."""

    name: str
    build: Callable[[Mapping[str, Any], Any], Any] | None
    #: the kind's version (issue 54): ``encoder.plugin: <name>@<version>`` in the identity of every run that uses
    #: its layers; bump it when a change may move a number, else record the new code hash in
    #: elmo_bench/identity/plugins.txt
    version: int = 1


def need_path(spec: Mapping[str, Any]) -> str:
    """``encoder.path`` of a kind that reads files; one ConfigError line when it is absent."""
    path = spec.get("path")
    if not path:
        raise ConfigError(f"config: encoder={spec.get('kind')} needs encoder.path (found none)")
    return str(path)


def _declares(module: str) -> bool:
    spec = importlib.util.find_spec(module)
    origin = Path(spec.origin) if spec is not None and spec.origin else None
    return origin is not None and origin.suffix == ".py" and re.search(
        rf"^{DECLARATION} = ", origin.read_text(encoding="utf-8"), re.MULTILINE) is not None


@functools.cache
def encoder_kinds() -> dict[str, EncoderKind]:
    """Kind name → its declaration, sorted by name."""
    found: dict[str, EncoderKind] = {}
    for info in pkgutil.iter_modules(encoders_package.__path__):
        module = f"{encoders_package.__name__}.{info.name}"
        if info.ispkg or not _declares(module):
            continue
        kind = getattr(importlib.import_module(module), DECLARATION)  # checked: a module of this package
        found[kind.name] = kind
    return dict(sorted(found.items()))


def encoder_plugin_of(spec: Mapping[str, Any] | None) -> str:
    """``<kind>@<version>`` of an encoder group (the biLM when it names no kind): the ``encoder.plugin`` key of the
    identity of every run that uses its layers."""
    kind = str((spec or {}).get("kind") or "bilm")
    found = encoder_kinds().get(kind)
    return f"{kind}@{found.version if found is not None else 1}"
