"""The probe registry, found rather than written (the third plug-in point, beside tasks and encoders): every folder
under elmo_bench/probes whose ``config`` module holds ``PROBE = ProbeDeclaration(...)``, and every declaration a
third-party distribution offers in the ``elmo_bench.probes`` entry-point group (``name = "pkg.config:PROBE"``).

Adding a probe is a new folder (``__init__.py``, ``config.py`` with ``PROBE`` and its settings dataclass, and the
module its ``target`` names); Hydra's ``probe/<name>`` option is generated from the settings
(elmo_bench.engine.config_schema). The scan imports only the torch-free ``config`` modules. A broken plug-in (an
import error, a syntax error, a ``PROBE`` that is no declaration) is skipped with a warning naming it, so every
other probe keeps working; two folders declaring one name is one line naming both.
"""
from __future__ import annotations

import functools
import importlib
import logging
import pkgutil
import re
from dataclasses import replace
from importlib.metadata import entry_points

import elmo_bench.probes as probes_package
from elmo_bench.base.errors import ConfigError
from elmo_bench.probe.declaration import ProbeDeclaration

log = logging.getLogger(__name__)
#: Hydra's line for a ``probe=NAME`` it has no option for
MISSING_PROBE = re.compile(r"(?:find|load) 'probe/([^'/]+)'")
#: why a folder's probe is not registered (folder name → the line), filled by the scan
PROBLEMS: dict[str, str] = {}
#: the entry-point group through which other distributions add probes
ENTRY_POINT_GROUP = "elmo_bench.probes"
#: the module of a probe folder that declares it, and the name of the declaration there
DECLARING_MODULE, DECLARATION = "config", "PROBE"


def _skipped(package: str, reason: str) -> None:
    """A broken plug-in: one warning, and its line kept for ``probe=<folder name>`` (:func:`probe_problem`)."""
    line = f"probe plug-in {package} is skipped: {reason}"
    PROBLEMS[package.rpartition(".")[2]] = line
    log.warning("%s", line)


def _declared(package: str) -> ProbeDeclaration | None:
    """The declaration in ``package.config``; None when the folder declares none or is broken (a warning)."""
    try:
        module = importlib.import_module(f"{package}.{DECLARING_MODULE}")  # checked: a package this scan found
    except ModuleNotFoundError as missing:
        if missing.name != f"{package}.{DECLARING_MODULE}":
            _skipped(package, f"its {DECLARING_MODULE}.py imports {missing.name!r}, which is not installed")
        return None
    except Exception as exc:  # a broken plug-in must not take the others down (SyntaxError, NameError, ...)
        _skipped(package, f"its {DECLARING_MODULE}.py fails to import ({type(exc).__name__}: "
                          f"{str(exc).splitlines()[0] if str(exc) else ''})")
        return None
    found = getattr(module, DECLARATION, None)
    if found is not None and not isinstance(found, ProbeDeclaration):
        _skipped(package, f"{DECLARATION} in {module.__file__} is a {type(found).__name__}; expected a "
                          f"ProbeDeclaration")
        return None
    return None if found is None else replace(found, package=package)


def probe_problem(message: str) -> str | None:
    """The registry's line for the probe a Hydra message could not find (``Could not find 'probe/NAME'``) when a
    broken plug-in folder of that name was skipped; None otherwise (Hydra's line, with the available probes)."""
    match = MISSING_PROBE.search(message)
    if match is None:
        return None
    registered_probes()
    return PROBLEMS.get(match.group(1))


def _from_entry_point(point) -> ProbeDeclaration | None:
    try:
        found = point.load()
    except Exception as exc:
        log.warning("probe entry point %s = %s (%s) skipped: %s: %s", point.name, point.value, ENTRY_POINT_GROUP,
                    type(exc).__name__, exc)
        return None
    if not isinstance(found, ProbeDeclaration):
        log.warning("probe entry point %s = %s (%s) skipped: expected a ProbeDeclaration, found %s", point.name,
                    point.value, ENTRY_POINT_GROUP, type(found).__name__)
        return None
    return replace(found, package=found.package or point.value.partition(":")[0].rpartition(".")[0])


def _add(found: dict[str, ProbeDeclaration], declaration: ProbeDeclaration) -> None:
    """Register ``declaration``; ConfigError naming both packages when its name is taken."""
    before = found.get(declaration.name)
    if before is not None and before.package != declaration.package:
        raise ConfigError(f"probe {declaration.name!r} is declared twice: by {before.package} and by "
                          f"{declaration.package}; rename one (its PROBE's name)")
    found[declaration.name] = declaration


@functools.cache
def registered_probes() -> dict[str, ProbeDeclaration]:
    """Probe name → its declaration: the folders under elmo_bench/probes (sorted), then the entry points. Cached:
    the one registry of the process (tests add a probe to this very dict)."""
    found: dict[str, ProbeDeclaration] = {}
    for info in sorted(pkgutil.iter_modules(probes_package.__path__), key=lambda m: m.name):
        declaration = _declared(f"{probes_package.__name__}.{info.name}") if info.ispkg else None
        if declaration is not None:
            _add(found, declaration)
    for point in entry_points(group=ENTRY_POINT_GROUP):
        declaration = _from_entry_point(point)
        if declaration is not None:
            _add(found, declaration)
    return found


def probe_declaration(name: str) -> ProbeDeclaration:
    """Probe ``name``'s declaration; one ConfigError naming the known probes otherwise."""
    probes = registered_probes()
    if name not in probes:
        raise ConfigError(f"config: probe {name!r} is not a registered probe; expected one of {sorted(probes)}")
    return probes[name]


def probe_runner(declared: ProbeDeclaration):
    """The run function a declaration names (imports the probe's code: torch)."""
    return declared_function(declared, declared.target)


def declared_function(declared: ProbeDeclaration, target: str):
    """The function a declaration names by ``target`` (its run function, its ``sentences`` or ``cost``)."""
    module, _, function = declared.resolved(target).partition(":")
    return getattr(importlib.import_module(module), function)  # checked: a declared target
