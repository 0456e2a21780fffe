"""Many probes of the papers' regimen trained together: one problem a (features, labels) pair, the parameters of every
problem stacked (problems, out, in) and each linear map one batched matmul, the problems stepping through the same
minibatches in lockstep, each with its own optimiser state, learning rate, early stopping and kept parameters.

Why this equals the one-problem regimen (elmo_bench.probe.lib.regimen.train_probe) problem by problem: the problems of
one call share the seed and the sentences, so the regimen draws for each of them the same initial parameters and the
same shuffled batches; Adam is elementwise, so one state over the stacked parameters is each problem's own state
(``StackedAdam`` runs torch's Adam's operations, the step size per problem); every problem's loss is its own cross
entropy (summed over its tokens, / sentences) and its gradient reaches only its own slice; each problem's
``ReduceLROnPlateau`` (patience 0) watches its own dev loss, and a problem whose patience ran out leaves the stack
while the others go on. On a CPU ``torch.baddbmm`` runs the GEMM ``nn.Linear`` runs for each slice, so a problem's
parameters, losses and stop are the same bits as alone (tests/test_stacked_probe.py); on a GPU they agree up to the
rounding of the batched kernels. Probes with dropout (random masks per problem) or another module than
``Dropout(0)``/``Linear``/``ReLU`` in a ``Sequential`` (the word lookup of the conditional probe) train one by one.

Entry point: :func:`train_probes` (a ``Tokens`` pair per problem in, a ``TrainedProbe`` per problem out).
"""
from __future__ import annotations

import copy
import logging
from dataclasses import dataclass, field
from typing import Callable, Iterator, Sequence

import torch
from torch import nn
from torch.nn import functional as F

from elmo_bench.probe.lib.classifiers import ProbeSpec, build_probe
from elmo_bench.probe.lib.regimen import Regimen, Tokens, TrainedProbe, evaluate, train_tokens

log = logging.getLogger(__name__)
BETAS, EPS = (0.9, 0.999), 1e-8          # torch.optim.Adam's defaults, what the regimen's Adam runs with


def stackable(template: nn.Module) -> bool:
    """Whether ``template`` is a chain of ``Linear``, ``ReLU`` and ``Dropout(0)`` (what ``StackedChain`` runs)."""
    return isinstance(template, nn.Sequential) and all(
        isinstance(m, (nn.Linear, nn.ReLU)) or (isinstance(m, nn.Dropout) and m.p == 0.0) for m in template)


class StackedLinear(torch.autograd.Function):
    """x @ W.T + b for stacked x (count, n, in), W (count, out, in), b (count, out), whose backward computes what
    ``nn.Linear``'s (addmm's) computes on each slice: grad W = grad.T @ x (not (x.T @ grad).T, the GEMM
    ``baddbmm``'s own backward would run, which rounds differently), grad x = grad @ W, grad b = grad summed over
    tokens."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(x, weight)
        return torch.baddbmm(bias.unsqueeze(1), x, weight.transpose(1, 2))

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> tuple[torch.Tensor | None, torch.Tensor, torch.Tensor]:
        x, weight = ctx.saved_tensors
        grad_x = torch.bmm(grad, weight) if ctx.needs_input_grad[0] else None
        return grad_x, torch.bmm(grad.transpose(1, 2), x), grad.sum(1)


class StackedChain:
    """``count`` copies of a ``Sequential`` template's parameters, stacked (count, out, in) and (count, out)."""

    def __init__(self, template: nn.Sequential, count: int, device: torch.device | str) -> None:
        self.ops = [("linear" if isinstance(m, nn.Linear) else "relu" if isinstance(m, nn.ReLU) else "skip")
                    for m in template]
        self.params: list[torch.Tensor] = []
        for module in template:
            if isinstance(module, nn.Linear):
                for p in (module.weight, module.bias):
                    self.params.append(p.detach().to(device).unsqueeze(0).repeat(count, *[1] * p.dim())
                                       .requires_grad_(True))

    def forward(self, x: torch.Tensor, only: int | None = None) -> torch.Tensor:
        """(count, n, in) → (count, n, classes); each slice what the template module computes on it. ``only``:
        problem ``only``'s alone, x (1, n, in)."""
        at = 0
        for op in self.ops:
            if op == "linear":
                weight, bias = self.params[at], self.params[at + 1]
                if only is not None:
                    weight, bias = weight[only:only + 1], bias[only:only + 1]
                x = StackedLinear.apply(x, weight, bias)
                at += 2
            elif op == "relu":
                x = torch.relu(x)
        return x

    def keep(self, index: torch.Tensor) -> None:
        """Only the problems ``index`` (positions in the stack) stay."""
        self.params = [p.detach()[index].requires_grad_(True) for p in self.params]

    def slices(self, b: int) -> list[torch.Tensor]:
        """Problem b's parameters (copies), in the template's order."""
        return [p.detach()[b].clone() for p in self.params]


def loaded(template: nn.Module, params: Sequence[torch.Tensor]) -> nn.Module:
    """A copy of the template holding one problem's parameters (``StackedChain.slices``), in eval mode."""
    probe = copy.deepcopy(template)
    linears = [m for m in probe if isinstance(m, nn.Linear)]
    with torch.no_grad():
        for i, linear in enumerate(linears):
            linear.weight.copy_(params[2 * i])
            linear.bias.copy_(params[2 * i + 1])
    return probe.eval()


@dataclass
class StackedAdam:
    """torch.optim.Adam (its single-tensor path, what it runs on a CPU) over stacked parameters: the moments are
    elementwise, so problem b's slice of them is the state problem b's own Adam would hold; the step size is
    per problem (each has its own learning rate)."""

    weight_decay: float = 0.0
    step: int = 0
    moments: list[tuple[torch.Tensor, torch.Tensor]] = field(default_factory=list)

    @torch.no_grad()
    def update(self, params: Sequence[torch.Tensor], lrs: Sequence[float]) -> None:
        if not self.moments:
            self.moments = [(torch.zeros_like(p), torch.zeros_like(p)) for p in params]
        self.step += 1
        beta1, beta2 = BETAS
        step = float(self.step)
        correction1, correction2 = 1 - beta1 ** step, 1 - beta2 ** step
        for param, (mean, square) in zip(params, self.moments):
            grad = param.grad if self.weight_decay == 0 else param.grad.add(param, alpha=self.weight_decay)
            mean.lerp_(grad, 1 - beta1)
            square.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            denominator = (square.sqrt() / correction2 ** 0.5).add_(EPS)
            if len(set(lrs)) == 1:
                param.addcdiv_(mean, denominator, value=-(lrs[0] / correction1))
            else:
                for b, lr in enumerate(lrs):
                    param[b].addcdiv_(mean[b], denominator[b], value=-(lr / correction1))

    def keep(self, index: torch.Tensor) -> None:
        self.moments = [(m[index], s[index]) for m, s in self.moments]


@dataclass
class Track:
    """One problem's regimen state: its learning rate's plateau, best dev loss and the parameters kept then."""

    plateau: torch.optim.lr_scheduler.ReduceLROnPlateau
    best_loss: float = float("inf")
    best_epoch: int = 0
    best: list[torch.Tensor] | None = None
    last: list[torch.Tensor] | None = None
    history: list[dict] = field(default_factory=list)

    @classmethod
    def start(cls, lr: float, factor: float = 0.5) -> "Track":
        """A track whose ``ReduceLROnPlateau`` (×``factor``, patience 0: the regimen's) holds its learning rate: the
        scheduler's own arithmetic, on an optimiser that only carries the rate."""
        holder = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=lr)
        return cls(torch.optim.lr_scheduler.ReduceLROnPlateau(holder, mode="min", factor=factor, patience=0))

    @property
    def lr(self) -> float:
        return self.plateau.optimizer.param_groups[0]["lr"]


@dataclass
class Stack:
    """Every problem's data of one split: distinct feature views (V, tokens, dim), distinct labellings (L, tokens),
    and per problem its view and labelling (``view``, ``labels``: (problems,) indices)."""

    x: torch.Tensor
    y: torch.Tensor
    view: torch.Tensor
    labels: torch.Tensor
    tokens: Tokens

    @classmethod
    def of(cls, problems: Sequence[Tokens]) -> "Stack":
        """The problems' ``Tokens`` (one split; the same sentences) stacked, a view or labelling shared by several
        problems (the same tensor object) held once."""
        first = problems[0]
        if any(not torch.equal(p.offsets, first.offsets) for p in problems):
            raise ValueError("stacked probes: every problem needs the same sentences")
        views: dict[int, int] = {}
        labellings: dict[int, int] = {}
        for p in problems:
            views.setdefault(id(p.x), len(views))
            labellings.setdefault(id(p.y), len(labellings))
        xs = {id(p.x): p.x for p in problems}
        ys = {id(p.y): p.y for p in problems}
        return cls(torch.stack([xs[k] for k in views]), torch.stack([ys[k] for k in labellings]),
                   torch.tensor([views[id(p.x)] for p in problems]),
                   torch.tensor([labellings[id(p.y)] for p in problems]), first)

    def batch(self, rows: torch.Tensor, active: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(problems, n, dim) features and (problems, n) labels of token ``rows`` for the ``active`` problems."""
        return self.x[:, rows][self.view[active]], self.y[:, rows][self.labels[active]]

    def chunks(self, active: torch.Tensor, chunk: int) -> Iterator[tuple[int, torch.Tensor, torch.Tensor]]:
        """(position in ``active``, features (1, n, dim), labels (n,)) of every active problem's tokens in chunks
        of ``chunk`` (problem by problem, chunk by chunk: views, no copy)."""
        for at, b in enumerate(active.tolist()):
            view, labels = int(self.view[b]), int(self.labels[b])
            for start in range(0, self.x.shape[1], chunk):
                yield at, self.x[view, start:start + chunk].unsqueeze(0), self.y[labels, start:start + chunk]


def _epoch(chain: StackedChain, adam: StackedAdam, train: Stack, active: torch.Tensor, lrs: Sequence[float],
           batch: int, generator: torch.Generator) -> list[float]:
    """One epoch of every active problem over the same shuffled batches: its mean training loss per sentence."""
    order = torch.randperm(len(train.tokens), generator=generator)
    totals = [0.0] * len(active)
    for start in range(0, len(order), batch):
        sentences = order[start:start + batch]
        x, y = train.batch(train.tokens.rows(sentences).to(train.x.device), active)
        for p in chain.params:
            p.grad = None
        logits = chain.forward(x)
        losses = [F.cross_entropy(logits[b], y[b], ignore_index=-1, reduction="sum") / len(sentences)
                  for b in range(len(active))]
        torch.stack(losses).sum().backward()
        adam.update(chain.params, lrs)
        for b, loss in enumerate(losses):
            totals[b] += float(loss.detach()) * len(sentences)
    return [t / max(1, len(train.tokens)) for t in totals]


@torch.no_grad()
def _dev_losses(chain: StackedChain, dev: Stack, active: torch.Tensor, chunk: int = 16384) -> list[float]:
    """Every active problem's summed dev cross entropy / dev sentences, chunked as ``regimen.evaluate`` chunks,
    one problem at a time: a stacked chunk would be the problems' count times the memory and, on a CPU, no faster
    (the same GEMMs; a freshly mapped tensor of hundreds of MB costs more than the loop)."""
    losses = [0.0] * len(active)
    for at, x, y in dev.chunks(active, chunk):
        logits = chain.forward(x, at)[0]
        losses[at] += float(F.cross_entropy(logits, y, ignore_index=-1, reduction="sum"))
    return [loss / max(1, len(dev.tokens)) for loss in losses]


def _judge(track: Track, chain: StackedChain, at: int, epoch: int, losses: tuple[float, float],
           regimen: Regimen, kind: str) -> bool:
    """The regimen's end of epoch for one problem (history, plateau, kept parameters): True when it stops."""
    train_loss, dev_loss = losses
    track.history.append({"epoch": epoch, "train_loss": train_loss, "dev_loss": dev_loss, "lr": track.lr})
    track.plateau.step(dev_loss)
    log.info("probe %s epoch %d: train loss %.4f, dev loss %.4f, lr %g", kind, epoch, train_loss, dev_loss,
             track.history[-1]["lr"])
    if dev_loss < track.best_loss - regimen.min_improvement:
        track.best_loss, track.best_epoch = dev_loss, epoch
        track.best = chain.slices(at)
        return False
    return epoch - track.best_epoch > regimen.patience


def train_probes(spec: ProbeSpec, trains: Sequence[Tokens], devs: Sequence[Tokens], num_classes: int,
                 regimen: Regimen = Regimen(), device: torch.device | str = "cpu",
                 build: Callable[[int, int], nn.Module] | None = None, stacked: bool = True) -> list[TrainedProbe]:
    """``regimen.train_probe`` for every problem (``trains[i]``, ``devs[i]``: one problem's features and labels;
    every problem the same sentences, width and seed), the problems stacked when the probe allows (see the module
    docstring) and ``stacked``; else one after the other. Problem i's result is the one ``train_tokens`` gives it
    alone."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(regimen.seed)
        dim = trains[0].x.shape[1]
        template = (build or (lambda d, k: build_probe(spec, d, k)))(dim, num_classes).to(device)
    if not (stacked and stackable(template)) or len({t.x.shape[1] for t in trains}) != 1:
        return [train_tokens(spec, t, d, num_classes, regimen, device, build) for t, d in zip(trains, devs)]
    train, dev = Stack.of(trains), Stack.of(devs)
    chain, adam = StackedChain(template, len(trains), device), StackedAdam(regimen.weight_decay)
    tracks = [Track.start(regimen.lr) for _ in trains]
    active = torch.arange(len(trains))
    generator = torch.Generator().manual_seed(regimen.seed)
    for epoch in range(1, regimen.max_epochs + 1):
        lrs = [tracks[int(b)].lr for b in active]
        train_losses = _epoch(chain, adam, train, active, lrs, regimen.batch_sentences, generator)
        dev_losses = _dev_losses(chain, dev, active)
        stops = [_judge(tracks[int(b)], chain, at, epoch, (train_losses[at], dev_losses[at]), regimen, spec.kind)
                 for at, b in enumerate(active)]
        for at, b in enumerate(active):
            if stops[at] or epoch == regimen.max_epochs:
                tracks[int(b)].last = chain.slices(at)
        going = torch.tensor([at for at, stop in enumerate(stops) if not stop], dtype=torch.long)
        if len(going) < len(active):
            active = active[going]
            chain.keep(going.to(chain.params[0].device))
            adam.keep(going.to(chain.params[0].device))
        if not len(active):
            break
    return [_finished(template, track, devs[i]) for i, track in enumerate(tracks)]


def _finished(template: nn.Module, track: Track, dev: Tokens) -> TrainedProbe:
    """A problem's ``TrainedProbe``: its kept (best-dev) parameters, scored on dev as the regimen scores them."""
    probe = loaded(template, track.best if track.best is not None else track.last)
    dev_loss, dev_accuracy = evaluate(probe, dev)
    return TrainedProbe(probe, dev_loss, dev_accuracy, len(track.history), track.best_epoch, track.history)
