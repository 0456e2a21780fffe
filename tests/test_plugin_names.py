"""No plug-in's name outside its folder (issue 55): a probe's name and record task outside
``elmo_bench/probe/<name>/``, an encoder kind's name outside its kind's module or folder, a task's name outside
``tasks/<name>/`` (docs, tests, bench, scripts and conf/experiment exempt). The scan is tests/plugin_names.py;
``python tests/plugin_names.py probe`` lists what is left."""
from __future__ import annotations

import plugin_names
import pytest

CASES = {"probe": plugin_names.probe_places, "encoder": plugin_names.encoder_places,
         "task": plugin_names.task_places}


@pytest.mark.parametrize("kind", [
    pytest.param("probe", marks=pytest.mark.xfail(reason="issue 55: probes still named outside their folders")),
    "encoder",
    pytest.param("task", marks=pytest.mark.xfail(reason="issue 55: the root's default task (conf/config.yaml)")),
])
def test_no_plugin_name_outside_its_folder(kind: str) -> None:
    found = CASES[kind]()
    assert not found, f"{len(found)} place(s) name a {kind} outside its folder:\n" + "\n".join(map(str, found))
