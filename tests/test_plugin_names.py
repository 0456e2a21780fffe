"""No plug-in's name outside its folder (issue 55): a probe's name and record task outside
``elmo_bench/probe/<name>/``, an encoder kind's name outside its kind's module or folder, a task's name outside
``tasks/<name>/`` (docs, tests, bench, scripts and conf/experiment exempt). The scan is tests/plugin_names.py;
``python tests/plugin_names.py probe`` lists what is left."""
from __future__ import annotations

import plugin_names
import pytest

CASES = {"probe": plugin_names.probe_places, "encoder": plugin_names.encoder_places,
         "task": plugin_names.task_places}


@pytest.mark.parametrize("kind", ["probe", "encoder", "task"])
def test_no_plugin_name_outside_its_folder(kind: str) -> None:
    found = CASES[kind]()
    assert not found, f"{len(found)} place(s) name a {kind} outside its folder:\n" + "\n".join(map(str, found))


def test_the_scan_finds_a_name_outside_its_folder() -> None:
    """The scan can fail: with each probe's folder taken away from it, its own files are places naming it (its
    config.py writes its name), as are the imports of its modules."""
    from elmo_bench.probe.registry import registered_probes

    declared = registered_probes()
    names = {name: {name} for name in declared}
    found = plugin_names.places(names, {name: [] for name in declared}, {name: [d.package] for name, d in
                                                                          declared.items()})
    assert {"structural", "wsd", "pos"} <= {place.name for place in found}
    assert any(place.how.endswith("import") and place.path.startswith("elmo_bench/probe/pos/") for place in found)
