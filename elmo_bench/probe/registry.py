"""The probe registry, found rather than written (the third plug-in point, beside tasks and encoders): every folder
under elmo_bench/probe whose ``config`` module holds ``PROBE = ProbeDeclaration(...)`` (and, for a probe whose code
also runs under other names with other defaults, ``VARIANTS``: more declarations of the same folder, e.g. a named
setting such as the control-task POS probe), and every declaration a third-party distribution offers in the
``elmo_bench.probes`` entry-point group (``name = "pkg.config:PROBE"``). The framework's own subpackage of shared
methods (``lib``) holds no ``config.py``: the scan passes over it.

Adding a probe is a new folder (``__init__.py``, ``config.py`` with ``PROBE`` and its settings dataclass, and the
module its ``target`` names); Hydra's ``probe/<name>`` option is generated from the settings
(elmo_bench.engine.config_schema). The scan is the one every plug-in point shares (elmo_bench.base.registry): it
imports only the torch-free ``config`` modules; a broken plug-in (an import error, a syntax error, a ``PROBE`` that
is no declaration) is skipped with one warning line naming it, so every other probe keeps working; two folders
declaring one name is one line naming both.
"""
from __future__ import annotations

import functools
import importlib
import re
from importlib.metadata import entry_points

import elmo_bench.probe as probes_package
from elmo_bench.base.registry import PluginPoint, Registry, scan
from elmo_bench.probe.declaration import ProbeDeclaration

#: Hydra's line for a ``probe=NAME`` it has no option for
MISSING_PROBE = re.compile(r"(?:find|load) 'probe/([^'/]+)'")
#: the entry-point group through which other distributions add probes
ENTRY_POINT_GROUP = "elmo_bench.probes"
#: the module of a probe folder that declares it, the name of the declaration there, and of its variants (a tuple
#: of more declarations served by the same folder's code)
DECLARING_MODULE, DECLARATION, VARIANTS = "config", "PROBE", "VARIANTS"


def plugin_point() -> PluginPoint[ProbeDeclaration]:
    """Where probes live: the folders of elmo_bench/probe that hold a config.py (any other folder, such as the
    framework's ``lib``, is passed over: shared code beside the probes); a folder's ``VARIANTS`` are more probes run
    by its code."""
    return PluginPoint("probe", probes_package, DECLARATION, ProbeDeclaration, ENTRY_POINT_GROUP,
                       module=DECLARING_MODULE, variants=VARIANTS)


def probe_problem(message: str) -> str | None:
    """The registry's line for the probe a Hydra message could not find (``Could not find 'probe/NAME'``) when a
    broken plug-in folder of that name was skipped; None otherwise (Hydra's line, with the available probes)."""
    match = MISSING_PROBE.search(message)
    return registered_probes().problems.get(match.group(1)) if match else None


@functools.cache
def registered_probes() -> Registry[ProbeDeclaration]:
    """Probe name → its declaration: the folders under elmo_bench/probe (sorted; each folder's PROBE, then its
    VARIANTS), then the entry points. Cached: the one registry of the process (tests add a probe to this very
    dict)."""
    return scan(plugin_point(), entry_points(group=ENTRY_POINT_GROUP))


def probe_declaration(name: str) -> ProbeDeclaration:
    """Probe ``name``'s declaration; one ConfigError naming the known probes otherwise."""
    probes = registered_probes()
    return probes.declared(name, f"config: probe {name!r} is not a registered probe; expected one of "
                                 f"{sorted(probes)}")


def probe_runner(declared: ProbeDeclaration):
    """The run function a declaration names (imports the probe's code: torch)."""
    return declared_function(declared, declared.target)


def declared_function(declared: ProbeDeclaration, target: str):
    """The function a declaration names by ``target`` (its run function, its ``sentences`` or ``cost``)."""
    module, _, function = declared.resolved(target).partition(":")
    return getattr(importlib.import_module(module), function)  # checked: a declared target
