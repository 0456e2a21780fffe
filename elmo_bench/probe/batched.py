"""Many converged softmax probes in one batched solve: one problem a row (a layer, the layers' average), stacked
weights (problems, classes, dim) and batched matmuls on the features' device, each problem solved to its own test.

Why not one optimiser over the summed objective: a shared line search takes one step length for every problem, so no
problem gets its own optimum's path and the stop is the sum's. Here every quantity L-BFGS keeps is per problem: its
curvature history (two-loop recursion over its own pairs), its step (a backtracking Armijo search with quadratic
interpolation, started at 1, at min(1, 1/|g|_1) on a fresh history as torch's LBFGS does), its iteration count and its
stop (gradient max-norm below ``tol``: the test of ``elmo_bench.probe.linear.fit_softmax``). A problem that has
stopped drops out of the batch. The objective is the same as linear.objective (mean cross entropy + l2/2 ||W||^2,
bias not penalised), its gradient written out (X^T (P - Y) / n + l2 W); the loss is summed in float64 so the Armijo
test resolves the small decreases near the optimum. A search that finds no decrease restarts the problem's history
(as linear.minimise restarts torch's LBFGS), at most ``restarts`` times.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Sequence

import torch

from elmo_bench.probe.linear import Selection, SoftmaxProbe, accuracy

log = logging.getLogger(__name__)
ARMIJO = 1e-4          # sufficient-decrease constant (Nocedal & Wright's usual c1)
BACKTRACKS = 10        # trial steps (each at most half the last) before a search counts as failed


@dataclass
class Problems:
    """B softmax problems over features ``x`` (B, n, dim) float (standardised), shared labels ``y`` (n,) long."""

    x: torch.Tensor
    y: torch.Tensor
    classes: int

    def split(self, theta: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """theta (k, K*dim + K) → weight (k, K, dim), bias (k, K) (views)."""
        cut = self.classes * self.x.shape[2]
        return theta[:, :cut].view(-1, self.classes, self.x.shape[2]), theta[:, cut:]

    def logits(self, weight: torch.Tensor, bias: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        """(k, n, K) logits of problems ``index``: one bmm when every problem is asked, else one mm each (no copy)."""
        if len(index) == len(self.x):
            return torch.baddbmm(bias.unsqueeze(1), self.x, weight.transpose(1, 2))
        return torch.stack([torch.addmm(bias[i], self.x[int(b)], weight[i].T) for i, b in enumerate(index)])

    def evaluate(self, theta: torch.Tensor, l2: torch.Tensor, index: torch.Tensor
                 ) -> tuple[torch.Tensor, torch.Tensor]:
        """Objective (k,) float64 and gradient (k, P) of problems ``index`` at theta (k, P), l2 (k,)."""
        weight, bias = self.split(theta)
        logits = self.logits(weight, bias, index)
        lse = torch.logsumexp(logits, dim=-1)
        target = self.y.view(1, -1, 1).expand(len(index), -1, 1)
        picked = logits.gather(-1, target).squeeze(-1)
        n = len(self.y)
        loss = (lse - picked).double().sum(1) / n + 0.5 * l2.double() * weight.double().pow(2).sum((1, 2))
        delta = torch.exp(logits - lse.unsqueeze(-1))
        delta.scatter_add_(-1, target, torch.full_like(picked, -1.0).unsqueeze(-1))
        delta /= n
        if len(index) == len(self.x):
            grad_w = torch.bmm(delta.transpose(1, 2), self.x)
        else:
            grad_w = torch.stack([delta[i].T @ self.x[int(b)] for i, b in enumerate(index)])
        grad_w += l2.to(weight.dtype).view(-1, 1, 1) * weight
        return loss, torch.cat([grad_w.flatten(1), delta.sum(1)], dim=1)


@dataclass
class State:
    """Every problem's L-BFGS state: point, objective, gradient, curvature pairs (oldest first; empty slots zero)."""

    theta: torch.Tensor        # (B, P)
    loss: torch.Tensor         # (B,) float64
    grad: torch.Tensor         # (B, P)
    s: torch.Tensor            # (B, m, P)
    y: torch.Tensor            # (B, m, P)
    rho: torch.Tensor          # (B, m): 1 / y.s, 0 for an empty slot
    fresh: torch.Tensor        # (B,) bool: no curvature pair yet (the first step, or after a restart)
    iterations: torch.Tensor   # (B,) long
    restarts: torch.Tensor     # (B,) long

    def forget(self, which: torch.Tensor) -> None:
        """Restart the histories of problems ``which`` (bool (B,))."""
        self.s[which] = 0.0
        self.y[which] = 0.0
        self.rho[which] = 0.0
        self.fresh |= which


def direction(state: State, index: torch.Tensor) -> torch.Tensor:
    """The two-loop recursion of problems ``index`` over their own pairs, scaled by their newest pair's y.s / y.y
    (a fresh history: the steepest descent)."""
    s, y, rho = state.s[index], state.y[index], state.rho[index].to(state.grad.dtype)
    q = -state.grad[index]
    alpha = torch.zeros_like(rho)
    for i in range(s.shape[1] - 1, -1, -1):
        alpha[:, i] = rho[:, i] * (s[:, i] * q).sum(1)
        q -= alpha[:, i:i + 1] * y[:, i]
    newest_y = y[:, -1]
    yy = (newest_y * newest_y).sum(1)
    gamma = torch.where(rho[:, -1] > 0, 1.0 / (rho[:, -1] * yy).clamp_min(1e-30), torch.ones_like(yy))
    d = q * gamma.unsqueeze(1)
    for i in range(s.shape[1]):
        beta = rho[:, i] * (y[:, i] * d).sum(1)
        d += s[:, i] * (alpha[:, i] - beta).unsqueeze(1)
    return d


def search(problems: Problems, state: State, l2: torch.Tensor, index: torch.Tensor, d: torch.Tensor, tol: float
           ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Each problem's own backtracking line search along d (k, P) from its point: (accepted (k,) bool, step (k,),
    new theta, objective and gradient). A step is accepted on sufficient decrease, or when its gradient already
    meets the stopping test (a decrease below float rounding near the optimum cannot be resolved); a step that
    leaves the objective unchanged is no progress."""
    grad, loss = state.grad[index], state.loss[index]
    slope = (grad * d).sum(1).double()
    step = torch.where(state.fresh[index], (1.0 / grad.abs().sum(1).double()).clamp(max=1.0),
                       torch.ones_like(slope))
    accepted = torch.zeros(len(index), dtype=torch.bool, device=index.device)
    theta, new_loss, new_grad = state.theta[index].clone(), loss.clone(), grad.clone()
    for _ in range(BACKTRACKS):
        todo = (~accepted).nonzero().squeeze(1)
        trial = state.theta[index[todo]] + step[todo].to(d.dtype).unsqueeze(1) * d[todo]
        value, gradient = problems.evaluate(trial, l2[index[todo]], index[todo])
        decrease = (value <= loss[todo] + ARMIJO * step[todo] * slope[todo]) & (value < loss[todo])
        good = (decrease | (gradient.abs().amax(1) <= tol)) & torch.isfinite(value)
        took = todo[good]
        theta[took], new_loss[took], new_grad[took] = trial[good], value[good], gradient[good]
        accepted[took] = True
        if bool(accepted.all()):
            break
        bad, t = todo[~good], step[todo[~good]]
        curve = 2.0 * (value[~good] - loss[bad] - slope[bad] * t)
        guess = torch.where(curve > 0, -slope[bad] * t * t / curve, 0.5 * t)
        step[bad] = torch.minimum(torch.maximum(guess, 0.1 * t), 0.5 * t)
    return accepted, step, theta, new_loss, new_grad


def step_all(problems: Problems, state: State, l2: torch.Tensor, index: torch.Tensor, tol: float, restarts: int,
             stopped: torch.Tensor) -> None:
    """One L-BFGS iteration of problems ``index``: their directions, their searches, their history updates; a
    problem whose search fails restarts its history (after ``restarts`` restarts it stops, not converged)."""
    d = direction(state, index)
    accepted, step, theta, loss, grad = search(problems, state, l2, index, d, tol)
    took = index[accepted]
    s_new = step[accepted].to(d.dtype).unsqueeze(1) * d[accepted]
    y_new = grad[accepted] - state.grad[took]
    ys = (y_new * s_new).sum(1)
    keep = ys > 1e-10                                       # torch's LBFGS: a pair without curvature is skipped
    kept = took[keep]
    state.s[kept] = torch.cat([state.s[kept, 1:], s_new[keep].unsqueeze(1)], dim=1)
    state.y[kept] = torch.cat([state.y[kept, 1:], y_new[keep].unsqueeze(1)], dim=1)
    state.rho[kept] = torch.cat([state.rho[kept, 1:], (1.0 / ys[keep].double()).unsqueeze(1)], dim=1)
    state.fresh[kept] = False
    state.theta[took], state.loss[took], state.grad[took] = theta[accepted], loss[accepted], grad[accepted]
    state.iterations[took] += 1
    failed = index[~accepted]
    if len(failed):
        mask = torch.zeros_like(state.fresh)
        mask[failed] = True
        state.forget(mask)
        state.restarts[failed] += 1
        stopped[failed[state.restarts[failed] > restarts]] = True


def minimise_batched(problems: Problems, theta: torch.Tensor, l2: torch.Tensor, max_iter: int, tol: float,
                     history: int = 20, restarts: int = 5) -> State:
    """Run every problem from theta (B, P) until its gradient max-norm is at most ``tol``, or ``max_iter``
    iterations, or ``restarts`` failed searches; the returned state holds each problem's end."""
    count, size = theta.shape
    every = torch.arange(count, device=theta.device)
    loss, grad = problems.evaluate(theta, l2, every)
    zeros = torch.zeros(count, history, size, dtype=theta.dtype, device=theta.device)
    state = State(theta.clone(), loss, grad, zeros, zeros.clone(),
                  torch.zeros(count, history, dtype=torch.float64, device=theta.device),
                  torch.ones(count, dtype=torch.bool, device=theta.device),
                  torch.zeros(count, dtype=torch.long, device=theta.device),
                  torch.zeros(count, dtype=torch.long, device=theta.device))
    stopped = torch.zeros(count, dtype=torch.bool, device=theta.device)
    while True:
        active = (state.grad.abs().amax(1) > tol) & ~stopped & (state.iterations < max_iter)
        if not bool(active.any()):
            return state
        step_all(problems, state, l2, active.nonzero().squeeze(1), tol, restarts, stopped)


def fit_softmax_batched(problems: Problems, l2: Sequence[float], max_iter: int = 1000, tol: float = 1e-6,
                        init: Sequence[SoftmaxProbe | None] | None = None) -> list[SoftmaxProbe]:
    """``linear.fit_softmax`` of every problem at once: problem b at L2 ``l2[b]`` from ``init[b]`` (a warm start;
    None or no ``init``: from zeros)."""
    x = problems.x
    count, _, dim = x.shape
    if problems.y.shape != (x.shape[1],) or len(l2) != count:
        raise ValueError(f"fit_softmax_batched: expected x (B, n, dim), y (n,) and B l2 values, found "
                         f"{tuple(x.shape)}, {tuple(problems.y.shape)} and {len(l2)}")
    if x.shape[1] == 0:
        raise ValueError("fit_softmax_batched: no training examples")
    theta = torch.zeros(count, problems.classes * (dim + 1), dtype=x.dtype, device=x.device)
    if init is not None:
        for b, probe in enumerate(init):
            if probe is not None:
                theta[b] = torch.cat([probe.weight.reshape(-1), probe.bias]).to(theta)
    strengths = torch.tensor(list(l2), dtype=torch.float64, device=x.device)
    state = minimise_batched(problems, theta, strengths, max_iter, tol)
    weight, bias = problems.split(state.theta)
    out = []
    for b in range(count):
        grad_norm = float(state.grad[b].abs().max())
        converged = grad_norm <= tol
        if not converged:
            log.warning("batched L-BFGS: problem %d stopped after %d iterations with gradient max-norm %.2e "
                        "(tolerance %.0e, l2 %g)", b, int(state.iterations[b]), grad_norm, tol, l2[b])
        out.append(SoftmaxProbe(weight[b].clone(), bias[b].clone(), float(l2[b]), int(state.iterations[b]),
                                float(state.loss[b]), grad_norm, converged))
    return out


def fit_select_l2_batched(train: Problems, x_dev: torch.Tensor, y_dev: torch.Tensor, grid: Sequence[float],
                          max_iter: int = 1000, tol: float = 1e-6, extend: int = 3) -> list[Selection]:
    """``linear.fit_select_l2`` of every problem at once: along ``grid`` from the strongest L2 to the weakest, each
    fit warm-started from the problem's previous one, the best dev accuracy kept (ties: the stronger L2); a problem
    whose weakest L2 won goes on down by factors of 10 (at most ``extend`` fits) while its dev accuracy improves, the
    others wait. x_dev (B, m, dim) holds each problem's dev features."""
    if not grid:
        raise ValueError("fit_select_l2_batched: empty L2 grid")
    count = train.x.shape[0]
    best: list[Selection | None] = [None] * count
    paths: list[list[dict[str, float]]] = [[] for _ in range(count)]
    previous: list[SoftmaxProbe | None] = [None] * count

    def fit(which: list[int], l2: float) -> list[bool]:
        sub = train if len(which) == count else Problems(train.x[which], train.y, train.classes)
        init = None if previous[which[0]] is None else [previous[b] for b in which]
        improved = []
        for b, probe in zip(which, fit_softmax_batched(sub, [l2] * len(which), max_iter, tol, init)):
            dev = accuracy(probe, x_dev[b], y_dev)
            paths[b].append({"l2": l2, "dev": dev, "iterations": probe.iterations, "grad_norm": probe.grad_norm})
            log.info("probe %d l2=%g: dev %.2f (%d L-BFGS iterations, grad %.1e)", b, l2, dev, probe.iterations,
                     probe.grad_norm)
            previous[b] = probe
            improved.append(best[b] is None or dev > best[b].dev_accuracy)
            if improved[-1]:
                best[b] = Selection(probe, dev, paths[b])
        return improved

    ordered = sorted(grid, reverse=True)
    for l2 in ordered:
        fit(list(range(count)), l2)
    weakest = ordered[-1]
    going = [b for b in range(count) if weakest > 0 and best[b].probe.l2 == weakest]
    for _ in range(extend):
        if not going:
            break
        weakest = float(f"{weakest / 10.0:.6g}")         # 1e-06, not 1.0000000000000002e-07
        log.info("probe: the weakest L2 was the best on dev for %d problems; trying l2=%g", len(going), weakest)
        going = [b for b, better in zip(going, fit(going, weakest)) if better]
    return [Selection(s.probe, s.dev_accuracy, paths[b]) for b, s in enumerate(best)]
