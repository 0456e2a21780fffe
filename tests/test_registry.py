"""Issue 55 item 7: one ``Registry[T]`` for the three plug-in points (tasks, probes, encoder kinds): a package scan
plus an entry-point group, and one behaviour for a broken plug-in: skipped with one warning line naming it and its
error, every other plug-in working, and that line when it is asked for by name."""
from __future__ import annotations

import importlib
import re
import sys
import types
from dataclasses import dataclass
from importlib.metadata import EntryPoint

import pytest

import elmo_bench.encoders as encoders_package
from elmo_bench.base.errors import ConfigError
from elmo_bench.base.registry import PluginPoint, Registry, scan
from elmo_bench.encoders import kinds
from elmo_bench.encoders.settings import check_encoder_settings


@dataclass(frozen=True)
class Thing:
    name: str
    package: str = ""


def _package(tmp_path, files: dict[str, str]) -> types.ModuleType:
    """A package ``user55_things`` on a fresh folder with ``files`` (relative path → text)."""
    root = tmp_path / "user55_things"
    for relative, text in {"__init__.py": "", **files}.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
    sys.path.insert(0, str(tmp_path))
    return importlib.import_module("user55_things")   # planted above: no distribution provides it


@pytest.fixture
def things(tmp_path):
    declare = f"from {__name__} import Thing\nTHING = Thing({{name!r}})\n"
    package = _package(tmp_path, {"good/__init__.py": "", "good/config.py": declare.format(name="good"),
                                  "broken/__init__.py": "", "broken/config.py": "import user55_nosuch\n",
                                  "wrong/__init__.py": "", "wrong/config.py": "THING = 42\n",
                                  "lib/__init__.py": ""})
    yield PluginPoint("thing", package, "THING", Thing, "user55.things")
    sys.path.remove(str(tmp_path))
    for name in [m for m in sys.modules if m.startswith("user55_things")]:
        del sys.modules[name]


def test_a_broken_plugin_is_one_warning_line_and_the_others_work(things, capsys):
    found = scan(things)
    assert isinstance(found, Registry) and list(found) == ["good"] and found["good"].package == "user55_things.good"
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all(line.startswith("warning: ") and line.endswith("; skipped") for line in err)
    assert re.search(r"broken/config\.py: the thing plug-in user55_things\.broken does not import "
                     r"\(ModuleNotFoundError: No module named 'user55_nosuch'\)", err[0])
    assert re.search(r"wrong/config\.py: THING is a int; expected a Thing$", found.problems["wrong"])
    with pytest.raises(ConfigError, match=r"the thing plug-in user55_things\.broken does not import"):
        found.declared("broken", "unknown")
    with pytest.raises(ConfigError, match="^no such thing$"):
        found.declared("nosuch", "no such thing")
    assert "lib" not in found.problems                        # a folder without config.py: no plug-in, no problem


def test_strict_folders_and_entry_points_share_the_behaviour(things, capsys):
    from dataclasses import replace

    strict = replace(things, strict=True)
    points = [EntryPoint("far", f"{__name__}:FAR", "user55.things"),
              EntryPoint("gone", "user55_no_module:THING", "user55.things"),
              EntryPoint("twin", f"{__name__}:TWIN", "user55.things")]
    found = scan(strict, points)
    assert sorted(found) == ["far"] and found["far"].package == __name__.rpartition(".")[0]   # the module's package
    assert re.search(r"lib: a thing folder without config\.py \(expected config\.py with THING = Thing\(\.\.\.\), ",
                     found.problems["lib"])
    assert found.problems["gone"] == ("entry point gone = user55_no_module:THING (user55.things) does not load "
                                      "(ModuleNotFoundError: No module named 'user55_no_module')")
    assert re.match(r"thing name 'good' is declared by two packages: user55_things\.good \(.*\) and "
                    rf"{re.escape(__name__)} \(.*\); rename one", found.problems["good"])   # neither is registered
    assert len(capsys.readouterr().err.splitlines()) == len(found.problems) == 5


FAR = Thing("far")
TWIN = Thing("good")

BROKEN_KIND = "from elmo_bench.encoders.kinds import EncoderKind\nimport user55_nosuch\nENCODER_KIND = EncoderKind('user55_kind', None)\n"


def test_a_broken_encoder_kind_is_skipped_with_its_line_and_the_shipped_kinds_work(tmp_path, monkeypatch, capsys):
    (tmp_path / "user55_kind.py").write_text(BROKEN_KIND)
    monkeypatch.setattr(encoders_package, "__path__", [*encoders_package.__path__, str(tmp_path)])
    kinds.encoder_kinds.cache_clear()
    try:
        found = kinds.encoder_kinds()
        assert list(found) == ["bilm", "hdf5", "manylangs", "python", "transformers"]
        line = found.problems["user55_kind"]
        assert re.search(r"user55_kind\.py: the encoder kind plug-in elmo_bench\.encoders\.user55_kind does not "
                         r"import \(ModuleNotFoundError: No module named 'user55_nosuch'\)$", line)
        assert f"warning: {line}; skipped" in capsys.readouterr().err
        with pytest.raises(ConfigError, match=re.escape(line)):
            check_encoder_settings({"kind": "user55_kind"})
    finally:
        sys.modules.pop("elmo_bench.encoders.user55_kind", None)
        kinds.encoder_kinds.cache_clear()


def test_an_encoder_kind_arrives_through_its_entry_point(monkeypatch):
    planted = types.ModuleType("user55_far_kind")
    planted.ENCODER_KIND = kinds.EncoderKind("user55_far", None)
    monkeypatch.setitem(sys.modules, "user55_far_kind", planted)
    point = EntryPoint("user55_far", "user55_far_kind:ENCODER_KIND", kinds.ENTRY_POINT_GROUP)
    monkeypatch.setattr(kinds, "entry_points", lambda group: [point] if group == kinds.ENTRY_POINT_GROUP else [])
    kinds.encoder_kinds.cache_clear()
    try:
        assert kinds.encoder_kinds()["user55_far"] is planted.ENCODER_KIND
    finally:
        kinds.encoder_kinds.cache_clear()
