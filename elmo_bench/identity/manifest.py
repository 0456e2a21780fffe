"""The committed versions of the shipped plug-ins (``plugins.txt`` beside this module): one line per plug-in
version and code hash, ``<kind> <name> <version> <code hash>``. A plug-in's runs are identified by
``<name>@<version>``, never by its code hash; tests/test_plugin_manifest.py holds every shipped plug-in's code
to a line of its version, so a change of code is a choice made in the commit: bump the version (numbers may move:
finished runs are redone) or add the new hash under the same version (numbers unchanged: say how that was checked).
A run directory that recorded a code hash (before versions) is a run of the version that lists that hash, or a
hash it is followed by (elmo_bench.identity.history)."""
from __future__ import annotations

import functools

from elmo_bench.base.errors import ConfigError
from elmo_bench.base.paths import PACKAGE

MANIFEST = PACKAGE / "identity" / "plugins.txt"
#: the plug-in kinds a line may name
KINDS = ("task", "probe", "encoder")


def parse(text: str, source: str = str(MANIFEST)) -> dict[str, dict[str, dict[str, int]]]:
    """kind → name → {code hash: version}; one ConfigError line naming the line that is not four fields."""
    found: dict[str, dict[str, dict[str, int]]] = {kind: {} for kind in KINDS}
    for number, line in enumerate(text.splitlines(), 1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        if len(fields) != 4 or fields[0] not in KINDS or not fields[2].isdecimal():
            raise ConfigError(f"{source}:{number}: expected '<task|probe|encoder> <name> <version> <code hash>', "
                              f"found {line.strip()!r}")
        found[fields[0]].setdefault(fields[1], {})[fields[3]] = int(fields[2])
    return found


@functools.cache
def committed() -> dict[str, dict[str, dict[str, int]]]:
    """The committed manifest (:data:`MANIFEST`)."""
    return parse(MANIFEST.read_text(encoding="utf-8"))


def line(kind: str, name: str, version: int, code: str) -> str:
    """The manifest line of one plug-in version and code hash."""
    return f"{kind} {name} {version} {code}"


def problem(kind: str, name: str, version: int, code: str,
            manifest: dict[str, dict[str, dict[str, int]]] | None = None) -> str | None:
    """Why a shipped plug-in's code does not match the manifest (one line saying what to choose), or None."""
    listed = ((manifest or committed()).get(kind) or {}).get(name) or {}
    if listed.get(code) == version:
        return None
    return (f"{kind} {name}: its code (hash {code}) is not recorded under its version {version} in {MANIFEST.name}: "
            f"either bump its version (numbers may move: its finished runs are redone) or add the line "
            f"'{line(kind, name, version, code)}' (numbers unchanged: say in the commit how that was checked)")
