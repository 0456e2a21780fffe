"""``experiment=probe_pos``'s sweep key ``row``: ``layer_<k>`` (the engine's POS head on layer k alone) or ``learned``
(the learned mix), and ``row=all``, every layer of the run's encoder and the learned mix, expanded here from the
encoder's layer count before Hydra launches (run.py, ``elmo-bench plan`` and ``config`` alike), since no static
Hydra list can hold it (as ``mix=all_modes``, elmo_bench.commands.modes). The old spelling ``probe=layer_0`` is
refused with one line naming ``row=``: ``probe`` names a Probe now (``python run.py probe=<name>``).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from elmo_bench.base.errors import ConfigError
from elmo_bench.commands.main_args import _override_positions
from elmo_bench.commands.modes import encoder_num_layers

#: the experiment whose sweep key ``row`` is
ROWS_EXPERIMENT = "experiment=probe_pos"
#: the value that stands for every layer and the learned mix
ALL_ROWS = "all"


def refuse_old_key(overrides: Sequence[str]) -> None:
    """``experiment=probe_pos probe=layer_0,...``: one line naming ``row=``."""
    if ROWS_EXPERIMENT in overrides:
        old = next((o for o in overrides if o.split("=", 1)[0] == "probe"), None)
        if old is not None:
            raise ConfigError(f"config: {old} with experiment=probe_pos: its sweep key is row= now (e.g. "
                              f"row=layer_0,layer_1,learned; row=all: every layer of the encoder and the learned "
                              f"mix); probe= names a probe run (python run.py probe=<name>, docs/probes.md)")


def rows_of(num_layers: int) -> str:
    """``layer_0,...,layer_<L>,learned``."""
    return ",".join([*(f"layer_{k}" for k in range(num_layers)), "learned"])


def expand_rows(overrides: Sequence[str], compose: Callable[[list[str]], Any]) -> list[str]:
    """``overrides`` with ``row=all`` (given, or experiment=probe_pos's default) replaced by every row of the
    encoder; ``compose(overrides)`` makes the RunConfig that names the encoder."""
    refuse_old_key(overrides)
    if ROWS_EXPERIMENT not in overrides:
        return list(overrides)
    given = [o for o in overrides if o.split("=", 1)[0] == "row"]
    if given and given[-1] != f"row={ALL_ROWS}":
        return list(overrides)
    rest = [o for o in overrides if o.split("=", 1)[0] != "row"]
    fixed = [o for o in rest if "," not in o.split("=", 1)[-1] or o.startswith(("probe.", "+"))]
    run = compose([*fixed, "row=learned"])
    return [*rest, f"row={rows_of(encoder_num_layers(run.encoder, run.runtime.amp))}"]


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
