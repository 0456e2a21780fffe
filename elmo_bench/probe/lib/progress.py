"""Progress of a probe's long work (issue 56 item 11). ``probe=erasure`` fitted for half an hour on MiniLM between
its cache lines and its JSON without a word, and ``probe=conditional`` said only which (baseline, layer) it began.
:class:`Steps` counts a probe's steps: a tqdm bar when the run's ``progress`` is on, and, bar or not, a log line at
least every :data:`EVERY` seconds saying what is done, what it is doing and what is left (from a timer thread, so a
single step of many minutes still reports), then one line when all are done."""
from __future__ import annotations

import logging
import threading
import time
from typing import Any

from tqdm import tqdm

log = logging.getLogger(__name__)
#: the most seconds between two progress lines
EVERY = 60.0


def duration(seconds: float) -> str:
    """``75`` → ``1 min 15 s``; under a minute ``42 s``."""
    minutes, rest = divmod(int(round(seconds)), 60)
    return f"{minutes} min {rest} s" if minutes else f"{rest} s"


class Steps:
    """``total`` steps of ``what`` (e.g. ``probe erasure``): :meth:`now` names the step under way (after ``scope``,
    e.g. the probe family a loop is in), :meth:`advance` marks one done; used as a context manager (the timer stops
    at its end)."""

    def __init__(self, total: int, what: str, progress: bool, every: float | None = None) -> None:
        self.total, self.what, self.every = max(int(total), 1), what, EVERY if every is None else every
        self.done, self.doing, self.scope, self.started = 0, "starting", "", time.monotonic()
        self.bar = tqdm(total=self.total, desc=what, unit="step", disable=not progress)
        self._stop = threading.Event()
        self._timer = threading.Thread(target=self._beat, name=f"progress of {what}", daemon=True)

    def __enter__(self) -> "Steps":
        self._timer.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._timer.join()
        self.bar.close()
        if exc[0] is None:
            log.info("%s: all %d steps done in %s", self.what, self.total, duration(time.monotonic() - self.started))

    def now(self, doing: str) -> None:
        """Name the step under way (the bar's postfix and the next line)."""
        self.doing = f"{self.scope} {doing}" if self.scope else doing
        self.bar.set_postfix_str(self.doing, refresh=False)

    def advance(self) -> None:
        self.done += 1
        self.bar.update(1)

    def line(self) -> str:
        """What is done, what is under way and what is left, with the time so far and an estimate of the rest."""
        elapsed = time.monotonic() - self.started
        left = f", about {duration(elapsed / self.done * (self.total - self.done))} left" if self.done else ""
        return (f"{self.what}: {self.done} of {self.total} steps done, now {self.doing} ({duration(elapsed)} "
                f"elapsed{left})")

    def _beat(self) -> None:
        while not self._stop.wait(self.every):
            log.info(self.line())
