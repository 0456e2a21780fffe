"""``experiment=probe_pos``'s sweep key ``row``: ``layer_<k>`` (the engine's POS head on layer k alone, k the layer's
index in the model) or ``learned`` (the learned mix), and two values expanded here from the run's encoder before
Hydra launches (run.py, ``elmo-bench plan`` and ``config`` alike), since no static Hydra list can hold them (as
``mix=all_modes``, elmo_bench.commands.modes):

- ``row=all``: every layer the encoder gives (all of the model's, or those ``encoder.layers`` keeps) and the
  learned mix;
- ``row=every:K``: every K-th of those layers and the last (the rule of ``encoder.layers=every:K``), and the
  learned mix of all of them: a 33-layer model at ``every:8`` is rows layer_0, layer_8, ..., layer_32, learned.

The old spelling ``probe=layer_0`` is refused with one line naming ``row=``: ``probe`` names a Probe now
(``python run.py probe=<name>``).
"""
from __future__ import annotations

import re
from typing import Any, Callable, Sequence

from elmo_bench.base.errors import ConfigError
from elmo_bench.commands.main_args import _override_positions
from elmo_bench.commands.modes import encoder_layer_ids, strided

#: the experiment whose sweep key ``row`` is
ROWS_EXPERIMENT = "experiment=probe_pos"
#: the value that stands for every layer and the learned mix
ALL_ROWS = "all"
#: ``row=every:K``: every K-th layer, the last, and the learned mix
_EVERY = re.compile(r"^every:(\d+)$")


def refuse_old_key(overrides: Sequence[str]) -> None:
    """``experiment=probe_pos probe=layer_0,...``: one line naming ``row=``."""
    if ROWS_EXPERIMENT in overrides:
        old = next((o for o in overrides if o.split("=", 1)[0] == "probe"), None)
        if old is not None:
            raise ConfigError(f"config: {old} with experiment=probe_pos: its sweep key is row= now (e.g. "
                              f"row=layer_0,layer_1,learned; row=all: every layer of the encoder and the learned "
                              f"mix); probe= names a probe run (python run.py probe=<name>, docs/probes.md)")


def rows_of(layers: int | Sequence[int]) -> str:
    """``layer_<k>,...,learned`` for each of ``layers`` (the model's indices; a count n: 0..n-1)."""
    ids = range(layers) if isinstance(layers, int) else layers
    return ",".join([*(f"layer_{k}" for k in ids), "learned"])


def row_stride(value: str) -> int | None:
    """The stride a ``row=`` value asks the expansion for: None for ``all``, K for ``every:K``; one ConfigError line
    for ``every:`` with no K >= 1."""
    if value == ALL_ROWS:
        return None
    match = _EVERY.match(value)
    if match is None or int(match.group(1)) < 1:
        raise ConfigError(f"config: row expected all, every:K (K >= 1), layer_<k> or learned, found {value!r}")
    return int(match.group(1))


def _expanded(value: str) -> bool:
    """Whether a ``row=`` value is one this module expands (``all``, ``every...``), not a row or a list of them."""
    return value == ALL_ROWS or value.startswith("every")


def expand_rows(overrides: Sequence[str], compose: Callable[[list[str]], Any]) -> list[str]:
    """``overrides`` with ``row=all`` (given, or experiment=probe_pos's default) replaced by every row of the
    encoder, ``row=every:K`` by every K-th, the last and learned; ``compose(overrides)`` makes the RunConfig that
    names the encoder."""
    refuse_old_key(overrides)
    if ROWS_EXPERIMENT not in overrides:
        return list(overrides)
    given = [o.split("=", 1)[1] for o in overrides if o.split("=", 1)[0] == "row"]
    if given and not _expanded(given[-1]):
        return list(overrides)
    stride = row_stride(given[-1] if given else ALL_ROWS)
    rest = [o for o in overrides if o.split("=", 1)[0] != "row"]
    fixed = [o for o in rest if "," not in o.split("=", 1)[-1] or o.startswith(("probe.", "+"))]
    run = compose([*fixed, "row=learned"])
    return [*rest, f"row={rows_of(strided(encoder_layer_ids(run.encoder, run.runtime.amp), stride))}"]


def with_rows(argv: Sequence[str], compose: Callable[[list[str]], Any]) -> list[str]:
    """run.py's argv (program name first, as main_args made it) with ``row=all`` expanded (:func:`expand_rows`;
    ``compose(overrides)``: a job's RunConfig, composed without the door's checks)."""
    args = list(argv[1:])
    positions = _override_positions(args)
    overrides = [args[i] for i in positions]
    refuse_old_key(overrides)
    if ROWS_EXPERIMENT not in overrides:
        return list(argv)
    expanded = expand_rows(overrides, compose)
    rest = [a for i, a in enumerate(args) if i not in set(positions)]
    return [argv[0], *rest[:positions[0]], *expanded, *rest[positions[0]:]]
