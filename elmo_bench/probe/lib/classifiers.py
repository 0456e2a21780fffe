"""The token classifiers of the probing papers (Hewitt & Liang 2019, control-tasks' ``OneWord*LabelProbe``), by name.

- ``linear``: a rank-limited linear map, logits = W2 (W1 x + b1) + b2 with W1 (rank x dim): a linear classifier whose
  weight matrix has rank at most ``rank`` (the authors' default rank 1000 is above ELMo's 1024-wide layers' useful
  rank for 45 tags, i.e. unconstrained);
- ``mlp1``: logits = W2 relu(W1 x + b1) + b2, ``hidden`` units;
- ``mlp2``: logits = W3 relu(W2 relu(W1 x + b1) + b2) + b3.

Dropout (probability ``dropout``) applies to the input and, in ``mlp2``, after the second hidden layer, where the
authors' probe applies it. Weights start from PyTorch's default ``nn.Linear`` initialisation.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from torch import nn

PROBES = ("linear", "mlp1", "mlp2")


@dataclass(frozen=True)
class ProbeSpec:
    """What makes a probe: its kind and knobs (recorded in results.json as they are)."""

    kind: str = "linear"
    hidden: int = 1000   # mlp1/mlp2: hidden units
    rank: int = 1000     # linear: the rank bound
    dropout: float = 0.0

    def record(self) -> dict:
        return asdict(self)


def build_probe(spec: ProbeSpec, input_dim: int, num_classes: int) -> nn.Module:
    """A fresh probe: (n, input_dim) features → (n, num_classes) logits."""
    if spec.kind not in PROBES:
        raise ValueError(f"probe kind expected one of {', '.join(PROBES)}, found {spec.kind!r}")
    if min(spec.hidden, spec.rank, input_dim, num_classes) < 1 or not 0.0 <= spec.dropout < 1.0:
        raise ValueError(f"probe {spec}: sizes must be positive and dropout in [0, 1)")
    drop = nn.Dropout(spec.dropout)
    if spec.kind == "linear":
        return nn.Sequential(drop, nn.Linear(input_dim, spec.rank), nn.Linear(spec.rank, num_classes))
    layers: list[nn.Module] = [drop, nn.Linear(input_dim, spec.hidden), nn.ReLU()]
    if spec.kind == "mlp2":
        layers += [nn.Linear(spec.hidden, spec.hidden), nn.ReLU(), nn.Dropout(spec.dropout)]
    return nn.Sequential(*layers, nn.Linear(spec.hidden, num_classes))
