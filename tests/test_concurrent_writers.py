"""Issue 56 item 8, with real processes racing: two ``elmo-bench extract`` into one cache directory both end well
(the second takes turns on the entry's lock and then finds the entry, never a FileNotFoundError on the other's
``.partial``); two ``probe-suite`` with different ``--probes`` into one ``--out`` both keep their probe in
suite.json (read, merge, write under ``OUT/.suite.json.lock``); ``OUT/suite.json`` that is a directory, or the
record of another suite, is one line before anything runs."""
from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from elmo_bench.base.atomic import held_lock
from elmo_bench.base.integrity import check_files
from elmo_bench.commands.suite_record import SUITE_LOCK, SUITE_RECORD
from tests.conftest import FIXTURES, REPO, needs_fixtures

WORDS = "the cat sat on a mat dogs bark loudly at night birds sing in trees".split()


def _hold(path: str, seconds: float, held) -> None:
    with held_lock(path, "test"):
        held.set()
        time.sleep(seconds)


def test_a_second_holder_waits_for_the_first_process_to_let_go(tmp_path):
    """held_lock across two processes: the second gets the lock only after the first released it."""
    held = multiprocessing.get_context("spawn").Event()
    lock = tmp_path / "x.lock"
    first = multiprocessing.get_context("spawn").Process(target=_hold, args=(str(lock), 1.5, held))
    first.start()
    assert held.wait(60)
    started = time.monotonic()
    with held_lock(lock, "test"):
        waited = time.monotonic() - started
        assert lock.read_text().strip() == str(os.getpid())   # the holder's pid, for the wait line
    first.join(60)
    assert first.exitcode == 0 and waited > 0.5, waited
    assert lock.read_text() == ""                                               # emptied on release


def _popen(args: list[str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "elmo_bench", *args], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


@needs_fixtures
def test_two_extracts_into_one_cache_directory_both_succeed(tmp_path):
    sentences = tmp_path / "in.txt"
    sentences.write_text("\n".join(" ".join([f"w{i}", *(WORDS[(i * 7 + j) % len(WORDS)] for j in range(3 + i % 11))])
                                   for i in range(600)) + "\n")   # 600 distinct sentences: 30 shards
    args = ["extract", "--options", str(FIXTURES / "options.json"), "--weights", str(FIXTURES / "lm_weights.hdf5"),
            "--input", str(sentences), "--cache-dir", str(tmp_path / "cache"), "--shard-sentences", "20"]
    runs = [_popen(args) for _ in range(2)]
    outs = [run.communicate(timeout=600) for run in runs]
    for run, (out, err) in zip(runs, outs):
        assert run.returncode == 0 and "Traceback" not in err, err[-3000:]
    keys = {json.loads(out.strip().splitlines()[-1])["entry"] for out, _ in outs}
    assert len(keys) == 1
    key = keys.pop()
    entry = tmp_path / "cache" / key
    files = sorted(p.name for p in entry.iterdir() if p.name != "integrity.sha256")
    assert len([f for f in files if f.startswith("shard-")]) == 30 and "meta.json" in files
    check_files(entry / "integrity.sha256", [entry / f for f in files], require_listed=True)  # the entry is whole
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == [key, f"{key}.lock"]  # no .partial left


def _suite(tmp_path: Path, probes: str, *extra: str) -> list[str]:
    from tests.test_structural_probe import _data

    data = tmp_path / "ewt" if (tmp_path / "ewt").exists() else _data(tmp_path)
    return ["probe-suite", "--options", str(FIXTURES / "options.json"), "--weights", str(FIXTURES / "lm_weights.hdf5"),
            "--data-dir", str(data), "--cache-dir", str(tmp_path / "cache"), "--no-progress", "--probes", probes,
            "--out", str(tmp_path / "suite"), *extra]


@needs_fixtures
def test_two_suites_into_one_out_both_keep_their_probe(tmp_path):
    """Started together; the test holds OUT's lock until both have finished their probe, so both merges are due
    at the same moment (the race) and queue up behind the lock; suite.json ends with both probes."""
    out = tmp_path / "suite"
    out.mkdir()
    with held_lock(out / SUITE_LOCK, "test"):
        runs = [_popen(_suite(tmp_path, probes)) for probes in ("structural", "pos")]
        deadline = time.monotonic() + 600
        while not all((out / name / "results.json").exists() for name in ("structural", "pos")):
            assert time.monotonic() < deadline and all(run.poll() is None for run in runs), "a suite ended early"
            time.sleep(0.5)
        time.sleep(1)   # both are past their probe, at the merge
    outs = [run.communicate(timeout=600) for run in runs]
    for run, (_, err) in zip(runs, outs):
        assert run.returncode == 0, err[-3000:]
    record = json.loads((out / SUITE_RECORD).read_text())
    assert sorted(record["probes"]) == ["pos", "structural"] and sorted(record["bounds"]) == ["pos", "structural"]
    assert all(v["status"] == "ran" for v in record["probes"].values())
    printed = [json.loads(o.strip().splitlines()[-1]) for o, _ in outs]
    assert record in printed                               # the last writer printed the whole merged record


@needs_fixtures
def test_suite_json_that_is_a_directory_or_another_suites_is_one_line(tmp_path, capsys):
    from elmo_bench.commands.main import main

    (tmp_path / "suite" / SUITE_RECORD).mkdir(parents=True)
    assert main(_suite(tmp_path, "structural")) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "suite.json: a directory, not a file" in err[0], err
    assert sorted(p.name for p in (tmp_path / "suite").iterdir()) == [SUITE_RECORD]   # nothing written
    (tmp_path / "suite" / SUITE_RECORD).rmdir()
    (tmp_path / "suite" / SUITE_RECORD).write_text(json.dumps({"budget": "full", "encoder": "bilm", "probes": {
        "pos": {"status": "ran"}}, "bounds": {"pos": {}}, "overrides": []}))
    assert main(_suite(tmp_path, "structural")) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "the record of another suite (budget: 'full' there, 'cpu' here" in err[0], err
    assert sorted(p.name for p in (tmp_path / "suite").iterdir()) == [SUITE_RECORD]


def test_a_record_of_the_older_form_is_not_merged_into(tmp_path):
    from elmo_bench.base.errors import ConfigError
    from elmo_bench.commands.suite_record import write_suite

    out = tmp_path / "suite"
    out.mkdir()
    old = {"budget": "cpu", "encoder": "bilm", "bounds": {"max_epochs": 10}, "probes": {"pos": {"status": "ran"}}}
    (out / SUITE_RECORD).write_text(json.dumps(old))
    with pytest.raises(ConfigError, match="the record of another suite"):
        write_suite(out, {"budget": "cpu", "encoder": "bilm", "bounds": {"mdl": {}}, "probes": {"mdl": {}}})
    assert json.loads((out / SUITE_RECORD).read_text()) == old
