"""One registry for the three plug-in points (tasks, probes, encoder kinds; issue 55 item 7): a plug-in is found,
never listed, by a scan of its package plus an entry-point group, and a broken one is handled the same way
everywhere: skipped with one warning line naming it and its error, every other plug-in still working, and that
line is the answer when it is asked for by name.

A :class:`PluginPoint` says where a kind of plug-in lives (the package scanned, the module of each plug-in that
declares it, the name and type of the declaration, the entry-point group); :func:`scan` turns it into a
:class:`Registry`: name → declaration, plus ``problems`` (the name a user would ask for → the line saying why it
is not there). Only the declaring modules are imported, so a registry of torch-free declarations loads no model.
"""
from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Generic, Iterable, TypeVar

from elmo_bench.base.errors import ConfigError

T = TypeVar("T")


class Registry(dict[str, T], Generic[T]):
    """Plug-in name → its declaration, and ``problems``: what the scan could not register (a plug-in that fails to
    import or declares no declaration of the point's type, a name two packages declare), by the name a user would
    ask for (the folder's or module's, the entry point's, the clashing name) → one line saying why."""

    def __init__(self, point: "PluginPoint[T] | None" = None) -> None:
        super().__init__()
        self.point = point
        self.problems: dict[str, str] = {}
        #: name → the package (or module) that declared it, for a clash's line
        self.packages: dict[str, str] = {}

    def declared(self, name: str, unknown: str) -> T:
        """``name``'s declaration; its problem's line when it was skipped, else ``unknown`` (the caller's line naming
        the known plug-ins) when there is none."""
        if name in self.problems:
            raise ConfigError(self.problems[name])
        if name not in self:
            raise ConfigError(unknown)
        return self[name]


@dataclass(frozen=True)
class PluginPoint(Generic[T]):
    """Where one kind of plug-in lives and how it declares itself."""

    noun: str                          #: what a plug-in is called in a line ("task", "probe", "encoder kind")
    package: ModuleType                #: the package scanned (its ``__path__`` as it is when scanned)
    declaration: str                   #: the module-level name of the declaration ("TASK")
    type: type                         #: the declaration's type (TaskDeclaration)
    group: str                         #: the entry-point group of other distributions ("elmo_bench.tasks")
    #: the module of each plug-in package that declares it ("config"); None: each module (or package) of the
    #: scanned package declares its own plug-in in itself (the encoder kinds)
    module: str | None = "config"
    #: a package of the scanned one without the declaring module is a problem (tasks/ holds task folders only);
    #: False: it is no plug-in and is passed over (a shared library folder beside the plug-ins)
    strict: bool = False
    #: a cheap test of a candidate module's source before it is imported (None: import every candidate)
    declares: Callable[[Path], bool] | None = None
    #: the declaration with the package that declared it recorded (None: kept as found)
    attach: Callable[[Any, str], Any] | None = None
    #: the module-level name of a tuple of more declarations served by the same plug-in's code (a probe's named
    #: settings, ``VARIANTS``); None: one declaration per plug-in
    variants: str | None = None

    def hint(self) -> str:
        """How a declaration is written, for a line about a folder without one."""
        return f"{self.module}.py with {self.declaration} = {self.type.__name__}(...), {self.type.__module__}"


def first_line(exc: BaseException) -> str:
    """An exception's message on one line (a SyntaxError's names the file and line)."""
    if isinstance(exc, SyntaxError):
        return f"{exc.msg} at {exc.filename}:{exc.lineno}"
    return next((line.strip() for line in str(exc).splitlines() if line.strip()), "")


def _with_package(point: PluginPoint[T], found: T, package: str) -> T:
    if point.attach is not None:
        return point.attach(found, package)
    return replace(found, package=package) if hasattr(found, "package") else found  # type: ignore[type-var]


def _candidate(point: PluginPoint[T], info: pkgutil.ModuleInfo) -> tuple[str, Path] | None:
    """The module to import for one entry of the scanned package and its file (None: no plug-in there);
    ConfigError for a package that must declare one and does not."""
    where = Path(info.module_finder.path) / info.name  # type: ignore[attr-defined]
    if point.module is None:
        source = where / "__init__.py" if info.ispkg else where.with_suffix(".py")
        if not source.is_file() or (point.declares is not None and not point.declares(source)):
            return None
        return f"{point.package.__name__}.{info.name}", source
    if not info.ispkg:
        return None
    source = where / f"{point.module}.py"
    if not source.is_file() and not (where / point.module).is_dir():
        if point.strict:
            raise ConfigError(f"{where}: a {point.noun} folder without {point.module}.py (expected {point.hint()})")
        return None
    return f"{point.package.__name__}.{info.name}.{point.module}", source


def _declared(point: PluginPoint[T], module_name: str, source: Path) -> list[T]:
    """The declarations in ``module_name``: its declaration, then its ``variants`` (none when it declares none);
    ConfigError (one line) for a module that does not import or whose declarations have another type: user code may
    fail in any way."""
    try:
        module = importlib.import_module(module_name)  # checked: a module this scan found
    except Exception as broken:  # noqa: BLE001 - a user's plug-in: any failure is reported, never a traceback
        package = module_name if point.module is None else module_name.rpartition(".")[0]
        raise ConfigError(f"{source}: the {point.noun} plug-in {package} does not import "
                          f"({type(broken).__name__}: {first_line(broken)})") from broken
    found = getattr(module, point.declaration, None)
    variants = tuple(getattr(module, point.variants, ()) or ()) if point.variants else ()
    for name, value in ((point.declaration, found), *((point.variants, v) for v in variants)):
        if value is not None and not isinstance(value, point.type):
            raise ConfigError(f"{module.__file__}: {name} is a {type(value).__name__}; expected a "
                              f"{point.type.__name__}")
    package = module_name if point.module is None else module_name.rpartition(".")[0]
    return [_with_package(point, d, package) for d in (found, *variants) if d is not None]


def _origin(package: str) -> str:
    """Where a declaration comes from, for a clash's line: its package and folder."""
    spec = importlib.util.find_spec(package)
    where = next(iter(spec.submodule_search_locations or []), None) if spec is not None else None
    if where is None and spec is not None and spec.origin:
        where = spec.origin
    return f"{package} ({where})" if where else package


def _package_of(found: Any, fallback: str) -> str:
    return str(getattr(found, "package", None) or fallback)


def _add(registry: Registry[T], found: T, package: str) -> None:
    """Register ``found``, unless another package declares its name: then neither is registered (which one a user
    meant is not ours to guess; a user folder silently taking a shipped plug-in's place was the failure), and the
    name's problem names both."""
    point = registry.point
    name = str(getattr(found, "name"))
    first = registry.packages.get(name)
    if name in registry.problems and name not in registry:
        return
    if first is None:
        registry[name], registry.packages[name] = found, package
    elif first != package:
        del registry[name]
        where = f"{point.module}.py's" if point.module else "module's"
        registry.problems[name] = (f"{point.noun} name {name!r} is declared by two packages: {_origin(first)} and "
                                   f"{_origin(package)}; rename one (name= in its {where} {point.declaration})")


def _scan_package(registry: Registry[T]) -> None:
    """The entries of the scanned package, sorted: each broken one is a problem under its own name."""
    point = registry.point
    for info in sorted(pkgutil.iter_modules(point.package.__path__), key=lambda m: m.name):
        try:
            candidate = _candidate(point, info)
            declared = _declared(point, *candidate) if candidate is not None else []
        except ConfigError as broken:
            registry.problems[info.name] = str(broken)
            continue
        for found in declared:
            _add(registry, found, _package_of(found, f"{point.package.__name__}.{info.name}"))


def _from_entry_point(point: PluginPoint[T], entry: Any) -> T:
    """The declaration an entry point names; ConfigError (one line) for one that does not load or is none."""
    try:
        found = entry.load()
    except Exception as broken:  # noqa: BLE001 - a third party's plug-in: any failure is reported, never a traceback
        raise ConfigError(f"entry point {entry.name} = {entry.value} ({point.group}) does not load "
                          f"({type(broken).__name__}: {first_line(broken)})") from broken
    if not isinstance(found, point.type):
        raise ConfigError(f"entry point {entry.name} = {entry.value} ({point.group}): expected a "
                          f"{point.type.__name__}, found {type(found).__name__}")
    module = entry.value.partition(":")[0]
    return _with_package(point, found, _package_of(found, module.rpartition(".")[0] if point.module else module))


def scan(point: PluginPoint[T], entry_points: Iterable[Any] = ()) -> Registry[T]:
    """The registry of ``point``: the scanned package's plug-ins (sorted), then ``entry_points`` (those of
    ``point.group``, passed by the caller so a test can stand in its own). Each broken plug-in is one line on
    stderr (``warning: <line>; skipped``) and kept in ``problems``; every other plug-in is registered."""
    registry: Registry[T] = Registry(point)
    _scan_package(registry)
    for entry in entry_points:
        try:
            found = _from_entry_point(point, entry)
        except ConfigError as broken:
            registry.problems[entry.name] = str(broken)
            continue
        _add(registry, found, _package_of(found, entry.value.partition(":")[0]))
    for problem in registry.problems.values():
        print(f"warning: {problem}; skipped", file=sys.stderr)
    return registry


def sorted_by_name(registry: Registry[T]) -> Registry[T]:
    """The same registry with its plug-ins in name order (problems kept)."""
    ordered: Registry[T] = Registry(registry.point)
    ordered.update(sorted(registry.items()))
    ordered.problems.update(registry.problems)
    ordered.packages.update(registry.packages)
    return ordered
