"""Issue 27 items 1 and 12: the stale-temporary cleanup removes only this program's own abandoned temporaries
(elmo_bench.base.atomic's naming rule + marker), never a user's hidden files; written files respect the umask."""
from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from elmo_bench.base.atomic import MARKER, atomic_write_text, host_tag, marker_text, owned_temp_dir, owner, remove_stale
from tests.conftest import REPO

OLD = 86400 * 400  # an mtime more than a year back


def dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def fake_owned_dir(directory: Path, name: str, pid: int) -> Path:
    """A temporary directory as process ``pid`` of this program would have left it (name + marker)."""
    path = directory / f".elmo_bench-tmp.{host_tag()}.{pid}.abcd_123.{name}"
    path.mkdir()
    (path / MARKER).write_text(marker_text(pid, host_tag()), encoding="ascii")
    return path


def _age(path: Path) -> None:
    old = os.stat(path, follow_symlinks=False).st_mtime - OLD
    os.utime(path, (old, old), follow_symlinks=False)


def _user_home(tmp_path: Path) -> dict[str, Path]:
    """Hidden things a user keeps in a directory given as a cache dir: old, with numbers that are no live pid."""
    home = tmp_path / "home"
    home.mkdir()
    gone = dead_pid()
    things = {
        ".git": home / ".git", ".ssh": home / ".ssh", ".config": home / ".config",
        ".foo.123.tmp": home / ".foo.123.tmp", f".bar.{gone}.tmp": home / f".bar.{gone}.tmp",
        # the old rule's own pattern, by another tool (or an older version of this one): not provably ours
        f".x.{gone}.abcdefgh.tmp": home / f".x.{gone}.abcdefgh.tmp",
        # this program's name pattern, but no marker inside (and not empty), a wrong marker, another host, a link
        "unmarked": home / f".elmo_bench-tmp.{host_tag()}.{gone}.abcdefgh.entry",
        "wrong marker": home / f".elmo_bench-tmp.{host_tag()}.{gone}.abcdefg2.entry",
        "other host": home / f".elmo_bench-tmp.{'0' * 6 if host_tag() != '0' * 6 else '1' * 6}.{gone}.abcdefgh.f",
        "link": home / f".elmo_bench-tmp.{host_tag()}.{gone}.abcdefg3.link",
    }
    (home / ".git").mkdir()
    (home / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_ed25519").write_text("secret\n")
    (home / ".config").write_text("settings\n")
    things[".foo.123.tmp"].write_text("another tool's\n")
    things[f".bar.{gone}.tmp"].mkdir()
    (things[f".bar.{gone}.tmp"] / "data").write_text("x")
    things[f".x.{gone}.abcdefgh.tmp"].write_text("x")
    things["unmarked"].mkdir()
    (things["unmarked"] / "work").write_text("x")
    things["wrong marker"].mkdir()
    (things["wrong marker"] / MARKER).write_text("something else\n")
    things["other host"].write_text("x")
    target = tmp_path / "precious"
    target.mkdir()
    (target / "file").write_text("keep")
    things["link"].symlink_to(target, target_is_directory=True)
    for path in things.values():
        _age(path)
    return things


ABANDON = """
import os, sys
from pathlib import Path
from elmo_bench.base.atomic import owned_temp_dir, owned_temp_file
d = owned_temp_dir(sys.argv[1], "v2-key")
(d / "layers.f16").write_bytes(b"x" * 1000)
owned_temp_file(sys.argv[1], "results.json", ".tmp")
os._exit(0)  # as after kill -9: no cleanup ran
"""


def _abandon_temporaries(directory: Path) -> list[Path]:
    before = set(directory.iterdir())
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    subprocess.run([sys.executable, "-c", textwrap.dedent(ABANDON), str(directory)], check=True, env=env)
    made = sorted(set(directory.iterdir()) - before)
    assert len(made) == 2
    return made


def test_only_our_abandoned_temporaries_are_removed_never_a_users_hidden_files(tmp_path):
    things = _user_home(tmp_path)
    home = tmp_path / "home"
    ours = _abandon_temporaries(home)
    assert all(owner(p) is not None for p in ours)

    removed = remove_stale(home)
    assert sorted(removed) == ours and not any(p.exists() for p in ours)
    for label, path in things.items():
        assert os.path.lexists(path), f"{label} was removed"
    assert (home / ".git" / "HEAD").read_text() == "ref: refs/heads/main\n"
    assert (home / ".ssh" / "id_ed25519").read_text() == "secret\n"
    assert (tmp_path / "precious" / "file").read_text() == "keep"
    # every entry point of the sweep, again: named sweeps, an atomic write there
    remove_stale(home, "entry")
    remove_stale(home, "x")
    atomic_write_text(home / "x", "new")
    assert all(os.path.lexists(p) for p in things.values())


def test_an_activation_cache_in_a_users_directory_removes_nothing_of_theirs(tmp_path):
    from elmo_bench.encoders.cache import ActivationCache
    from tests.test_leftovers import _tiny_bilm

    things = _user_home(tmp_path)
    home = tmp_path / "home"
    ours = _abandon_temporaries(home)
    entry = ActivationCache(home, _tiny_bilm(), "bilm0", progress=False).layers([["a", "b"]], name="t")
    assert entry.get(0).shape == (2, 2, 8)
    assert not any(p.exists() for p in ours)
    assert all(os.path.lexists(p) for p in things.values())


def test_a_live_processs_temporary_directory_is_kept(tmp_path):
    mine = owned_temp_dir(tmp_path, "v2-key")  # this process is alive
    assert remove_stale(tmp_path) == [] and mine.is_dir()


def test_an_empty_unmarked_directory_of_a_dead_process_is_removed(tmp_path):
    # killed between mkdtemp and writing the marker: nothing inside, so nothing of anyone's can be lost
    empty = tmp_path / f".elmo_bench-tmp.{host_tag()}.{dead_pid()}.abcdefgh.v2-key"
    empty.mkdir()
    assert remove_stale(tmp_path) == [empty] and not empty.exists()


@pytest.fixture
def umask_022():
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_written_files_respect_the_umask(tmp_path, umask_022):
    atomic_write_text(tmp_path / "results.json", "{}")
    assert _mode(tmp_path / "results.json") == 0o644
    os.umask(0o077)
    atomic_write_text(tmp_path / "private.json", "{}")
    assert _mode(tmp_path / "private.json") == 0o600


def test_checkpoints_and_cache_entries_respect_the_umask(tmp_path, umask_022):
    from elmo_bench.base import checkpoints
    from elmo_bench.encoders.cache import ActivationCache
    from tests.test_leftovers import _tiny_bilm

    checkpoints.save(tmp_path / "checkpoint.pt", {"epoch": 1})
    assert _mode(tmp_path / "checkpoint.pt") == 0o644 and _mode(tmp_path / "checkpoint.pt.sha256") == 0o644
    cache = ActivationCache(tmp_path / "cache", _tiny_bilm(), "bilm0", progress=False)
    cache.layers([["a", "b"]], name="t")
    (entry,) = [p for p in (tmp_path / "cache").iterdir()]
    assert _mode(entry) == 0o755
    assert {p.name: _mode(p) for p in entry.iterdir() if p.name != MARKER} == {
        "meta.json": 0o644, "offsets.npy": 0o644, "rows.npy": 0o644, "layers.f16": 0o644, "integrity.sha256": 0o644}
