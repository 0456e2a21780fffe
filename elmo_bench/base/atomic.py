"""Atomic writes and owned temporaries: a reader sees the old file or the whole new one, and a cleanup removes
only what this program made.

Everything that other code or other runs read later (results, caches, checkpoints, exported weights) goes through
here: write to a temporary next to the final name, fsync, give it the mode the umask asks for (``mkstemp`` makes
0600 files, ``mkdtemp`` 0700 directories), then ``os.replace`` it onto the final name.

The owned-temporary rule (the only names :func:`remove_stale` ever removes):

- a temporary's name is ``.elmo_bench-tmp.<host>.<pid>.<random>.<name><suffix>``: ``<host>`` six hex digits of
  the host name's sha1, ``<pid>`` the writer's process id, ``<random>`` mkstemp's eight characters;
- a temporary *directory* also holds a marker file ``.elmo_bench-tmp`` whose text names the same pid and host.

An interrupted write (``kill -9``) leaves its temporary behind; the next write next to it removes every temporary
that matches the rule, was made on this host, and whose process is gone. Nothing else is removed, whatever its
name, age or contents: a hidden folder (``.git``, ``.ssh``), a ``.x.123.tmp`` of another tool, a directory with the
right name but no marker (unless empty), a symlink. Temporaries of other hosts are left alone (a shared file
system: their pid says nothing here). SIGTERM and Ctrl-C remove the temporary at once (the CLIs turn SIGTERM into
SystemExit, see elmo_bench.commands.guard).
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import os
import re
import shutil
import socket
import stat
import tempfile
from pathlib import Path
from typing import Iterator

log = logging.getLogger(__name__)
OWNED_PREFIX = ".elmo_bench-tmp."
#: the file inside every owned temporary directory
MARKER = ".elmo_bench-tmp"
_OWNED = re.compile(r"^\.elmo_bench-tmp\.(?P<host>[0-9a-f]{6})\.(?P<pid>[1-9][0-9]{0,9})\.(?P<random>[a-z0-9_]{8})"
                    r"\.(?P<name>.+)$")


def host_tag() -> str:
    """Six hex digits naming this host in temporary names (a pid means something only on its own host)."""
    return hashlib.sha1(socket.gethostname().encode("utf-8", "replace")).hexdigest()[:6]


def temp_prefix(pid: int | None = None) -> str:
    """The start of this process's temporary names: ``.elmo_bench-tmp.<host>.<pid>.``."""
    return f"{OWNED_PREFIX}{host_tag()}.{os.getpid() if pid is None else pid}."


def marker_text(pid: int, host: str) -> str:
    return f"elmo_bench temporary directory of pid {pid} on host {host}\n"


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):  # someone else's live process; a pid beyond the platform's range
        return True
    return True


def current_umask() -> int:
    """The process's umask (read from /proc where possible: setting it to read it races with other threads)."""
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def apply_umask(path: str | Path, directory: bool = False) -> None:
    """Give ``path`` the mode a plain ``open``/``mkdir`` would have given it (0666 or 0777 less the umask)."""
    os.chmod(path, (0o777 if directory else 0o666) & ~current_umask())


def owned_temp_file(directory: str | Path, name: str, suffix: str = "") -> Path:
    """A new empty file ``.elmo_bench-tmp.<host>.<pid>.<random>.<name><suffix>`` in ``directory``."""
    fd, path = tempfile.mkstemp(prefix=temp_prefix(), suffix=f".{name}{suffix}", dir=directory)
    os.close(fd)
    return Path(path)


def owned_temp_dir(directory: str | Path, name: str) -> Path:
    """A new directory ``.elmo_bench-tmp.<host>.<pid>.<random>.<name>`` in ``directory``, with its marker file.

    Renaming it onto a final name publishes it (give it :func:`apply_umask` first: mkdtemp makes it 0700)."""
    path = Path(tempfile.mkdtemp(prefix=temp_prefix(), suffix=f".{name}", dir=directory))
    (path / MARKER).write_text(marker_text(os.getpid(), host_tag()), encoding="ascii")
    return path


def mark_as_temporary(path: Path, name: str) -> Path:
    """Turn a directory this program made (e.g. a corrupt cache entry) into an owned temporary of this process,
    by a marker and a rename in the same directory; returns its new path, for :func:`remove_owned`."""
    (path / MARKER).write_text(marker_text(os.getpid(), host_tag()), encoding="ascii")
    target = Path(tempfile.mkdtemp(prefix=temp_prefix(), suffix=f".{name}", dir=path.parent))
    os.rmdir(target)  # mkdtemp chose a free owned name; the rename takes it
    os.rename(path, target)
    return target


def owner(entry: Path) -> int | None:
    """The pid of the process that made ``entry`` if it is an owned temporary made on this host, else None."""
    match = _OWNED.match(entry.name)
    if match is None or match["host"] != host_tag():
        return None
    try:
        mode = entry.lstat().st_mode
    except OSError:
        return None
    pid = int(match["pid"])
    if stat.S_ISREG(mode):
        return pid
    if not stat.S_ISDIR(mode):  # a symlink, a fifo: never ours
        return None
    marker = entry / MARKER
    try:
        if stat.S_ISREG(marker.lstat().st_mode) and marker.read_text(encoding="ascii") == marker_text(pid, match["host"]):
            return pid
    except (OSError, UnicodeDecodeError):
        pass
    return None


def remove_owned(entry: Path) -> bool:
    """Remove an owned temporary (file or marked directory); anything else is left as it is. True if removed."""
    if owner(entry) is None:
        return False
    if entry.is_dir():
        shutil.rmtree(entry, ignore_errors=True)
    else:
        entry.unlink(missing_ok=True)
    return not os.path.lexists(entry)


def remove_stale(directory: str | Path, name: str | None = None) -> list[Path]:
    """Remove the owned temporaries in ``directory`` whose process is gone (see the module's rule); nothing else.

    ``name`` limits the sweep to the temporaries of one final name; None sweeps every owned temporary there.
    Returns what was removed.
    """
    directory = Path(directory)
    if not directory.is_dir():
        return []
    removed = []
    for entry in directory.iterdir():
        match = _OWNED.match(entry.name)
        if match is None or (name is not None and match["name"] != name and not match["name"].startswith(name + ".")):
            continue
        pid = owner(entry)
        if pid is None:
            if match["host"] == host_tag() and not _alive(int(match["pid"])):
                with contextlib.suppress(OSError):  # a directory killed before its marker: removed only if empty
                    if stat.S_ISDIR(entry.lstat().st_mode):
                        entry.rmdir()
                        removed.append(entry)
            continue
        if not _alive(pid) and remove_owned(entry):
            removed.append(entry)
    if removed:
        log.info("removed %d temporaries of interrupted writes in %s", len(removed), directory)
    return removed


@contextlib.contextmanager
def atomic_path(final: str | Path, suffix: str = "") -> Iterator[Path]:
    """Yield a temporary path next to ``final``; on success it is renamed onto ``final``, on error removed."""
    final = Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    remove_stale(final.parent, final.name)
    tmp = owned_temp_file(final.parent, final.name, suffix)
    try:
        yield tmp
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        apply_umask(tmp)
        os.replace(tmp, final)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise named(exc, final) from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def named(exc: OSError, path: str | Path) -> OSError:
    """``exc`` with the file it was about (a write's or flush's OSError, a full disk's ENOSPC, carries none: the
    one line said "a file: No space left on device"): ``path``, the name the user knows, when it lacks one."""
    if exc.filename is not None or exc.errno is None:
        return exc
    return OSError(exc.errno, exc.strerror or os.strerror(exc.errno), str(path))


def atomic_write_text(final: str | Path, text: str) -> None:
    with atomic_path(final) as tmp:
        tmp.write_text(text, encoding="utf-8")


def atomic_write_bytes(final: str | Path, data: bytes) -> None:
    with atomic_path(final) as tmp:
        tmp.write_bytes(data)


@contextlib.contextmanager
def held_lock(path: str | Path, what: str) -> Iterator[Path]:
    """Hold an exclusive ``flock`` on ``path`` for the block: writers of one thing (a sharded cache entry, a
    suite.json) take turns instead of undoing each other's work. While another process holds it, log once that
    this one waits for that pid (``what`` names the thing), then wait. The file is made if absent and kept after
    (removing a lock file would let a waiter and a newcomer hold two locks at once), emptied of the pid on release;
    the kernel frees the lock when its process ends however it ends."""
    path = Path(path)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)  # the umask applies
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
            log.info("%s: waiting for pid %s, which is writing it (lock %s)", what, holder, path)
            fcntl.flock(fd, fcntl.LOCK_EX)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        try:
            yield path
        finally:
            os.ftruncate(fd, 0)
    finally:
        os.close(fd)
