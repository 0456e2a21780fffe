"""A probe record's settings, whichever version wrote it: a probe run's (``python run.py probe=<name>``, issue 44)
keeps them under ``config.probe``; the probe commands' records before it kept their flags flat in ``config``
(``max_epochs``, ``hidden``, ``probe``). The report reads both through :func:`probe_settings`."""
from __future__ import annotations

from typing import Any

from elmo_bench.records.run_record import RunRecord


def probe_settings(record: RunRecord) -> dict[str, Any]:
    """The probe's settings of ``record`` (see the module docstring); {} for a record without a config."""
    config = record.config or {}
    probe = config.get("probe")
    return dict(probe) if isinstance(probe, dict) else dict(config)
