"""Sharded activation cache entries (issue 46 items 6, 7): a killed extraction resumes from its complete shards and
ends byte-identical to an uninterrupted one; a shard that fails its checksum is refused; unsharded keys stay as
they were; ``torchrun --nproc-per-node=2`` (gloo) writes the same bytes as one process."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import elmo_bench.encoders.cache as cache_module
from elmo_bench.base.errors import ConfigError
from elmo_bench.base.integrity import IntegrityError
from elmo_bench.bilm.weights import bilm_identity, load_bilm
from elmo_bench.commands.main import main
from elmo_bench.encoders.cache import ActivationCache
from elmo_bench.encoders.shards import PARTIAL, ShardedLayers
from tests.conftest import FIXTURES, REPO, needs_fixtures

pytestmark = needs_fixtures
SENTENCES = [["The", "cat", "sat", "."], ["Dogs", "bark"], ["A", "much", "longer", "sentence", "here", "now", "."],
             ["Dogs", "bark"], ["Cats", "sleep", "a", "lot"], ["Birds"], ["It", "rains", "."], ["Yes"]]


@pytest.fixture(scope="module")
def bilm():
    return load_bilm(FIXTURES / "options.json", FIXTURES / "lm_weights.hdf5")


def _cache(directory: Path, bilm, shards: int = 2) -> ActivationCache:
    ident = bilm_identity(FIXTURES / "options.json", FIXTURES / "lm_weights.hdf5")
    return ActivationCache(directory, bilm, ident, progress=False, shard_sentences=shards)


def _files(entry: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(entry.iterdir())}


def test_sharded_entry_reads_like_the_flat_one_and_keeps_old_keys(tmp_path, bilm):
    flat_cache, sharded_cache = _cache(tmp_path, bilm, 0), _cache(tmp_path, bilm, 3)
    flat, sharded = flat_cache.layers(SENTENCES), sharded_cache.layers(SENTENCES)
    assert "-sh" not in flat_cache.key(SENTENCES) and sharded_cache.key(SENTENCES).endswith("-sh3")
    assert isinstance(sharded, ShardedLayers) and sharded.meta["shards"] == 3  # 7 distinct sentences, 3 a shard
    assert len(sharded) == len(flat) == len(SENTENCES)
    for i in range(len(SENTENCES)):
        assert sharded.get(i).shape == flat.get(i).shape == (3, len(SENTENCES[i]), 32)
        np.testing.assert_allclose(sharded.get(i), flat.get(i), atol=2e-3, rtol=2e-3)
    np.testing.assert_array_equal(sharded.get(3), sharded.get(1))  # a repeated sentence: one row
    assert not list(tmp_path.glob(f"*{PARTIAL}"))
    again = _cache(tmp_path, bilm, 3).layers(SENTENCES)  # a hit: checked against its integrity record
    np.testing.assert_array_equal(again.get(2), sharded.get(2))


def test_killed_extraction_resumes_byte_identical(tmp_path, bilm, monkeypatch):
    whole = _cache(tmp_path / "whole", bilm).layers(SENTENCES)
    calls = []
    compute = cache_module.compute_layers

    def killed_after_two_shards(*args, **kwargs):
        if len(calls) == 2:  # killed half-way through shard 2: its temporary stays, as after a SIGKILL
            raise SystemExit("killed")
        calls.append(len(args[1]))
        return compute(*args, **kwargs)

    monkeypatch.setattr(cache_module, "compute_layers", killed_after_two_shards)
    cache = _cache(tmp_path / "resumed", bilm)
    with pytest.raises(SystemExit):
        cache.layers(SENTENCES)
    partial = tmp_path / "resumed" / f"{cache.key(SENTENCES)}{PARTIAL}"
    (partial / ".shard-00002.f16.99999999.tmp").write_bytes(b"half")  # what a SIGKILL leaves
    assert sorted(p.name for p in partial.glob("shard-*")) == [
        "shard-00000.f16", "shard-00000.f16.sha256", "shard-00001.f16", "shard-00001.f16.sha256"]
    assert not (tmp_path / "resumed" / cache.key(SENTENCES)).exists()  # nothing published half-done
    calls.clear()
    monkeypatch.setattr(cache_module, "compute_layers", lambda *a, **k: (calls.append(len(a[1])), compute(*a, **k)))
    resumed = cache.layers(SENTENCES)
    assert calls == [2, 1]  # shards 2 and 3 only (7 distinct sentences, 2 a shard)
    assert _files(Path(resumed.directory)) == _files(Path(whole.directory))


def test_shard_failing_its_checksum_on_resume_is_refused(tmp_path, bilm, monkeypatch):
    compute = cache_module.compute_layers
    calls = []

    def killed_after_one_shard(*args, **kwargs):
        if calls:
            raise KeyboardInterrupt("killed")
        calls.append(1)
        return compute(*args, **kwargs)

    monkeypatch.setattr(cache_module, "compute_layers", killed_after_one_shard)
    cache = _cache(tmp_path, bilm)
    with pytest.raises(KeyboardInterrupt):
        cache.layers(SENTENCES)
    monkeypatch.setattr(cache_module, "compute_layers", compute)
    shard = tmp_path / f"{cache.key(SENTENCES)}{PARTIAL}" / "shard-00000.f16"
    data = bytearray(shard.read_bytes())
    data[10] ^= 0xFF
    shard.write_bytes(bytes(data))
    with pytest.raises(IntegrityError, match=r"shard-00000\.f16: sha256 .* remove shard-00000\.f16") as info:
        cache.layers(SENTENCES)
    assert "\n" not in str(info.value)
    assert not (tmp_path / cache.key(SENTENCES)).exists()


def test_negative_shard_size_is_one_line(tmp_path, bilm):
    with pytest.raises(ConfigError, match="shard_sentences expected an integer >= 0"):
        _cache(tmp_path, bilm, -1)


def _arguments(tmp_path: Path, cache: str) -> list[str]:
    return ["extract", "--options", str(FIXTURES / "options.json"), "--weights", str(FIXTURES / "lm_weights.hdf5"),
            "--input", str(tmp_path / "in.txt"), "--cache-dir", str(tmp_path / cache), "--shard-sentences", "2"]


def test_torchrun_two_ranks_byte_identical_to_one_process(tmp_path, capsys, bilm):
    """One torchrun launch (tests/torchrun_ranks.py): ranks that disagree end with exit 2 and leave nothing, then
    the same ``elmo-bench extract`` command on 2 gloo ranks writes the bytes one process writes; a second torchrun
    launch of it finds that entry done."""
    (tmp_path / "in.txt").write_text("".join(" ".join(s) + "\n" for s in SENTENCES))
    assert main(_arguments(tmp_path, "one")) == 0
    one = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    two = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node=2",
                          str(REPO / "tests" / "torchrun_ranks.py"), *_arguments(tmp_path, "two")],
                         capture_output=True, text=True, env=env, cwd=REPO, timeout=300)
    assert two.returncode == 0, two.stderr[-3000:]
    assert two.stdout.count("disagree 2") == 2  # both ranks refused
    refusal = next(line for line in two.stderr.splitlines() if "disagrees with rank 0" in line)
    assert refusal.startswith("error: torchrun: rank 1 disagrees with rank 0 on the configuration (key, "
                              "shard_sentences, shards:")
    assert not any((tmp_path / "two-bad").iterdir())  # nothing half-written
    printed = json.loads([line for line in two.stdout.splitlines() if line.startswith("{")][-1])
    assert printed == {**one, "ranks": 2} and printed["shards"] == 4 and printed["status"] == "computed"
    again = subprocess.run(two.args, capture_output=True, text=True, env=env, cwd=REPO, timeout=300)   # a second
    found = json.loads([line for line in again.stdout.splitlines() if line.startswith("{")][-1])      # torchrun
    assert again.returncode == 0 and found == {**printed, "status": "found"}                           # (issue 56)
    assert f"extract: entry {one['entry']} found done: nothing computed (4 shards, 8 sentences, 2 ranks)" in again.stderr
    assert _files(tmp_path / "one" / one["entry"]) == _files(tmp_path / "two" / one["entry"])
    assert _cache(tmp_path / "two", bilm, 2).key(SENTENCES) == one["entry"]  # a run with shard_sentences=2 reads it


def test_shard_sentences_is_a_run_time_key_checked_in_one_line():
    from elmo_bench.engine.run_config import Runtime

    assert Runtime().shard_sentences == 0
    with pytest.raises(ConfigError, match="config: shard_sentences expected an integer >= 0, found -1"):
        Runtime(shard_sentences=-1)
