"""One process per run directory: two runs started into the same directory would both train and both write.

The lock is ``flock`` on ``<run_dir>/.elmo_bench.lock``, which holds the owner's pid for the error message. The
kernel releases a ``flock`` when its process ends however it ends (``kill -9`` too), so the lock of a dead process
is simply taken over: there is no stale lock to clean up. A process that ends cleanly empties the file again, so a
run that was turned away (busy, or the directory made by another configuration) leaves its bytes as they were. (``flock`` is advisory and local: on a network file
system that does not support it, it locks nothing more than before.)
"""
from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import shutil
from pathlib import Path
from typing import Iterator

from elmo_bench.base.errors import ConfigError, UserError
from elmo_bench.engine.run_records import RUN_FILE

log = logging.getLogger(__name__)
LOCK_FILE = ".elmo_bench.lock"


def _holder(fd: int) -> str:
    os.lseek(fd, 0, os.SEEK_SET)
    text = os.read(fd, 200).decode("ascii", "replace").split()
    return text[0] if text and text[0].isdigit() else "unknown"


@contextlib.contextmanager
def run_dir_lock(run_dir: str | Path) -> Iterator[Path]:
    """Hold ``run_dir``'s lock for the block; ConfigError ``DIR is in use by pid N`` when another process holds it."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / LOCK_FILE
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    held = False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            held = True
        except BlockingIOError:
            raise ConfigError(f"{run_dir} is in use by pid {_holder(fd)} (a run of the same directory is going on; "
                              f"wait for it, or use another hydra.run.dir)") from None
        previous = _holder(fd)
        if previous not in ("unknown", str(os.getpid())):
            log.info("%s: taking over the lock of pid %s, which is gone", run_dir, previous)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        yield path
    finally:
        if held:
            os.ftruncate(fd, 0)  # no pid left behind by a process that is gone
        os.close(fd)  # closing releases the flock


#: what a run writes into its directory before it computes (removed again when bad input stops it);
#: ".hydra": Hydra's records (elmo_bench.commands.hydra_records.RECORD_DIR, written when the run claims it)
STARTED_FILES = (RUN_FILE, LOCK_FILE, "run.log")
HYDRA_RECORDS = ".hydra"


def remove_new_run_dir(run_dir: Path) -> None:
    """Remove a run directory this run created, when it holds only what the run wrote before it computed (run.json,
    the lock, the log, Hydra's records): bad input leaves nothing behind. Anything else: kept."""
    if not run_dir.is_dir():
        return
    names = {p.name for p in run_dir.iterdir()}
    if not names <= {*STARTED_FILES, HYDRA_RECORDS}:
        return
    if (run_dir / HYDRA_RECORDS).is_dir():
        shutil.rmtree(run_dir / HYDRA_RECORDS)
    for name in STARTED_FILES:
        (run_dir / name).unlink(missing_ok=True)
    run_dir.rmdir()


@contextlib.contextmanager
def run_dir_lock_or_undo(run_dir: Path) -> Iterator[Path]:
    """:func:`run_dir_lock`, and when bad input (a UserError) stops the run inside the block, what this run added
    goes again: the directory, when it found it new (absent, or empty as Hydra makes it) and it holds only what a run
    writes before computing (:func:`remove_new_run_dir`); else the lock file, when there was none before. A run
    turned away by another's lock removes nothing."""
    new = not run_dir.exists() or not any(run_dir.iterdir())
    locked, had_lock = False, (run_dir / LOCK_FILE).exists()
    try:
        with run_dir_lock(run_dir) as path:
            locked = True
            yield path
    except UserError:
        if new and locked:
            remove_new_run_dir(run_dir)
        elif locked and not had_lock:
            (run_dir / LOCK_FILE).unlink(missing_ok=True)
        raise
