"""The report's table type and its cells: a ``Table`` (rows of strings for Markdown and LaTeX, ``records`` for
report.json), mean ± sample std over seeds (``Stat``), and the formatting every table shares. Missing cells are
"—", never zeros."""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any, Iterable

MISSING = "—"


ENCODER_BLOCKS_NOTE = ("Encoders side by side: one row block per encoder (Encoder column; an encoder with fewer layers "
                       "leaves the deeper layer columns missing); the paper's rows (Encoder \"paper\") are the biLM's.")


@dataclass

class Table:
    title: str
    header: list[str]
    rows: list[list[str]]
    notes: list[str] = field(default_factory=list)
    key: str = ""                                        # report.json name, e.g. "table1"
    records: list[dict[str, Any]] | None = None          # machine-readable rows (else header → cell dicts)
    extra: dict[str, Any] = field(default_factory=dict)  # more machine-readable content (e.g. the paper's numbers)

    def as_json(self) -> dict[str, Any]:
        rows = self.records if self.records is not None else [dict(zip(self.header, r)) for r in self.rows]
        return {"title": self.title, "header": self.header, "rows": rows, "notes": self.notes, **self.extra}


@dataclass

class Stat:
    mean: float
    std: float | None
    n: int


def stat_json(s: Stat | None) -> dict[str, Any]:
    """{"mean", "std", "n"}; mean and std null when missing (std null for one seed)."""
    return {"mean": None, "std": None, "n": 0} if s is None else {"mean": s.mean, "std": s.std, "n": s.n}


def stat(values: Iterable[float | None]) -> Stat | None:
    """Mean and sample standard deviation (None for one value) of the values that exist."""
    found = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    if not found:
        return None
    return Stat(statistics.fmean(found), statistics.stdev(found) if len(found) > 1 else None, len(found))


def fmt(value: float | None, digits: int = 2) -> str:
    return MISSING if value is None else f"{value:.{digits}f}"


def fmt_stat(s: Stat | None, digits: int = 2) -> str:
    if s is None:
        return MISSING
    return fmt(s.mean, digits) if s.std is None else f"{s.mean:.{digits}f} ± {s.std:.{digits}f}"


def relative_increase(baseline: float, elmo: float) -> float:
    """The paper's relative error reduction in percent: (elmo - baseline) / (100 - baseline) x 100."""
    if baseline >= 100.0:
        raise ValueError(f"relative increase: baseline {baseline} leaves no error to reduce")
    return 100.0 * (elmo - baseline) / (100.0 - baseline)


def _increase(base: float | None, elmo: float | None) -> tuple[str, str]:
    if base is None or elmo is None:
        return MISSING, MISSING
    rel = fmt(relative_increase(base, elmo), 1) + "%" if base < 100.0 else MISSING
    return f"{elmo - base:+.2f}", rel


def _mean(s: Stat | None) -> float | None:
    return None if s is None else s.mean


def _paper_pm(value: float, pm: str | None, digits: int = 2) -> str:
    return fmt(value, digits) if pm is None else f"{value:.{digits}f} ± {pm}"


def _float(text: str | None) -> float | None:
    return None if text is None else float(text)
