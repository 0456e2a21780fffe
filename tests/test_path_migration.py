"""``elmo-bench migrate`` (its path step, elmo_bench.records.path_migration): the committed probe records hold no absolute machine path, and the
step that rewrote them changed no other value (issue 44, item 6)."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from elmo_bench.commands.migrate import migrate_main
from elmo_bench.records.path_migration import BLOCK, is_abs, migrate_dirs, migrate_file, relative_path

REPO = Path(__file__).resolve().parents[1]
#: each migrated folder → the last commit before the step rewrote its records (docs/results/probes: a second pass)
BEFORE = {"docs/results/probe_suite": "112c8f0", "docs/results/probes_controls": "112c8f0",
          "docs/results/probes": "241226f"}
MIGRATED = tuple(BEFORE)


def flat(tree: Any, path: str = "") -> dict[str, Any]:
    if isinstance(tree, dict):
        return {k: v for key, value in tree.items() for k, v in flat(value, f"{path}.{key}" if path else key).items()}
    if isinstance(tree, list):
        return {k: v for i, value in enumerate(tree) for k, v in flat(value, f"{path}[{i}]").items()} or {path: []}
    return {path: tree}


def unchanged_apart_from_paths(before: Any, after: Any) -> None:
    """Every value of ``before`` that is not an absolute path is in ``after`` unchanged, and ``after`` adds nothing
    but the migration's block; every absolute path is listed as rewritten (to a relative path) or dropped (null)."""
    old, new = flat(before), flat(after)
    block = after.get(BLOCK, {}) if isinstance(after, dict) else {}
    assert {k for k in new if not k.startswith(BLOCK + ".")} == set(old)
    for key, value in old.items():
        if is_abs(value):
            assert key in block["rewritten"] or key in block["dropped"], key
            assert new[key] is None or not new[key].startswith("/"), (key, new[key])
            assert (new[key] is None) == (key in block["dropped"]), key
        else:
            assert new[key] == value and type(new[key]) is type(value), key


RECORD = {
    "config": {"options": "/work/wt-x/elmo_bench/resources/bilm/options.json", "cache_dir": "/work/main/.cache/act",
               "data_dir": "/work/shared/data/pos/ud_english_ewt", "out": "/tmp/suite_cpu/structural",
               "model": "/tmp/i36/all-MiniLM-L6-v2", "cache": "/tmp/ev/cache", "seeds": "1,2", "seed": 0,
               "l2_grid": "1e-2,1e-1", "rank": None, "relative": "data/x", "layers": [0, 2]},
    "metrics": {"dev": {"layer_0_uuas": 18.83, "layer_1_dspr": 0.6593, "count": 7, "flag": True}},
    "paths": ["/work/main/elmo_bench/a.json", "b"],
}


def test_rules_and_nothing_else_changes(tmp_path):
    path = tmp_path / "results.json"
    path.write_text(json.dumps(RECORD, indent=2, sort_keys=True) + "\n")
    block = migrate_file(path)
    after = json.loads(path.read_text())
    assert after["config"] == {**RECORD["config"], "options": "elmo_bench/resources/bilm/options.json",
                               "cache_dir": ".cache/act", "data_dir": "../shared/data/pos/ud_english_ewt",
                               "out": ".", "model": None, "cache": None}
    assert after["paths"] == ["elmo_bench/a.json", "b"]
    assert set(block["dropped"]) == {"config.model", "config.cache"}
    assert "all-MiniLM-L6-v2" in block["dropped"]["config.model"]
    unchanged_apart_from_paths(RECORD, after)
    text = path.read_text()
    assert migrate_file(path) is None and path.read_text() == text          # twice: nothing more to do


def test_relative_path_rules():
    assert relative_path("/work/wt-i37-struct/elmo_bench/resources/bilm/weights.hdf5", "weights") == \
        "elmo_bench/resources/bilm/weights.hdf5"
    assert relative_path("/work/shared/data/wsd/semcor", "semcor") == "../shared/data/wsd/semcor"
    assert relative_path("/work/evidence/suite/mdl", "out") == "."
    assert relative_path("/usr/share/wordnet", "wordnet") is None


def test_committed_records_hold_no_absolute_path():
    for root in MIGRATED:
        for path in sorted((REPO / root).rglob("*.json")):
            strings = [v for v in flat(json.loads(path.read_text())).values() if is_abs(v)]
            assert not strings, (path, strings)


def _git_show(rel: str, before: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(REPO), "show", f"{before}:{rel}"], capture_output=True, text=True,
                              timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def test_committed_records_kept_every_number():
    """Each migrated record against its version before the step (from git; skipped without the history)."""
    compared = 0
    for root in MIGRATED:
        for path in sorted((REPO / root).rglob("*.json")):
            before = _git_show(str(path.relative_to(REPO)), BEFORE[root])
            if before is None:
                continue
            unchanged_apart_from_paths(json.loads(before), json.loads(path.read_text()))
            compared += 1
    if not compared:
        pytest.skip(f"the records before the migration ({BEFORE}) are not in this checkout's git history")
    assert compared >= 36


def test_the_step_over_a_copy_of_the_committed_records_changes_nothing(tmp_path, capsys):
    for root in MIGRATED:
        shutil.copytree(REPO / root, tmp_path / Path(root).name)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*.json")}
    assert migrate_main([str(tmp_path)]) == 0
    assert json.loads(capsys.readouterr().out)["files"] == 0
    assert {p: p.read_bytes() for p in tmp_path.rglob("*.json")} == before
    assert migrate_dirs([tmp_path]) == {}
