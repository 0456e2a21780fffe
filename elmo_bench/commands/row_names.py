"""The rows of ``experiment=probe_pos``, read by its YAML's resolvers (``${row_mode:${row}}``,
``${row_layer:${row}}``): ``layer_<k>`` is the engine's POS head on layer k alone, ``learned`` the learned mix.
Imports nothing of the commands, so the Hydra glue (elmo_bench.commands.hydra_setup) can register them."""
from __future__ import annotations

from elmo_bench.base.errors import ConfigError


def row_mode(row: str) -> str:
    """The mix mode of a row: ``layer`` for ``layer_<k>``, ``learned`` for ``learned``; one line otherwise."""
    if row == "learned":
        return "learned"
    row_layer(row)
    return "layer"


def row_layer(row: str) -> int | None:
    """The layer of a row (``layer_3`` → 3; ``learned`` → None); one ConfigError line for another value."""
    if row == "learned":
        return None
    name, _, index = str(row).partition("_")
    if name != "layer" or not index.isdigit():
        raise ConfigError(f"config: row expected layer_<k> (k = a layer's index in the model), learned, all or every:K, "
                          f"found {row!r}")
    return int(index)
