"""wandb logging (offline by default, online, or disabled) behind one small interface.

Quiet by default: an offline run's wandb messages (header, sync hints, run history and summary; ~23 lines per run)
go to the run's log file (Hydra's ``run.log``), not the terminal, through wandb's own switch: ``show_info=False``
with ``wandb.termsetup``'s fallback logger, which receives every message wandb would have printed. wandb's warnings
and errors still reach stderr. ``logger=online`` is unchanged (its run link matters on the terminal), and a verbose
run (``-v`` / ``hydra.verbose``, i.e. the ``elmo_bench`` logger at DEBUG) prints everything as before.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from elmo_bench.engine.run_config import RunConfig

MODES = ("offline", "online", "disabled")
#: receives wandb's terminal messages in quiet mode; writes to the run's log file only (never to the console)
WANDB_LOG = logging.getLogger("elmo_bench.wandb_terminal")
LOG_FILE = "run.log"


def verbose_logging() -> bool:
    """True under ``hydra.verbose=true`` (or ``hydra.verbose=[elmo_bench]``): the elmo_bench logger at DEBUG."""
    return logging.getLogger("elmo_bench").isEnabledFor(logging.DEBUG)


def _file_handlers(run_dir: Path) -> list[logging.Handler]:
    """Hydra's handler for the run's log file (``run_dir/run.log``); outside Hydra, a new one for that file."""
    here = run_dir.resolve()
    handlers = [h for h in logging.getLogger().handlers
                if isinstance(h, logging.FileHandler) and Path(h.baseFilename).parent == here]
    if handlers:
        return handlers
    run_dir.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(run_dir / LOG_FILE, encoding="utf-8")
    handler.setFormatter(logging.Formatter("[%(asctime)s][%(name)s][%(levelname)s] - %(message)s"))  # Hydra's
    return [handler]


class RunLogger:
    """One run's wandb run: ``run.logger``'s mode and project, named after ``run_dir``, its config the run's resolved
    config (``run.config()``, what run.json stores)."""

    def __init__(self, run: RunConfig, run_dir: Path, verbose: bool | None = None) -> None:
        mode = run.logger.mode
        if mode not in MODES:
            raise ValueError(f"logger.mode expected one of {MODES}, found {mode!r}")
        self.run = None
        self._quiet = mode == "offline" and not (verbose_logging() if verbose is None else verbose)
        self._own_handlers: list[logging.Handler] = []
        if mode != "disabled":
            import wandb

            if self._quiet:
                self._to_log_file(wandb, run_dir)
            else:  # wandb's terminal state is process-wide: an earlier quiet run that failed must not silence this one
                wandb.termsetup(wandb.setup().settings, None)
            try:
                self.run = wandb.init(mode=mode, dir=str(run_dir), project=run.logger.project, name=run_dir.name,
                                      config=run.config(), reinit="finish_previous")
            except BaseException:
                self._restore_terminal()
                raise

    def _to_log_file(self, wandb: Any, run_dir: Path) -> None:
        """Send wandb's informational terminal output to the run's log file (wandb's own fallback-logger switch)."""
        handlers = _file_handlers(run_dir)
        self._own_handlers = [h for h in handlers if h not in logging.getLogger().handlers]
        WANDB_LOG.handlers = handlers
        WANDB_LOG.setLevel(logging.INFO)
        WANDB_LOG.propagate = False  # the console handler must not see these
        base = wandb.setup().settings  # the process's settings (WANDB_SILENT etc. from the environment)
        quiet = wandb.Settings(silent=base.silent, show_info=False, show_warnings=base.show_warnings,
                               show_errors=base.show_errors)
        wandb.termsetup(quiet, WANDB_LOG)

    def _restore_terminal(self) -> None:
        """Undo ``_to_log_file`` (wandb's terminal settings are process-wide; the next run may be verbose/online)."""
        if not self._quiet:
            return
        import wandb

        wandb.termsetup(wandb.setup().settings, None)
        for handler in self._own_handlers:
            handler.close()
        WANDB_LOG.handlers = []
        self._quiet = False

    def log(self, values: dict[str, Any], step: int | None = None) -> None:
        if self.run is not None:
            self.run.log(values, step=step)

    def summary(self, values: dict[str, Any]) -> None:
        if self.run is not None:
            self.run.summary.update(values)

    def finish(self) -> None:
        if self.run is not None:
            try:
                self.run.finish()  # its sync hint and summary still go to the log file
            finally:
                self._restore_terminal()
