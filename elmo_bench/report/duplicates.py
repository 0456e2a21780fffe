"""Records of one run (equal identities, elmo_bench.report.experiments.run_key) kept once: the one that says more
when they agree, none of them when they disagree in what the tables read (the metrics, the mix weights, the
probes' extras both records carry), each such set named by its first difference."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from elmo_bench.report.experiments import run_key

#: a collected run (elmo_bench.report.collect.Run: ``record``, ``metrics``, ``mixes``, ``path``), named here by its
#: fields only, so that this module and the collector do not import each other
Run = Any


#: what says how a probe's numbers were computed, not what they are, as :func:`_difference` names the place: two
#: records of one experiment may differ there (``probe=ridge``'s ``probe.stream=true`` and ``false`` give the same
#: numbers by design, in batches of up to ``probe.batch_tokens`` tokens or in one)
HOW_COMPUTED = frozenset({"printed.stream", "printed.largest_batch", "probe.settings.stream",
                          "probe.settings.batch_tokens"})


def _difference(where: str, a: Any, b: Any) -> str | None:
    """The first place (``metrics.test.f1``) where two JSON values differ, with both values; None when equal (a
    place in :data:`HOW_COMPUTED` is never a difference)."""
    if where in HOW_COMPUTED:
        return None
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            found = _difference(f"{where}.{key}", a.get(key), b.get(key))
            if found:
                return found
        return None
    return None if a == b else f"{where}: {a!r} vs {b!r}"


def disagreement(kept: Run, other: Run) -> str | None:
    """Where two records of one experiment (one signature) differ in what the tables read: the metrics, the mix
    weights, and the probes' extras both records carry (an older record without a newer key still agrees; how a
    probe's numbers were computed, :data:`HOW_COMPUTED`, is not compared)."""
    shared = sorted(set(kept.record.extra) & set(other.record.extra))
    for name, a, b in (("metrics", kept.metrics, other.metrics), ("mixes", kept.mixes, other.mixes),
                       *((key, kept.record.extra[key], other.record.extra[key]) for key in shared)):
        found = _difference(name, a, b)
        if found:
            return found
    return None


def _fields(run: Run) -> int:
    """How much a record says: its non-empty top-level fields (a newer format adds some)."""
    return sum(1 for value in run.record.to_dict().values() if value not in (None, {}, [], ""))


@dataclass
class Disagreement:
    """Records of one experiment and one seed (equal identities) whose numbers differ: none of them is shown."""

    paths: list[Path]
    where: str                  # the first differing number, ``metrics.test.f1: 1.0 vs 2.0``
    shown: list[str] = field(default_factory=list)   # the paths below the directory reported (report.json)

    def line(self) -> str:
        files = " and ".join(str(p) for p in self.paths)
        return (f"warning: {files} are records of one run (one experiment, one seed) that disagree ({self.where}, "
                f"in that order); none of them is shown: keep the one you trust")


def keep_once(runs: Sequence[Run]) -> tuple[list[Run], int, list[Disagreement]]:
    """Each run once (records with equal identities, elmo_bench.report.experiments.run_key), how many duplicates
    were dropped, and the records of one run that disagree. Records that agree keep the one that says more (an
    older-format record beside a newer one: the newer), then the first path; records that disagree are all set
    aside, never averaged and never chosen between (which survived would depend on the directory names)."""
    by_key: dict[str, list[Run]] = {}
    for run in runs:
        by_key.setdefault(run_key(run.record), []).append(run)
    kept: list[Run] = []
    disagreeing: list[Disagreement] = []
    for members in by_key.values():
        found = next(((first, other, where) for first in members for other in members
                      if (where := disagreement(first, other))), None)
        if found is not None:
            disagreeing.append(Disagreement([r.path for r in members], found[2]))
            continue
        kept.append(max(members, key=_fields))
    return kept, len(runs) - len(kept) - sum(len(d.paths) for d in disagreeing), disagreeing
