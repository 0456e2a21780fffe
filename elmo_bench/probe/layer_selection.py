"""``--layers 0,2``: which encoder layers a probe command trains on (default: every layer)."""
from __future__ import annotations


def layer_indices(spec: str | None, count: int, prog: str) -> list[int]:
    """Indices named by ``spec`` (comma-separated), each in 0..count−1; a usage error (exit 2) otherwise."""
    if spec is None:
        return list(range(count))
    try:
        chosen = [int(v) for v in spec.split(",") if v.strip()]
    except ValueError:
        chosen = [-1]
    if not chosen or any(not 0 <= k < count for k in chosen):
        raise SystemExit(f"{prog}: --layers expects comma-separated indices in 0..{count - 1}, found {spec!r}")
    return chosen
