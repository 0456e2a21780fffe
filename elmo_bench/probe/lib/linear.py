"""A converged linear (softmax) probe: standardised features, full-batch L-BFGS, L2 strength chosen on dev.

Why this and not a few epochs of SGD: a probe should measure what a frozen layer encodes linearly, so its number
must not depend on an optimiser budget. The objective is convex (mean cross entropy + l2/2 ||W||^2, bias not
penalised), so full-batch L-BFGS with a strong-Wolfe line search reaches its optimum; ``fit_softmax`` reports the
final gradient norm so convergence is checked, not assumed.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable, Sequence

import torch
from torch.nn import functional as F

log = logging.getLogger(__name__)


@dataclass
class Standardiser:
    """Per-feature mean and standard deviation of the training features (dim,), applied to every split."""

    mean: torch.Tensor
    std: torch.Tensor

    @classmethod
    def fit(cls, x: torch.Tensor, eps: float = 1e-6) -> "Standardiser":
        """x (n, dim): training features only, so dev/test never leak into the scaling."""
        mean = x.mean(dim=0)
        std = x.std(dim=0, unbiased=False).clamp_min(eps)
        return cls(mean, std)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return (x - self.mean) / self.std


@dataclass
class SoftmaxProbe:
    """weight (classes, dim), bias (classes,); ``grad_norm`` is the objective's gradient max-norm at the end."""

    weight: torch.Tensor
    bias: torch.Tensor
    l2: float
    iterations: int
    loss: float
    grad_norm: float
    converged: bool

    def logits(self, x: torch.Tensor) -> torch.Tensor:
        """x (n, dim) → (n, classes)."""
        return x @ self.weight.T + self.bias

    def predict(self, x: torch.Tensor, batch: int = 65536) -> torch.Tensor:
        """x (n, dim) → class ids (n,)."""
        return torch.cat([self.logits(x[i: i + batch]).argmax(-1) for i in range(0, len(x), batch)]) \
            if len(x) else torch.zeros(0, dtype=torch.long)


def objective(weight: torch.Tensor, bias: torch.Tensor, x: torch.Tensor, y: torch.Tensor, l2: float) -> torch.Tensor:
    """Mean cross entropy of softmax(x W^T + b) against y (n,), plus l2/2 ||W||_F^2."""
    return F.cross_entropy(x @ weight.T + bias, y) + 0.5 * l2 * weight.pow(2).sum()


def fit_softmax(x: torch.Tensor, y: torch.Tensor, num_classes: int, l2: float = 0.0, max_iter: int = 1000,
                tol: float = 1e-6, init: SoftmaxProbe | None = None) -> SoftmaxProbe:
    """Minimise ``objective`` over (W, b) with full-batch L-BFGS from zeros (or from ``init``, a warm start).

    x (n, dim) float, y (n,) long in [0, num_classes). Stops when the gradient's max-norm is below ``tol`` or
    after ``max_iter`` iterations; ``converged`` says which.
    """
    if x.ndim != 2 or y.shape != (x.shape[0],):
        raise ValueError(f"fit_softmax: expected x (n, dim) and y (n,), found {tuple(x.shape)} and {tuple(y.shape)}")
    if len(y) == 0:
        raise ValueError("fit_softmax: no training examples")
    dtype = x.dtype
    if init is not None:
        weight = init.weight.detach().clone().to(dtype).requires_grad_(True)
        bias = init.bias.detach().clone().to(dtype).requires_grad_(True)
    else:
        weight = torch.zeros(num_classes, x.shape[1], dtype=dtype, requires_grad=True)
        bias = torch.zeros(num_classes, dtype=dtype, requires_grad=True)
    loss, iterations, grad_norm = minimise([weight, bias], lambda: objective(weight, bias, x, y, l2), max_iter, tol)
    converged = grad_norm <= tol
    if not converged:
        log.warning("L-BFGS stopped after %d iterations with gradient max-norm %.2e (tolerance %.0e, l2 %g)",
                    iterations, grad_norm, tol, l2)
    return SoftmaxProbe(weight.detach(), bias.detach(), l2, iterations, float(loss.detach()), grad_norm, converged)


def minimise(params: list[torch.Tensor], loss_of: Callable[[], torch.Tensor], max_iter: int, tol: float
             ) -> tuple[torch.Tensor, int, float]:
    """Minimise the convex ``loss_of()`` over ``params`` with full-batch L-BFGS (strong-Wolfe line search) until the
    gradient's max-norm is below ``tol`` or ``max_iter`` iterations in all: (final loss, iterations, grad max-norm).
    One step() also stops when the line search makes no progress (rounding near the optimum); restarting with a
    fresh curvature history then often goes on, so it restarts a few times."""
    optimiser = torch.optim.LBFGS(params, lr=1.0, max_iter=max_iter, history_size=20, tolerance_grad=tol,
                                  tolerance_change=0.0, line_search_fn="strong_wolfe")

    def closure() -> torch.Tensor:
        optimiser.zero_grad()
        loss = loss_of()
        loss.backward()
        return loss

    iterations = 0
    for _ in range(5):
        optimiser.state.clear()
        left = max_iter - iterations                   # the budget is for all restarts together
        optimiser.param_groups[0].update(max_iter=left, max_eval=left * 5 // 4)
        optimiser.step(closure)
        iterations += int(optimiser.state[optimiser._params[0]].get("n_iter", 0))
        loss = closure()
        grad_norm = max(float(p.grad.abs().max()) for p in params)
        if grad_norm <= tol or iterations >= max_iter:
            break
    return loss.detach(), iterations, grad_norm


def accuracy(probe: SoftmaxProbe, x: torch.Tensor, y: torch.Tensor) -> float:
    """Percent of rows whose predicted class equals y; y = -1 (a tag unseen in training) is always wrong."""
    if len(y) == 0:
        return 0.0
    return 100.0 * float((probe.predict(x) == y).double().mean())


@dataclass
class Selection:
    probe: SoftmaxProbe
    dev_accuracy: float
    path: list[dict[str, float]]


def fit_select_l2(x_train: torch.Tensor, y_train: torch.Tensor, x_dev: torch.Tensor, y_dev: torch.Tensor,
                  num_classes: int, grid: Sequence[float], max_iter: int = 1000, tol: float = 1e-6,
                  extend: int = 3) -> Selection:
    """Fit along ``grid`` from the strongest L2 to the weakest (each fit warm-started from the previous one) and
    keep the probe with the best dev accuracy (ties: the stronger L2).

    When the weakest L2 of the grid is the best, the grid was too narrow: up to ``extend`` more fits go on down by
    factors of 10 while dev accuracy still improves."""
    if not grid:
        raise ValueError("fit_select_l2: empty L2 grid")
    best: Selection | None = None
    path: list[dict[str, float]] = []
    previous: SoftmaxProbe | None = None

    def step(l2: float) -> bool:
        nonlocal best, previous
        probe = fit_softmax(x_train, y_train, num_classes, l2, max_iter, tol, init=previous)
        dev = accuracy(probe, x_dev, y_dev)
        path.append({"l2": l2, "dev": dev, "iterations": probe.iterations, "grad_norm": probe.grad_norm})
        log.info("probe l2=%g: dev %.2f (%d L-BFGS iterations, grad %.1e)", l2, dev, probe.iterations, probe.grad_norm)
        previous = probe
        if best is None or dev > best.dev_accuracy:
            best = Selection(probe, dev, path)
            return True
        return False

    ordered = sorted(grid, reverse=True)
    for l2 in ordered:
        step(l2)
    assert best is not None
    weakest = ordered[-1]
    for _ in range(extend):
        if best.probe.l2 != weakest or weakest <= 0:
            break
        weakest = float(f"{weakest / 10.0:.6g}")        # 1e-06, not 1.0000000000000002e-07
        log.info("probe: the weakest L2 was the best on dev; trying l2=%g", weakest)
        if not step(weakest):
            break
    best.path = path
    return best
