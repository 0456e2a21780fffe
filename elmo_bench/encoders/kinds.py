"""The encoder kinds, found rather than listed: every module (or folder) of this package that declares
``ENCODER_KIND = EncoderKind(name, build)`` (bilm.py, transformers.py, hdf5.py, manylangs.py, python.py), and every
declaration a third-party distribution offers in the ``elmo_bench.encoders`` entry-point group
(``name = "pkg.module:ENCODER_KIND"``). A new kind is a new module with that block; ``encoder=<name>`` and
``--encoder <name>`` then reach it (build.py).

The scan is the one every plug-in point shares (elmo_bench.base.registry): a broken kind is skipped with one
warning line naming it, and asking for it by name is that line. Only the modules whose source assigns the
declaration are imported (each file's text is read first), so finding the kinds loads no other module of the
package.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Callable, Mapping

import elmo_bench.encoders as encoders_package
from elmo_bench.base.errors import ConfigError
from elmo_bench.base.registry import PluginPoint, Registry, scan, sorted_by_name

#: the name of the declaration in an encoder module
DECLARATION = "ENCODER_KIND"
#: the entry-point group through which other distributions add encoder kinds
ENTRY_POINT_GROUP = "elmo_bench.encoders"


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


def _declares(source: Path) -> bool:
    """Whether a module's source assigns the declaration at its top level: only those modules are imported."""
    return re.search(rf"^{DECLARATION} = ", source.read_text(encoding="utf-8"), re.MULTILINE) is not None


def plugin_point() -> PluginPoint[EncoderKind]:
    """Where encoder kinds live: each module (or folder) of this package declares its own, in itself."""
    return PluginPoint("encoder kind", encoders_package, DECLARATION, EncoderKind, ENTRY_POINT_GROUP, module=None,
                       declares=_declares)


@functools.cache
def encoder_kinds() -> Registry[EncoderKind]:
    """Kind name → its declaration, sorted by name (``problems``: the kinds skipped, each with its line)."""
    return sorted_by_name(scan(plugin_point(), entry_points(group=ENTRY_POINT_GROUP)))


def kind_problem(name: str) -> str | None:
    """Why kind ``name`` is not registered (it was skipped as broken), in one line; None otherwise."""
    return encoder_kinds().problems.get(name)


def encoder_plugin_of(spec: Mapping[str, Any] | None) -> str:
    """``<kind>@<version>`` of an encoder group (the biLM when it names no kind): the ``encoder.plugin`` key of the
    identity of every run that uses its layers."""
    kind = str((spec or {}).get("kind") or "bilm")
    found = encoder_kinds().get(kind)
    return f"{kind}@{found.version if found is not None else 1}"
