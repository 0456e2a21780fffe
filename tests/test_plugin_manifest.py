"""Issue 54's versioned plug-ins: every shipped task, probe and encoder kind has its code recorded under its version
in elmo_bench/identity/plugins.txt, and a change of code is a choice made in the commit (bump the version, or
record the new hash under the same one). A finished run keeps its identity under the same version and loses it
after a bump."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from elmo_bench.base.errors import ConfigError
from elmo_bench.encoders.kinds import encoder_kinds
from elmo_bench.engine.code_identity import code_hash, task_code_hash
from elmo_bench.engine.plugin_code import encoder_code_hash, probe_code_hash
from elmo_bench.identity import manifest
from elmo_bench.identity.rules import differences, with_versions
from elmo_bench.probe.registry import registered_probes
from elmo_bench.tasks.registry import registered

REPO = Path(__file__).resolve().parents[1]


def shipped() -> list[tuple[str, str, int, str]]:
    """(kind, name, version, code hash) of every shipped plug-in."""
    out = []
    for name, declared in sorted(registered().items()):
        if declared.resolved_target().startswith("elmo_bench.tasks."):
            package = declared.resolved_target().partition(":")[0].rpartition(".")[0]
            out.append(("task", name, declared.version, task_code_hash(package)))
    for name, declared in sorted(registered_probes().items()):
        if declared.package.startswith("elmo_bench.probe."):
            out.append(("probe", name, declared.version, probe_code_hash(declared.package, declared.resolved_target())))
    for name, kind in encoder_kinds().items():
        out.append(("encoder", name, kind.version, encoder_code_hash(f"elmo_bench.encoders.{name}")))
    return out


def test_every_shipped_plugins_code_is_recorded_under_its_version():
    found = shipped()
    assert {kind for kind, *_ in found} == {"task", "probe", "encoder"} and len(found) >= 20
    problems = [p for p in (manifest.problem(*plugin) for plugin in found) if p]
    assert not problems, "\n".join(problems)


def test_a_changed_copied_task_fails_until_its_hash_is_recorded_and_keeps_its_runs_under_the_same_version(tmp_path):
    copy = tmp_path / "tiny"
    shutil.copytree(REPO / "tests" / "tiny_task", copy)
    before = code_hash(copy)
    listed = manifest.parse(manifest.line("task", "tiny", 1, before))
    assert manifest.problem("task", "tiny", 1, before, listed) is None
    task = copy / "task.py"
    task.write_text(task.read_text() + "\n# a comment changes no behaviour\n")
    assert code_hash(copy) == before                                     # comments and formatting: the same code
    task.write_text(task.read_text() + "\nSCALE = 2\n")                   # a line of code: another hash
    after = code_hash(copy)
    message = manifest.problem("task", "tiny", 1, after, listed)
    assert message is not None and "bump its version" in message and manifest.line("task", "tiny", 1, after) in message
    recorded = manifest.parse("\n".join([manifest.line("task", "tiny", 1, before), manifest.line("task", "tiny", 1, after)]))
    assert manifest.problem("task", "tiny", 1, after, recorded) is None
    # a run directory of the code before (it recorded the hash): the same version, so the same identity
    stored = {"task.name": "tiny", "code.task": before, "seed": 1}
    current = {"task.name": "tiny", "plugin.task": "tiny@1", "seed": 1}
    assert differences(with_versions(stored, recorded), current) == []
    bumped = {**current, "plugin.task": "tiny@2"}                         # after a bump: another experiment
    assert differences(with_versions(stored, recorded), bumped) == ['plugin.task: "tiny@1" → "tiny@2"']


def test_a_copied_probes_hash_is_checked_the_same_way():
    declared = registered_probes()["ridge"]
    code = probe_code_hash(declared.package, declared.resolved_target())
    assert manifest.problem("probe", "ridge_copy", 1, code) is not None        # not in the manifest
    listed = manifest.parse(manifest.line("probe", "ridge_copy", 1, code))
    assert manifest.problem("probe", "ridge_copy", 1, code, listed) is None
    stored = {"probe.name": "ridge_copy", "code.probe": code}
    assert with_versions(stored, listed) == {"probe.name": "ridge_copy", "plugin.probe": "ridge_copy@1"}
    assert with_versions({**stored, "code.probe": "ast:0000000000000000"}, listed)["code.probe"]   # unknown code


def test_a_malformed_manifest_line_is_one_line_naming_it():
    with pytest.raises(ConfigError, match=r"plugins.txt:2: expected '<task\|probe\|encoder> <name> <version> <code hash>'"):
        manifest.parse("task ner 1 ast:72110faaf87f9e68\ntask ner one ast:x\n", "plugins.txt")
