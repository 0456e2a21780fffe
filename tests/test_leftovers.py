"""Issue 12, no leftovers: temporaries of writes killed with SIGKILL are removed by the next write (or build of the
activation cache) in the same place; SIGTERM removes them at once."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from elmo_bench.base.atomic import atomic_write_text
from tests.conftest import REPO

WRITER = """
import sys, time
from pathlib import Path
from elmo_bench.base.atomic import atomic_path
from elmo_bench.commands.guard import exit_cleanly_on_sigterm

exit_cleanly_on_sigterm()
with atomic_path(Path(sys.argv[1]), suffix=".hdf5") as tmp:   # as `elmo-bench embed` writes its output
    tmp.write_bytes(b"x" * 1_000_000)
    print("writing", flush=True)
    time.sleep(120)
"""

CACHE_BUILDER = """
import sys, tempfile, time
from pathlib import Path
from elmo_bench.base.atomic import temp_prefix

# the first step of ActivationCache.layers: the entry is built in a temporary directory named after its owner
tmp = Path(tempfile.mkdtemp(prefix=temp_prefix("v2-entry"), dir=sys.argv[1]))
(tmp / "layers.f16").write_bytes(b"x" * 1_000_000)
print("writing", flush=True)
time.sleep(120)
"""


def _start(tmp_path: Path, script: str, arg: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(script), str(arg)], stdout=subprocess.PIPE,
                            text=True, env=env, cwd=tmp_path)
    assert proc.stdout.readline().strip() == "writing"
    return proc


def _hidden(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("."))


def test_a_write_killed_with_sigkill_leaves_a_temporary_that_the_next_write_removes(tmp_path):
    out = tmp_path / "out.hdf5"
    proc = _start(tmp_path, WRITER, out)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    left = _hidden(tmp_path)
    assert len(left) == 1 and left[0].startswith(".out.hdf5.") and left[0].endswith(".hdf5.tmp")
    atomic_write_text(out, "done")
    assert _hidden(tmp_path) == [] and out.read_text() == "done"


def test_a_live_writer_keeps_its_temporary(tmp_path):
    out = tmp_path / "out.hdf5"
    proc = _start(tmp_path, WRITER, out)
    try:
        atomic_write_text(tmp_path / "other.txt", "x")
        atomic_write_text(out, "mine")
        assert len(_hidden(tmp_path)) == 1  # still being written by a running process
    finally:
        proc.send_signal(signal.SIGTERM)  # SIGTERM: the writer removes its own temporary
        proc.wait(timeout=30)
    assert _hidden(tmp_path) == []


def test_a_cache_build_killed_with_sigkill_is_cleaned_by_the_next_build(tmp_path):
    from elmo_bench.encoders.cache import ActivationCache

    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    proc = _start(tmp_path, CACHE_BUILDER, cache_dir)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert len(_hidden(cache_dir)) == 1

    from elmo_bench.bilm.model import BiLM
    from elmo_bench.bilm.options import BiLMOptions

    bilm = BiLM(BiLMOptions.from_dict({  # a small real biLM with random weights
        "char_cnn": {"filters": [[1, 4], [2, 4]], "n_highway": 1, "embedding": {"dim": 4}, "n_characters": 262,
                     "max_characters_per_token": 50, "activation": "relu"},
        "lstm": {"n_layers": 1, "dim": 8, "projection_dim": 4, "cell_clip": 3, "proj_clip": 3,
                 "use_skip_connections": True}}))
    entry = ActivationCache(cache_dir, bilm, "bilm0", progress=False).layers([["a", "b"]], name="t")
    assert _hidden(cache_dir) == [] and entry.get(0).shape == (2, 2, 8)
