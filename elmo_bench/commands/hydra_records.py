"""What Hydra would write into a run directory before the run starts, written only once the run owns it.

Hydra writes ``.hydra/config.yaml``, ``hydra.yaml``, ``overrides.yaml`` and opens the job's log (``run.log``) before
the task function runs, i.e. before the run directory's lock (engine.run_lock) and identity check (engine.run_identity)
could turn the run away: a second run refused from a finished run's directory had already rewritten its Hydra record
with settings that run never used. So conf/config.yaml sets ``hydra.output_subdir: null`` and gives the job's log
handler as :class:`HeldFileHandler`; run.py snapshots the three records (:class:`HydraRecord`) and the engine calls
:meth:`HydraRecord.claim` once the lock and the identity check passed: the same three files (same text as Hydra's),
and the log file gets every line since the job started. A run turned away (or one skipped as already done) writes
neither.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from elmo_bench.base.atomic import atomic_write_text

#: Hydra's own subdirectory name for the records (hydra.output_subdir's default)
RECORD_DIR = ".hydra"
#: log records held before the run owns its directory (a run reaches its claim after a few dozen lines)
MAX_HELD = 10_000


class HeldFileHandler(logging.FileHandler):
    """A FileHandler that opens its file only when let through (:func:`release_log`; the method is not called
    ``release``: that is logging.Handler's lock); until then it holds the records, and drops them if never let
    through (the run was turned away: the other run's log stays as it was)."""

    def __init__(self, filename: str, mode: str = "a", encoding: str | None = None, delay: bool = True,
                 errors: str | None = None) -> None:
        super().__init__(filename, mode, encoding, delay=True, errors=errors)
        self.held: list[logging.LogRecord] | None = []

    def emit(self, record: logging.LogRecord) -> None:
        if self.held is None:
            super().emit(record)
        elif len(self.held) < MAX_HELD:
            self.held.append(record)

    def let_through(self) -> None:
        """Write the held records, and every later one, to the file."""
        held, self.held = self.held or [], None
        for record in held:
            super().emit(record)


def release_log(run_dir: Path, opened_in: Path | None = None) -> None:
    """Release the held log handlers (the root logger's) whose file is in ``run_dir``; those whose file is in
    ``opened_in`` (Hydra's output directory, when the run went on in another: its directory of the older naming
    scheme) are moved to ``run_dir`` first."""
    here = Path(run_dir).resolve()
    there = Path(opened_in).resolve() if opened_in is not None else here
    for handler in logging.getLogger().handlers:
        if isinstance(handler, HeldFileHandler) and Path(handler.baseFilename).parent in (here, there):
            if handler.held is not None:  # not opened yet (delay=True): its file can still be another
                handler.baseFilename = str(here / Path(handler.baseFilename).name)
            handler.let_through()


@dataclass(frozen=True)
class HydraRecord:
    """The text of Hydra's three records of a job, taken when the job starts (before anything changes its config)."""

    config_yaml: str
    hydra_yaml: str
    overrides_yaml: str
    output_dir: str | None = None  # where Hydra opened the job's log (the run may go on elsewhere)

    @classmethod
    def of(cls, task_cfg: Any, hydra_cfg: Any) -> "HydraRecord":
        """``task_cfg``: the job's config as the task function got it; ``hydra_cfg``: HydraConfig's config (the
        ``hydra`` node only), as Hydra's run_job saves them."""
        from omegaconf import OmegaConf

        return cls(OmegaConf.to_yaml(task_cfg), OmegaConf.to_yaml(hydra_cfg),
                   OmegaConf.to_yaml(hydra_cfg.hydra.overrides.task), str(hydra_cfg.hydra.runtime.output_dir))

    def claim(self, run_dir: Path) -> None:
        """The run owns ``run_dir`` now: write ``.hydra/`` (atomically) and open the log."""
        records = Path(run_dir) / RECORD_DIR
        for name, text in (("config.yaml", self.config_yaml), ("hydra.yaml", self.hydra_yaml),
                           ("overrides.yaml", self.overrides_yaml)):
            atomic_write_text(records / name, text)
        release_log(Path(run_dir), Path(self.output_dir) if self.output_dir else None)
