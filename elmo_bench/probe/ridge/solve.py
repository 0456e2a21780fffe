"""Ridge regression onto one-hot labels, solved in closed form from streamed moments (elmo_bench.probe.lib.streamed).

On training features standardised by their own mean and standard deviation (z = (x − x̄) / s; a feature whose s is
below 1e-6, constant on train, is left out with weight 0), with an unpenalised intercept, for each ridge value λ of
the grid:

    minimise (1/n) Σ_i ‖z_i W + b − y_i‖² + λ ‖W‖²   ⇒   b = ȳ,   (R + λ I) W = G,

R = Σ (z − z̄)(z − z̄)ᵀ / n (the training correlation matrix), G = Σ (z − z̄)(y − ȳ)ᵀ / n. Dividing by n makes λ a
per-token strength, so one grid suits any training size. R is decomposed once (``eigh``: R = V diag(e) Vᵀ, e ≥ 0
up to rounding, clipped at 0) and every λ > 0 costs two (d x d)(d x K) products: W = V diag(1 / (e + λ)) Vᵀ G, a
stable solve whatever R's conditioning. A token's prediction is the argmax over classes of x W' + b' (W', b': the
same map on raw features). Torch-free.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from elmo_bench.probe.lib.streamed import Moments

#: a training standard deviation at or below this marks a constant feature (weight 0)
STD_FLOOR = 1e-6


@dataclass
class RidgeSolution:
    """One layer's maps on raw features, one per ridge value: ``weights`` (G, dim, K), ``bias`` (G, K)."""

    ridges: list[float]
    weights: np.ndarray
    bias: np.ndarray

    def predict(self, x: np.ndarray) -> np.ndarray:
        """(b, G) predicted class ids of the rows of ``x`` (b, dim) under each ridge value."""
        scores = np.einsum("bd,gdk->bgk", np.asarray(x, dtype=np.float64), self.weights) + self.bias[None]
        return scores.argmax(axis=-1)


def standardised(moments: Moments) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(s, R, G) of the module docstring from the moments."""
    n = float(moments.n)
    std = np.maximum(np.sqrt(np.clip(np.diag(moments.scatter), 0.0, None) / n), STD_FLOOR)
    correlation = moments.scatter / (n * np.outer(std, std))
    return std, (correlation + correlation.T) / 2, moments.cross / (n * std[:, None])


def solve(moments: Moments, ridges: Sequence[float]) -> RidgeSolution:
    """The ridge maps of every λ in ``ridges`` (each > 0, checked by the settings) from one layer's moments; a
    feature constant on train (std at the floor) gets weight 0 (its rounding noise, divided by the floor, would
    otherwise leak into the map)."""
    std, correlation, target = standardised(moments)
    varying = std > STD_FLOOR
    values, vectors = np.linalg.eigh(correlation[np.ix_(varying, varying)])
    values = np.clip(values, 0.0, None)
    rotated = vectors.T @ target[varying]
    weights = np.zeros((len(ridges), moments.dim, moments.classes))
    for g, ridge in enumerate(ridges):
        weights[g, varying] = vectors @ (rotated / (values + ridge)[:, None]) / std[varying, None]
    bias = moments.mean_y[None] - np.einsum("d,gdk->gk", moments.mean_x, weights)
    return RidgeSolution([float(r) for r in ridges], weights, bias)


def standardised_weights(solution: RidgeSolution, moments: Moments) -> np.ndarray:
    """(G, dim, K): the maps on standardised features (W of the module docstring), for checks by hand."""
    std, _, _ = standardised(moments)
    return solution.weights * std[None, :, None]
