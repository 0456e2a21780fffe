"""The biLM architecture as described by a bilm-tf ``options.json``.

Only the keys that define the architecture are read; every other key (training settings such as ``n_epochs``)
is kept untouched in ``extra`` so that a save → load round trip writes the same file back.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from elmo_bench.base.atomic import atomic_write_text
from elmo_bench.base.errors import DataError


@dataclass(frozen=True)
class BiLMOptions:
    filters: tuple[tuple[int, int], ...]
    n_highway: int
    char_dim: int
    n_characters: int
    max_characters_per_token: int
    activation: str
    n_layers: int
    lstm_dim: int
    projection_dim: int
    cell_clip: float | None
    proj_clip: float | None
    use_skip_connections: bool
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def n_filters(self) -> int:
        return sum(n for _, n in self.filters)

    @property
    def output_dim(self) -> int:
        """Width of every layer representation: ``2 * projection_dim``."""
        return 2 * self.projection_dim

    @classmethod
    def from_dict(cls, raw: dict[str, Any], source: str = "options") -> "BiLMOptions":
        def get(path: str, kind: type | tuple[type, ...], default: Any = ...):
            node: Any = raw
            for part in path.split("."):
                if not isinstance(node, dict) or part not in node:
                    if default is not ...:
                        return default
                    raise DataError(f"{source}: missing key '{path}' (expected {_kind_name(kind)})")
                node = node[part]
            if node is None and default is None:
                return None
            if not isinstance(node, kind) or isinstance(node, bool) and kind in (int, float, (int, float)):
                raise DataError(f"{source}: key '{path}' expected {_kind_name(kind)}, found {node!r}")
            return node

        filters = get("char_cnn.filters", list)
        if not filters or not all(isinstance(f, list) and len(f) == 2 and all(isinstance(v, int) for v in f) for f in filters):
            raise DataError(f"{source}: key 'char_cnn.filters' expected a list of [width, count] pairs, found {filters!r}")
        activation = get("char_cnn.activation", str)
        if activation not in ("relu", "tanh"):
            raise DataError(f"{source}: key 'char_cnn.activation' expected 'relu' or 'tanh', found {activation!r}")
        for key, low in (("lstm.n_layers", 1), ("lstm.dim", 1), ("lstm.projection_dim", 1), ("char_cnn.n_highway", 0),
                         ("char_cnn.embedding.dim", 1), ("char_cnn.max_characters_per_token", 1)):
            if get(key, int) < low:
                raise DataError(f"{source}: key '{key}' expected an integer >= {low}, found {get(key, int)}")
        if any(w < 1 or n < 1 for w, n in filters):
            raise DataError(f"{source}: key 'char_cnn.filters' expected positive [width, count] pairs, found {filters!r}")
        return cls(
            filters=tuple((int(w), int(n)) for w, n in filters),
            n_highway=get("char_cnn.n_highway", int),
            char_dim=get("char_cnn.embedding.dim", int),
            n_characters=get("char_cnn.n_characters", int),
            max_characters_per_token=get("char_cnn.max_characters_per_token", int),
            activation=activation,
            n_layers=get("lstm.n_layers", int),
            lstm_dim=get("lstm.dim", int),
            projection_dim=get("lstm.projection_dim", int),
            cell_clip=_opt_float(get("lstm.cell_clip", (int, float), None)),
            proj_clip=_opt_float(get("lstm.proj_clip", (int, float), None)),
            use_skip_connections=bool(get("lstm.use_skip_connections", bool, False)),
            extra=raw,
        )

    @classmethod
    def load(cls, path: str | Path) -> "BiLMOptions":
        path = Path(path)
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise DataError(f"{path}: options file not found") from None
        except json.JSONDecodeError as exc:
            raise DataError(f"{path}: line {exc.lineno}: not valid JSON ({exc.msg})") from None
        if not isinstance(raw, dict):
            raise DataError(f"{path}: expected a JSON object, found {type(raw).__name__}")
        return cls.from_dict(raw, source=str(path))

    def to_dict(self) -> dict[str, Any]:
        """The options.json content: the architecture keys overwrite those of ``extra``."""
        out = json.loads(json.dumps(self.extra)) if self.extra else {}
        cnn = out.setdefault("char_cnn", {})
        cnn.update(
            filters=[[w, n] for w, n in self.filters], n_highway=self.n_highway, n_characters=self.n_characters,
            max_characters_per_token=self.max_characters_per_token, activation=self.activation,
        )
        cnn.setdefault("embedding", {})["dim"] = self.char_dim
        lstm = out.setdefault("lstm", {})
        lstm.update(
            n_layers=self.n_layers, dim=self.lstm_dim, projection_dim=self.projection_dim,
            cell_clip=self.cell_clip, proj_clip=self.proj_clip, use_skip_connections=self.use_skip_connections,
        )
        return out

    def save(self, path: str | Path) -> None:
        atomic_write_text(Path(path), json.dumps(self.to_dict(), indent=2) + "\n")


def _opt_float(value: Any) -> float | None:
    return None if value is None else float(value)


def _kind_name(kind: type | tuple[type, ...]) -> str:
    if isinstance(kind, tuple):
        return " or ".join(k.__name__ for k in kind)
    return kind.__name__
