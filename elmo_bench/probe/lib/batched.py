"""Many converged softmax probes in one batched solve: one problem a row (a layer, the layers' average), stacked
weights (problems, classes, dim) and batched matmuls on the features' device, each problem solved to its own test.

Why not one optimiser over the summed objective: a shared line search takes one step length for every problem, so no
problem follows its own path and the stop is the sum's. Here each problem runs its own L-BFGS: the algorithm of
``elmo_bench.probe.lib.linear.minimise`` (torch.optim.LBFGS, history 20, strong-Wolfe line search, the budget
``max_iter`` over at most 5 restarts, stopping at gradient max-norm <= ``tol``) written as a generator that asks for
one objective evaluation at a time. Every round the driver gathers the point each unfinished problem asks for,
evaluates them all in one batched computation (``Problems.evaluate``: the objective of linear.objective, mean cross
entropy + l2/2 ||W||^2 with the bias not penalised, in the features' dtype, its gradient written out) and hands each
its own value back; a problem that has stopped drops out of the batch. Its curvature history, two-loop recursion,
line search, iteration count and stop are its own, so a problem takes the steps it takes alone (up to the rounding
of a batched matmul against a single one).
"""
from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass
from typing import Callable, Generator, Iterator, Sequence

import torch
from torch.nn import functional as F

from elmo_bench.probe.lib.linear import Selection, SoftmaxProbe

log = logging.getLogger(__name__)
HISTORY = 20           # linear.minimise's history_size
RESTARTS = 5           # linear.minimise's restarts of a stalled L-BFGS (fresh history)
#: what a problem's generator yields (the point to evaluate) and is sent (objective as a float, gradient)
Solver = Generator[torch.Tensor, tuple[float, torch.Tensor], tuple[torch.Tensor, float, torch.Tensor, int]]


@dataclass
class Problems:
    """Softmax problems over features ``x`` (B, n, dim) float (standardised), shared labels ``y`` (n,) long: one a
    layer of ``x`` (``members``: these layers only, in this order; the others' features are not copied)."""

    x: torch.Tensor
    y: torch.Tensor
    classes: int
    members: tuple[int, ...] | None = None

    @property
    def count(self) -> int:
        return len(self.x) if self.members is None else len(self.members)

    def features(self, b: int) -> torch.Tensor:
        """Problem b's (n, dim) features."""
        return self.x[b if self.members is None else self.members[b]]

    def split(self, theta: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """theta (k, K*dim + K) → weight (k, K, dim), bias (k, K) (views)."""
        cut = self.classes * self.x.shape[2]
        return theta[:, :cut].view(-1, self.classes, self.x.shape[2]), theta[:, cut:]

    def evaluate(self, theta: torch.Tensor, l2: Sequence[float], index: torch.Tensor
                 ) -> tuple[torch.Tensor, torch.Tensor]:
        """Objective (k,) and gradient (k, P) of problems ``index`` at theta (k, P), in the features' dtype:
        F.cross_entropy(x @ W.T + b, y) + 0.5 l2 ||W||^2 (linear.objective). On a CPU each problem runs the
        operations autograd runs for linear.objective on it alone (so the same bits; a CPU's bmm is a loop of the same
        GEMMs, no faster); elsewhere (a GPU) every problem's products are one bmm and the cross entropy one kernel."""
        weight, bias = self.split(theta)
        if self.x.device.type == "cpu":
            found = [self.one(weight[i], bias[i], l2[i], b) for i, b in enumerate(index.tolist())]
            return torch.stack([f[0] for f in found]), torch.stack([f[1] for f in found])
        return self.stacked(weight, bias, l2, index)

    def one(self, weight: torch.Tensor, bias: torch.Tensor, l2: float, b: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Problem b's objective and flat gradient, autograd's operations for ``x @ W.T + b`` (grad^T @ x)."""
        x = self.features(b)
        with torch.enable_grad():
            logits = (x @ weight.T + bias).requires_grad_(True)
            cross = F.cross_entropy(logits, self.y)
            delta, = torch.autograd.grad(cross, logits)
        loss = cross.detach() + 0.5 * l2 * weight.pow(2).sum()
        grad_w = delta.T @ x + (0.5 * l2) * (2 * weight)
        return loss, torch.cat([grad_w.flatten(), delta.sum(0)])

    def stacked(self, weight: torch.Tensor, bias: torch.Tensor, l2: Sequence[float], index: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor]:
        """Every asked problem's objective and gradient in batched kernels (one bmm each way when every layer of
        ``x`` is asked, else one mm a problem: no copy of x)."""
        whole = self.members is None and len(index) == len(self.x)
        rows = index.tolist()
        strength = torch.tensor([0.5 * v for v in l2], dtype=weight.dtype, device=weight.device).view(-1, 1, 1)
        with torch.enable_grad():
            logits = (torch.bmm(self.x, weight.transpose(1, 2)) + bias.unsqueeze(1) if whole else
                      torch.stack([self.features(b) @ weight[i].T + bias[i] for i, b in enumerate(rows)]))
            logits.requires_grad_(True)
            count, n, classes = logits.shape
            cross = F.cross_entropy(logits.reshape(-1, classes), self.y.repeat(count), reduction="none")
            cross = cross.view(count, n).mean(1)
            delta, = torch.autograd.grad(cross.sum(), logits)
        loss = cross.detach() + strength.view(-1) * weight.pow(2).sum((1, 2))
        grad_w = (torch.bmm(delta.transpose(1, 2), self.x) if whole else
                  torch.stack([delta[i].T @ self.features(b) for i, b in enumerate(rows)]))
        grad_w += 2 * strength * weight
        return loss, torch.cat([grad_w.flatten(1), delta.sum(1)], dim=1)


def cubic(x1: float, f1: float, g1: torch.Tensor, x2: float, f2: float, g2: torch.Tensor,
          bounds: tuple | None = None):
    """torch.optim.lbfgs._cubic_interpolate: the minimiser of the cubic through two points and slopes, bounded."""
    low, high = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = d2_square.sqrt()
        if x1 <= x2:
            at = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            at = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(at, low), high)
    return (low + high) / 2.0


def point(x: torch.Tensor, t, d: torch.Tensor) -> torch.Tensor:
    """x + t d as torch's LBFGS forms it (``p.add_(d, alpha=t)``)."""
    return x.clone().add_(d, alpha=t)


def bracket_phase(x, t, d, f, g, gtd, max_ls: int):
    """The first phase of torch's _strong_wolfe (a generator): grow t until a bracket or a strong-Wolfe point.
    Returns (bracket, its f, g and slopes or None, done, trials, evaluations, t, f_new, g_new)."""
    f_new, g_new = yield point(x, t, d)
    evals, gtd_new = 1, g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + 1e-4 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            return [t_prev, t], [f_prev, f_new], [g_prev, g_new], [gtd_prev, gtd_new], False, ls_iter, evals
        if abs(gtd_new) <= -0.9 * gtd:
            return [t], [f_new], [g_new], None, True, ls_iter, evals
        if gtd_new >= 0:
            return [t_prev, t], [f_prev, f_new], [g_prev, g_new], [gtd_prev, gtd_new], False, ls_iter, evals
        tmp = t
        t = cubic(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(t + 0.01 * (t - t_prev), t * 10))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new, gtd_new
        f_new, g_new = yield point(x, t, d)
        evals, gtd_new, ls_iter = evals + 1, g_new.dot(d), ls_iter + 1
    return [0, t], [f, f_new], [g, g_new], [gtd, gtd_new], False, ls_iter, evals


def strong_wolfe(x, t, d, f, g, gtd, max_ls: int = 25):
    """torch.optim.lbfgs._strong_wolfe (c1 1e-4, c2 0.9, tolerance_change 1e-9) as a generator: (f, g, t, evals)."""
    d_norm = d.abs().max()
    bracket, bracket_f, bracket_g, bracket_gtd, done, ls_iter, evals = yield from bracket_phase(x, t, d, f, g, gtd,
                                                                                              max_ls)
    insufficient = False
    low, high = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < 1e-9:
            break
        t = cubic(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1])
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insufficient or t >= max(bracket) or t <= min(bracket):
                t = max(bracket) - eps if abs(t - max(bracket)) < abs(t - min(bracket)) else min(bracket) + eps
                insufficient = False
            else:
                insufficient = True
        else:
            insufficient = False
        f_new, g_new = yield point(x, t, d)
        evals, gtd_new, ls_iter = evals + 1, g_new.dot(d), ls_iter + 1
        if f_new > (f + 1e-4 * t * gtd) or f_new >= bracket_f[low]:
            bracket[high], bracket_f[high], bracket_g[high], bracket_gtd[high] = t, f_new, g_new, gtd_new
            low, high = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -0.9 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:
                bracket[high], bracket_f[high], bracket_g[high] = bracket[low], bracket_f[low], bracket_g[low]
                bracket_gtd[high] = bracket_gtd[low]
            bracket[low], bracket_f[low], bracket_g[low], bracket_gtd[low] = t, f_new, g_new, gtd_new
    return bracket_f[low], bracket_g[low], bracket[low], evals


def two_loop(g: torch.Tensor, dirs: list, steps: list, ro: list, h_diag) -> torch.Tensor:
    """torch's LBFGS direction: the two-loop recursion over the problem's own (y, s) pairs, scaled by H_diag."""
    al = [None] * len(dirs)
    q = g.neg()
    for i in range(len(dirs) - 1, -1, -1):
        al[i] = steps[i].dot(q) * ro[i]
        q.add_(dirs[i], alpha=-al[i])
    d = r = torch.mul(q, h_diag)
    for i in range(len(dirs)):
        be_i = dirs[i].dot(r) * ro[i]
        r.add_(steps[i], alpha=al[i] - be_i)
    return d


def lbfgs_step(x: torch.Tensor, loss: float, g: torch.Tensor, max_iter: int, max_eval: int, tol: float):
    """One ``torch.optim.LBFGS.step`` from a fresh state (lr 1, tolerance_change 0, strong Wolfe) as a generator:
    (x, loss, g, iterations)."""
    if g.abs().max() <= tol:
        return x, loss, g, 0
    dirs, steps, ro, h_diag = [], [], [], 1
    d = t = prev_g = None
    n_iter, evals = 0, 1
    while n_iter < max_iter:
        n_iter += 1
        if n_iter == 1:
            d = g.neg()
        else:
            y, s = g.sub(prev_g), d.mul(t)
            ys = y.dot(s)
            if ys > 1e-10:
                if len(dirs) == HISTORY:
                    dirs.pop(0), steps.pop(0), ro.pop(0)
                dirs.append(y), steps.append(s), ro.append(1.0 / ys)
                h_diag = ys / y.dot(y)
            d = two_loop(g, dirs, steps, ro, h_diag)
        prev_g, prev_loss = g.clone(), loss
        t = min(1.0, 1.0 / g.abs().sum()) if n_iter == 1 else 1.0
        gtd = g.dot(d)
        if gtd > 0:
            break
        loss, g, t, ls_evals = yield from strong_wolfe(x, t, d, loss, g, gtd, max_ls=max_eval - evals)
        x = point(x, t, d)
        evals += ls_evals
        if n_iter == max_iter or evals >= max_eval or g.abs().max() <= tol or d.mul(t).abs().max() <= 0 \
                or abs(loss - prev_loss) < 0:
            break
    return x, loss, g, n_iter


def solve(x: torch.Tensor, max_iter: int, tol: float) -> Solver:
    """linear.minimise for one problem from x (P,), as a generator: (x, loss, g, iterations) at its end."""
    loss, g = yield x
    iterations = 0
    for _ in range(RESTARTS):
        left = max_iter - iterations                   # the budget is for all restarts together
        x, loss, g, done = yield from lbfgs_step(x, loss, g, left, left * 5 // 4, tol)
        iterations += done
        if g.abs().max() <= tol or iterations >= max_iter:
            break
    return x, loss, g, iterations


def run_batched(problems: Problems, theta: torch.Tensor, l2: Sequence[float], max_iter: int, tol: float
                ) -> list[tuple[torch.Tensor, float, torch.Tensor, int]]:
    """Drive one ``solve`` per problem: every round, the points the unfinished problems ask for are evaluated in
    one batched computation and each problem gets its own value; (theta, loss, grad, iterations) per problem.
    Each problem's vectors live in their own storage, as one problem's would (a row of the batch starts unaligned,
    and a BLAS dot product over an unaligned start rounds otherwise)."""
    solvers = [solve(theta[b].clone(), max_iter, tol) for b in range(len(theta))]
    with one_thread():
        asked = {b: next(s) for b, s in enumerate(solvers)}
    ends: dict[int, tuple] = {}
    while asked:
        index = torch.tensor(sorted(asked), dtype=torch.long, device=theta.device)
        loss, grad = problems.evaluate(torch.stack([asked[int(b)] for b in index]), [l2[b] for b in index.tolist()],
                                       index)                         # the products: every thread the run has
        with one_thread():
            for i, b in enumerate(index.tolist()):
                try:
                    asked[b] = solvers[b].send((float(loss[i]), grad[i].clone()))   # its own, aligned storage
                except StopIteration as stop:
                    ends[b] = stop.value
                    del asked[b]
    return [ends[b] for b in range(len(theta))]


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """Torch on one CPU thread while the solvers take their steps. Why: their work is dot products and sums of one
    problem's parameters (a few thousand numbers); on several threads MKL splits each dot and waits for every thread
    to join, which costs far more than the dot (about 14 ms against 5 us measured on this 2-core machine under
    load), and the split sum rounds otherwise: on one thread the steps are those of a ``threads=1`` run, whatever
    ``threads`` says. The evaluations (the matrix products) keep every thread."""
    threads = torch.get_num_threads()
    if threads == 1:
        yield
        return
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def fit_softmax_batched(problems: Problems, l2: Sequence[float], max_iter: int = 1000, tol: float = 1e-6,
                        init: Sequence[SoftmaxProbe | None] | None = None) -> list[SoftmaxProbe]:
    """``linear.fit_softmax`` of every problem at once: problem b at L2 ``l2[b]`` from ``init[b]`` (a warm start;
    None or no ``init``: from zeros)."""
    x = problems.x
    count, dim = problems.count, x.shape[2]
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
    out = []
    for b, (end, loss, grad, iterations) in enumerate(run_batched(problems, theta, list(l2), max_iter, tol)):
        weight, bias = problems.split(end.unsqueeze(0))
        grad_norm = float(grad.abs().max())
        converged = grad_norm <= tol
        if not converged:
            log.warning("batched L-BFGS: problem %d stopped after %d iterations with gradient max-norm %.2e "
                        "(tolerance %.0e, l2 %g)", b, iterations, grad_norm, tol, l2[b])
        out.append(SoftmaxProbe(weight[0], bias[0], float(l2[b]), iterations, loss, grad_norm, converged))
    return out


def fit_select_l2_batched(train: Problems, dev: Callable[[int, SoftmaxProbe], float], grid: Sequence[float],
                          max_iter: int = 1000, tol: float = 1e-6, extend: int = 3) -> list[Selection]:
    """``linear.fit_select_l2`` of every problem at once: along ``grid`` from the strongest L2 to the weakest, each
    fit warm-started from the problem's previous one, the best dev accuracy kept (ties: the stronger L2); a problem
    whose weakest L2 won goes on down by factors of 10 (at most ``extend`` fits) while its dev accuracy improves, the
    others wait. ``dev(b, probe)`` is problem b's dev accuracy of a probe (its dev features are read there, so
    they need not be held all at once)."""
    if not grid:
        raise ValueError("fit_select_l2_batched: empty L2 grid")
    count = train.count
    best: list[Selection | None] = [None] * count
    paths: list[list[dict[str, float]]] = [[] for _ in range(count)]
    previous: list[SoftmaxProbe | None] = [None] * count

    def fit(which: list[int], l2: float) -> list[bool]:
        sub = train if len(which) == count else Problems(train.x, train.y, train.classes, tuple(which))
        init = None if previous[which[0]] is None else [previous[b] for b in which]
        improved = []
        for b, probe in zip(which, fit_softmax_batched(sub, [l2] * len(which), max_iter, tol, init)):
            score = dev(b, probe)
            paths[b].append({"l2": l2, "dev": score, "iterations": probe.iterations, "grad_norm": probe.grad_norm})
            log.info("probe %d l2=%g: dev %.2f (%d L-BFGS iterations, grad %.1e)", b, l2, score, probe.iterations,
                     probe.grad_norm)
            previous[b] = probe
            improved.append(best[b] is None or score > best[b].dev_accuracy)
            if improved[-1]:
                best[b] = Selection(probe, score, paths[b])
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
