"""wandb logging (offline by default, online, or disabled) behind one small interface."""
from __future__ import annotations

from pathlib import Path
from typing import Any

MODES = ("offline", "online", "disabled")


class RunLogger:
    def __init__(self, mode: str, run_dir: Path, project: str, name: str, config: dict[str, Any]) -> None:
        if mode not in MODES:
            raise ValueError(f"logger.mode expected one of {MODES}, found {mode!r}")
        self.run = None
        if mode != "disabled":
            import wandb

            self.run = wandb.init(mode=mode, dir=str(run_dir), project=project, name=name, config=config,
                                  reinit="finish_previous")

    def log(self, values: dict[str, Any], step: int | None = None) -> None:
        if self.run is not None:
            self.run.log(values, step=step)

    def summary(self, values: dict[str, Any]) -> None:
        if self.run is not None:
            self.run.summary.update(values)

    def finish(self) -> None:
        if self.run is not None:
            self.run.finish()
