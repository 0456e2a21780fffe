"""``plan``'s plain-text tables (task rows, probe rows): one layout for both."""
from __future__ import annotations

from typing import Sequence


def aligned(table: Sequence[Sequence[str]], left: int = 4) -> list[str]:
    """``table`` (its head first) as lines: the first ``left`` columns left-aligned, the rest right-aligned, a rule
    of dashes under the head."""
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    lines = ["  ".join(c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths)))
             for row in table]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return lines
