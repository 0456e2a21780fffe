"""The probe registry, found rather than written (the third plug-in point, beside tasks and encoders): every folder
under elmo_bench/probe whose ``config`` module holds ``PROBE = ProbeDeclaration(...)`` (and, for a probe whose code
also runs under other names with other defaults, ``VARIANTS``: more declarations of the same folder, e.g. a named
setting such as the control-task POS probe), and every declaration a third-party distribution offers in the
``elmo_bench.probes`` entry-point group (``name = "pkg.config:PROBE"``). The framework's own subpackage of shared
methods (``lib``, :data:`FRAMEWORK_PACKAGES`) declares nothing and is not scanned.

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

import elmo_bench.probe as probes_package
from elmo_bench.base.errors import ConfigError
from elmo_bench.probe.declaration import ProbeDeclaration

log = logging.getLogger(__name__)
#: Hydra's line for a ``probe=NAME`` it has no option for
MISSING_PROBE = re.compile(r"(?:find|load) 'probe/([^'/]+)'")
#: why a folder's probe is not registered (folder name → the line), filled by the scan
PROBLEMS: dict[str, str] = {}
#: the entry-point group through which other distributions add probes
ENTRY_POINT_GROUP = "elmo_bench.probes"
#: the module of a probe folder that declares it, the name of the declaration there, and of its variants (a tuple
#: of more declarations served by the same folder's code)
DECLARING_MODULE, DECLARATION, VARIANTS = "config", "PROBE", "VARIANTS"
#: subpackages of elmo_bench/probe that are the framework's, not probes (the shared methods): never scanned
FRAMEWORK_PACKAGES = ("lib",)


def _skipped(package: str, reason: str) -> None:
    """A broken plug-in: one warning, and its line kept for ``probe=<folder name>`` (:func:`probe_problem`)."""
    line = f"probe plug-in {package} is skipped: {reason}"
    PROBLEMS[package.rpartition(".")[2]] = line
    log.warning("%s", line)


def _declared(package: str) -> list[ProbeDeclaration]:
    """The declarations in ``package.config`` (``PROBE``, then ``VARIANTS``); none when the folder declares none or
    is broken (a warning)."""
    try:
        module = importlib.import_module(f"{package}.{DECLARING_MODULE}")  # checked: a package this scan found
    except ModuleNotFoundError as missing:
        if missing.name != f"{package}.{DECLARING_MODULE}":
            _skipped(package, f"its {DECLARING_MODULE}.py imports {missing.name!r}, which is not installed")
        return []
    except Exception as exc:  # a broken plug-in must not take the others down (SyntaxError, NameError, ...)
        _skipped(package, f"its {DECLARING_MODULE}.py fails to import ({type(exc).__name__}: "
                          f"{str(exc).splitlines()[0] if str(exc) else ''})")
        return []
    found = getattr(module, DECLARATION, None)
    variants = tuple(getattr(module, VARIANTS, ()))
    for name, value in ((DECLARATION, found), *((VARIANTS, v) for v in variants)):
        if value is not None and not isinstance(value, ProbeDeclaration):
            _skipped(package, f"{name} in {module.__file__} holds a {type(value).__name__}; expected a "
                              f"ProbeDeclaration")
            return []
    return [replace(d, package=package) for d in (found, *variants) if d is not None]


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
    """Probe name → its declaration: the folders under elmo_bench/probe (sorted; the framework's ``lib`` left out),
    then the entry points. Cached: the one registry of the process (tests add a probe to this very dict)."""
    found: dict[str, ProbeDeclaration] = {}
    for info in sorted(pkgutil.iter_modules(probes_package.__path__), key=lambda m: m.name):
        if info.ispkg and info.name not in FRAMEWORK_PACKAGES:
            for declaration in _declared(f"{probes_package.__name__}.{info.name}"):
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
