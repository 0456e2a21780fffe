"""Issue 35 item 3: the task registry is found, not written: a scan of the tasks package plus the
``elmo_bench.tasks`` entry-point group, importing only the torch-free declaring modules."""
from __future__ import annotations

import subprocess
import sys
from importlib.metadata import EntryPoint

import pytest

from elmo_bench.base.errors import ConfigError
from elmo_bench.tasks import registry
from tests.conftest import REPO


def test_the_scan_finds_the_thirteen_tasks_without_torch():
    code = ("import sys; from elmo_bench.tasks.registry import registered; "
            "print(sorted(registered()), 'torch' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    edge = [f"edge_{name}" for name in ("chunk", "coref", "dep", "ner", "pos", "srl")]   # issue 38's edge probes
    assert done.stdout.split("]")[0] + "]" == str(["coref", *edge, "ner", "pos", "snli", "squad", "srl", "sst"])
    assert done.stdout.strip().endswith("False"), done.stderr


def test_a_third_party_task_arrives_through_its_entry_point(monkeypatch):
    point = EntryPoint("tiny", "tests.tiny_task.config:TASK", registry.ENTRY_POINT_GROUP)
    monkeypatch.setattr(registry, "entry_points", lambda group: [point] if group == registry.ENTRY_POINT_GROUP else [])
    registry.registered.cache_clear()
    try:
        tiny = registry.declaration("tiny")
        assert tiny.package == "tests.tiny_task" and tiny.resolved_target() == "tests.tiny_task.task:TinyTask"
        assert registry.package_dir(tiny) == REPO / "tests" / "tiny_task"
    finally:
        registry.registered.cache_clear()


def test_an_unknown_task_is_one_line_naming_the_known_ones():
    with pytest.raises(ConfigError, match=r"'nosuch' is not a registered task; expected one of \['coref', 'edge_chunk'"):
        registry.declaration("nosuch")

