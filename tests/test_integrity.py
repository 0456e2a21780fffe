"""Issue 27 item 3 (and the artefact parts of 9): every file this program reads back carries an integrity record
(elmo_bench.base.integrity: size + sha256). A cache entry whose bytes changed is rebuilt (logged), never read as is; a
corrupt or truncated checkpoint.pt / best.pt is one line naming it; the records survive kill -9 mid-write."""
from __future__ import annotations

import hashlib
import json
import logging
import os
import random
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import types
from pathlib import Path

import numpy as np
import pytest
import torch

from elmo_bench.base import checkpoints, integrity
from elmo_bench.base.errors import ConfigError, DataError
from elmo_bench.encoders.cache import ENTRY_FILES, RECORD, ActivationCache
from tests.conftest import REPO
from tests.test_leftovers import _tiny_bilm
from tests.warm_python import run_python

SENTENCES = [["The", "cat", "sat", "."], ["Dogs", "bark"], ["A", "longer", "sentence", "here", "."]]


@pytest.fixture(scope="module")
def bilm():
    torch.manual_seed(0)
    return _tiny_bilm()


def _entry(cache_dir: Path) -> Path:
    (entry,) = [p for p in cache_dir.iterdir() if not p.name.startswith(".")]
    return entry


def _all_layers(layers) -> list[np.ndarray]:
    return [layers.get(i) for i in range(len(layers))]


def _new_process() -> None:
    """What a later run starts with: nothing hashed yet (the per-process memo is empty)."""
    integrity._HASHED.clear()


def _damage(cache_dir: Path, how: str) -> None:
    entry = _entry(cache_dir)
    data = entry / "layers.f16"
    if how == "bytes changed":  # same size: only the hash can tell
        with open(data, "r+b") as handle:
            handle.seek(8)
            handle.write(b"\x00\x7c" * 8)  # fp16 infinities
    elif how == "truncated":
        os.truncate(data, data.stat().st_size // 2)
    elif how == "meta changed":
        meta = json.loads((entry / "meta.json").read_text())
        (entry / "meta.json").write_text(json.dumps({**meta, "dim": meta["dim"] + 1}))
    elif how == "no record":  # an entry written before integrity records existed
        (entry / RECORD).unlink()
    elif how == "record damaged":
        (entry / RECORD).write_text("not a record\n")
    elif how == "file missing":
        (entry / "rows.npy").unlink()


@pytest.mark.parametrize("how", ["bytes changed", "truncated", "meta changed", "no record", "record damaged",
                                 "file missing"])
def test_a_changed_cache_entry_is_rebuilt_with_a_warning_never_read_as_is(tmp_path, bilm, caplog, how):
    clean = _all_layers(ActivationCache(tmp_path, bilm, "b0", progress=False).layers(SENTENCES))
    _damage(tmp_path, how)
    _new_process()
    caplog.set_level(logging.INFO, logger="elmo_bench.encoders.cache")
    again = ActivationCache(tmp_path, bilm, "b0", progress=False).layers(SENTENCES)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "rebuilding it" in warnings[0] and "activation cache miss" in caplog.text
    for got, want in zip(_all_layers(again), clean):
        np.testing.assert_array_equal(got, want)
    assert sorted(p.name for p in tmp_path.iterdir()) == [_entry(tmp_path).name]  # the bad entry is gone
    caplog.clear()
    _new_process()
    ActivationCache(tmp_path, bilm, "b0", progress=False).layers(SENTENCES)  # the rebuilt entry checks out
    assert "activation cache hit" in caplog.text and "WARNING" not in caplog.text


def test_an_entry_is_hashed_once_per_process(tmp_path, bilm, monkeypatch):
    ActivationCache(tmp_path, bilm, "b0", progress=False).layers(SENTENCES)
    _new_process()
    hashed = []

    def counting_sha256(*args):
        hashed.append(1)
        return hashlib.sha256(*args)

    monkeypatch.setattr(integrity, "hashlib", types.SimpleNamespace(sha256=counting_sha256))
    for _ in range(3):
        ActivationCache(tmp_path, bilm, "b0", progress=False).layers(SENTENCES)
    assert len(hashed) == len(ENTRY_FILES)  # each file of the entry once, not once per use
    record = integrity.read_record(_entry(tmp_path) / RECORD)
    assert set(record) == set(ENTRY_FILES) and all(f.size is not None for (f,) in record.values())


def test_a_cache_dir_that_is_a_file_is_one_line(tmp_path, bilm):
    (tmp_path / "cache").write_text("a file\n")
    with pytest.raises(ConfigError, match=r"^cache directory .*/cache is a file, expected a directory"):
        ActivationCache(tmp_path / "cache", bilm, "b0", progress=False).layers(SENTENCES)
    assert (tmp_path / "cache").read_text() == "a file\n"


def test_run_py_with_a_cache_dir_that_is_a_file_is_one_line(tmp_path):
    (tmp_path / "cache").write_text("a file\n")
    done = run_python(
         ["run.py", "task=ner", "embedder=glove_elmo", "data=ner_sample", "trainer.max_epochs=1",
         "logger=disabled", "progress=false", f"paths.results_dir={tmp_path / 'results'}",
         f"paths.cache_dir={tmp_path / 'cache'}", f"hydra.run.dir={tmp_path / 'run'}"],
                      cwd=REPO, timeout=600)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1:] == [
        f"error: cache directory {tmp_path / 'cache'} is a file, expected a directory (paths.cache_dir / --cache-dir)"]
    assert "Traceback" not in done.stderr


# ---- checkpoints ------------------------------------------------------------------------------------------------

def _state(epoch: int, size: int = 1000) -> dict:
    return {"epoch": epoch, "model": {"w": torch.full((size,), float(epoch))}}


@pytest.mark.parametrize("how", ["bytes changed", "truncated", "not a checkpoint"])
def test_a_corrupt_checkpoint_is_one_error_naming_it(tmp_path, how):
    path = tmp_path / "best.pt"
    checkpoints.save(path, _state(3))
    size = path.stat().st_size
    if how == "bytes changed":
        with open(path, "r+b") as handle:
            handle.seek(size - 2000)
            handle.write(b"\xff" * 16)
        message = r"best.pt: sha256 .* differs from .* recorded in .*best.pt.sha256: the file is corrupt"
    elif how == "truncated":
        os.truncate(path, size - 100)
        message = rf"best.pt: {size - 100} bytes, {size} recorded in .*best.pt.sha256: the file is truncated"
    else:  # no record (written before records existed) and not a checkpoint at all
        path.write_bytes(b"garbage")
        (tmp_path / "best.pt.sha256").unlink()
        message = r"best.pt: cannot be read as a checkpoint \(.*\); train again"
    _new_process()
    with pytest.raises(DataError, match=message):
        checkpoints.load(path, advice="train again")


def test_a_checkpoint_without_record_loads_with_a_warning(tmp_path, caplog):
    torch.save(_state(2), tmp_path / "checkpoint.pt")  # as written before records existed
    caplog.set_level(logging.WARNING)
    assert checkpoints.load(tmp_path / "checkpoint.pt")["epoch"] == 2
    assert "has no integrity record" in caplog.text and "loaded without a check" in caplog.text


def test_run_py_on_a_truncated_checkpoint_is_one_line(tmp_path):
    common = ["task=ner", "embedder=glove", "data=ner_sample", "logger=disabled", "progress=false",
              f"paths.results_dir={tmp_path / 'results'}", f"paths.cache_dir={tmp_path / 'cache'}",
              f"hydra.run.dir={tmp_path / 'run'}"]
    run = lambda *extra: run_python(["run.py", *common, *extra], cwd=REPO, timeout=600)  # noqa: E731
    assert run("trainer.max_epochs=1").returncode == 0
    checkpoint = tmp_path / "run" / "checkpoint.pt"
    os.truncate(checkpoint, checkpoint.stat().st_size // 2)
    done = run("trainer.max_epochs=2")  # continues the run: reads the checkpoint
    assert done.returncode == 2 and "Traceback" not in done.stderr
    err = done.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {checkpoint}: ") and "truncated" in err[0]
    assert "the run stops here" in err[0]


SAVER = """
import sys
import torch
from elmo_bench.base import checkpoints
epoch = 0
print("saving", flush=True)
while True:
    epoch += 1
    checkpoints.save(sys.argv[1], {"epoch": epoch, "w": torch.full((300_000,), float(epoch))})
"""


def test_a_checkpoint_killed_mid_write_always_loads_and_checks_out(tmp_path):
    """kill -9 at random moments of repeated saves: the file left is always one its record accepts."""
    path = tmp_path / "checkpoint.pt"
    checkpoints.save(path, {"epoch": 0, "w": torch.zeros(300_000)})
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    rng = random.Random(0)
    for _ in range(6):
        proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(SAVER), str(path)], stdout=subprocess.PIPE,
                                text=True, env=env)
        assert proc.stdout.readline().strip() == "saving"
        time.sleep(rng.uniform(0.0, 0.4))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        _new_process()
        state = checkpoints.load(path)
        assert integrity.check_recorded(path)
        assert torch.equal(state["w"], torch.full((300_000,), float(state["epoch"])))


# ---- exported biLMs ---------------------------------------------------------------------------------------------

def test_an_exported_bilm_records_sizes_and_a_truncated_copy_is_refused(tmp_path):
    from elmo_bench.bilm.checksums import write_checksums
    from elmo_bench.bilm.default import DEFAULT_OPTIONS, DEFAULT_WEIGHTS
    from elmo_bench.bilm.weights import load_bilm

    for source in (DEFAULT_OPTIONS, DEFAULT_WEIGHTS):
        shutil.copy(source, tmp_path / Path(source).name)
    record = write_checksums(tmp_path)
    weights = tmp_path / Path(DEFAULT_WEIGHTS).name
    assert f"# size {weights.stat().st_size} {weights.name}" in record.read_text().splitlines()
    ok = subprocess.run(["sha256sum", "-c", "--strict", record.name], cwd=tmp_path, capture_output=True, text=True)
    assert ok.returncode == 0  # still sha256sum's format
    os.truncate(weights, weights.stat().st_size - 10)
    _new_process()
    with pytest.raises(DataError, match=rf"{weights.name}: \d+ bytes, \d+ recorded in .*weights.sha256"):
        load_bilm(tmp_path / Path(DEFAULT_OPTIONS).name, weights)


def test_a_bad_entry_that_cannot_be_replaced_is_one_error_not_read(tmp_path, bilm, monkeypatch):
    import elmo_bench.encoders.cache as cache_module

    cache_dir = tmp_path / "cache"
    ActivationCache(cache_dir, bilm, "b0", progress=False).layers(SENTENCES)
    _damage(cache_dir, "bytes changed")
    _new_process()

    def read_only(path, name):  # what a read-only cache directory does to setting the entry aside
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(cache_module, "mark_as_temporary", read_only)
    with pytest.raises(DataError, match=r"layers.f16: sha256 .* the entry could not be replaced"):
        ActivationCache(cache_dir, bilm, "b0", progress=False).layers(SENTENCES)
