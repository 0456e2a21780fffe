"""One projected, clipped LSTM layer over fixed windows (every row full length), with a hand-written backward.

This is :class:`~elmo_bench.bilm.lstm.ProjectedLstmLayer`'s math (TF ``LSTMCell``: gates i, j, f, o, forget bias
folded into the bias, cell clip, projection, projection clip) for the case pretraining runs: both directions
batched on a leading axis of size 2 and no row ending early. Why a custom ``autograd.Function``: under plain
autograd every time step's slice of the precomputed input gates allocates and zero-fills a gradient buffer as
large as the whole window (``aten::fill_`` was 61% of a training step), and every step does its own small weight
gradient GEMMs and accumulations. Here the backward pass walks the window once, keeps only the per-step work that
the recurrence needs (two small batched matmuls and the gate algebra), writes each step's gate gradients into one
preallocated buffer and then forms every weight gradient with one large GEMM.

Clipping's gradient passes where the clipped value lies strictly inside the bound; ``torch.clamp``'s also passes
at exactly ``±bound`` (a set of measure zero in float arithmetic, which is all that can differ).
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import torch


def _clip_(x: torch.Tensor, bound: float | None) -> torch.Tensor:
    return x if bound is None else x.clamp_(-bound, bound)


def _unclipped(clipped: torch.Tensor, bound: float | None) -> torch.Tensor | float:
    """Where the clip let the gradient through, from the clipped values (strictly inside the bound)."""
    return 1.0 if bound is None else (clipped.abs() < bound)


def _addmm(bias: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.baddbmm(bias, a, b) if a.dim() == 3 else torch.addmm(bias, a, b)


def _forward_loop(gates_x, hidden_weight, projection, acts, cells, tanh_cells, hiddens, m_all, cell_clip,
                  proj_clip) -> None:
    """The recurrence, writing every step into the preallocated buffers. Works on both directions at once
    (tensors with a leading direction axis, batched matmuls) or on one direction (plain matmuls): time is axis -3."""
    hidden = cells.shape[-1]
    for t in range(gates_x.shape[-3]):
        gates = _addmm(gates_x.select(-3, t), hiddens.select(-3, t), hidden_weight)
        a = acts.select(-3, t)
        torch.sigmoid(gates, out=a)
        a[..., hidden: 2 * hidden] = torch.tanh(gates[..., hidden: 2 * hidden])
        i, j, f, o = a.chunk(4, dim=-1)
        c_new = cells.select(-3, t + 1)
        torch.addcmul(f * cells.select(-3, t), i, j, out=c_new)
        _clip_(c_new, cell_clip)
        tc = torch.tanh(c_new, out=tanh_cells.select(-3, t))
        m = torch.mul(o, tc, out=m_all.select(-3, t))
        h_new = hiddens.select(-3, t + 1)
        torch.matmul(m, projection, out=h_new)
        _clip_(h_new, proj_clip)


def _backward_loop(d_out, dh, dc, acts, cells, tanh_cells, hiddens, hidden_weight, projection, d_gates, d_proj_in,
                   cell_clip, proj_clip):
    """Backpropagation through the window; fills d_gates and d_proj_in, returns the initial state's gradients."""
    hidden_weight_t = hidden_weight.transpose(-1, -2)
    projection_t = projection.transpose(-1, -2)
    for t in range(acts.shape[-3] - 1, -1, -1):
        if d_out is not None:
            dh = dh + d_out.select(-3, t)
        if proj_clip is not None:
            dh = dh * _unclipped(hiddens.select(-3, t + 1), proj_clip)
        d_proj_in.select(-3, t).copy_(dh)
        dm = torch.matmul(dh, projection_t)  # (..., batch, H)
        i, j, f, o = acts.select(-3, t).chunk(4, dim=-1)
        tc = tanh_cells.select(-3, t)
        dc = torch.addcmul(dc, dm * o, 1.0 - tc * tc)
        if cell_clip is not None:
            dc = dc * _unclipped(cells.select(-3, t + 1), cell_clip)
        g = d_gates.select(-3, t)
        gi, gj, gf, go = g.chunk(4, dim=-1)
        torch.mul(dc * j, i * (1.0 - i), out=gi)
        torch.mul(dc * i, 1.0 - j * j, out=gj)
        torch.mul(dc * cells.select(-3, t), f * (1.0 - f), out=gf)
        torch.mul(dm * tc, o * (1.0 - o), out=go)
        dc = dc * f
        dh = torch.matmul(g, hidden_weight_t)
    return dh, dc


_POOL: ThreadPoolExecutor | None = None
_DIRECTION_THREADS = 1


def set_direction_threads(threads: int) -> None:
    """Run the forward and the backward LM's recurrences in ``threads`` (1 or 2) Python threads. With 2, each
    direction's step is a plain single-threaded matmul chain on its own core (torch releases the GIL inside ops),
    which on a small CPU beats splitting every small matmul across cores; set torch's intra-op threads to 1 then."""
    global _DIRECTION_THREADS
    if threads not in (1, 2):
        raise ValueError(f"direction threads must be 1 or 2, found {threads}")
    _DIRECTION_THREADS = threads


def _per_direction(fn, *args):
    """fn on both directions at once, or on each direction in its own thread; returns the per-direction results."""
    global _POOL
    if _DIRECTION_THREADS == 1:
        return [fn(*args)]
    if _POOL is None:
        _POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="window-lstm")
    def run(*direction_args):
        with torch.no_grad():  # grad mode is per thread; the Function's body runs without it
            return fn(*direction_args)

    futures = [_POOL.submit(run, *[a[d] if isinstance(a, torch.Tensor) else a for a in args]) for d in (0, 1)]
    return [f.result() for f in futures]


class _WindowLstm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, input_weight, hidden_weight, bias, projection, h0, c0, cell_clip, proj_clip):
        """x (2, time, batch, in), input_weight (2, in, 4H), hidden_weight (2, P, 4H), bias (2, 4H) forget bias
        included, projection (2, H, P), h0 (2, batch, P), c0 (2, batch, H) → outputs (2, time, batch, P), h, c."""
        directions, time, batch, _ = x.shape
        hidden = c0.shape[-1]
        gates_x = torch.baddbmm(bias.unsqueeze(1), x.reshape(directions, time * batch, -1), input_weight)
        gates_x = gates_x.view(directions, time, batch, 4 * hidden)
        acts = torch.empty_like(gates_x)  # sigmoid(i), tanh(j), sigmoid(f), sigmoid(o) per step
        cells = x.new_empty(directions, time + 1, batch, hidden)  # c_{t} clipped; cells[:, 0] = c0
        tanh_cells = x.new_empty(directions, time, batch, hidden)
        hiddens = x.new_empty(directions, time + 1, batch, h0.shape[-1])  # h_t clipped; hiddens[:, 0] = h0
        cells[:, 0], hiddens[:, 0] = c0, h0
        m_all = x.new_empty(directions, time, batch, hidden)  # o * tanh(c), the projection's input
        _per_direction(_forward_loop, gates_x, hidden_weight, projection, acts, cells, tanh_cells, hiddens, m_all,
                       cell_clip, proj_clip)
        ctx.save_for_backward(x, input_weight, hidden_weight, projection, acts, cells, tanh_cells, hiddens, m_all)
        ctx.clips = (cell_clip, proj_clip)
        outputs = hiddens[:, 1:]
        return outputs.clone(), hiddens[:, -1].clone(), cells[:, -1].clone()

    @staticmethod
    def backward(ctx, d_out, d_h_last, d_c_last):
        x, input_weight, hidden_weight, projection, acts, cells, tanh_cells, hiddens, m_all = ctx.saved_tensors
        cell_clip, proj_clip = ctx.clips
        directions, time, batch, _ = x.shape
        hidden = cells.shape[-1]
        d_gates = torch.empty_like(acts)
        d_proj_in = torch.empty_like(hiddens[:, 1:])  # gradient at h_raw per step
        dh = d_h_last.clone() if d_h_last is not None else hiddens.new_zeros(directions, batch, hiddens.shape[-1])
        dc = d_c_last.clone() if d_c_last is not None else cells.new_zeros(directions, batch, hidden)
        if d_out is not None:
            d_out = d_out.contiguous()
        results = _per_direction(_backward_loop, d_out, dh, dc, acts, cells, tanh_cells, hiddens, hidden_weight,
                                 projection, d_gates, d_proj_in, cell_clip, proj_clip)
        dh = torch.stack([r[0] for r in results]) if len(results) == 2 else results[0][0]
        dc = torch.stack([r[1] for r in results]) if len(results) == 2 else results[0][1]
        flat_gates = d_gates.view(directions, time * batch, 4 * hidden)
        d_input_weight = torch.bmm(x.reshape(directions, time * batch, -1).transpose(1, 2), flat_gates)
        d_hidden_weight = torch.bmm(hiddens[:, :-1].reshape(directions, time * batch, -1).transpose(1, 2), flat_gates)
        d_bias = flat_gates.sum(dim=1)
        d_projection = torch.bmm(m_all.reshape(directions, time * batch, hidden).transpose(1, 2),
                                 d_proj_in.reshape(directions, time * batch, -1))
        d_x = torch.bmm(flat_gates, input_weight.transpose(1, 2)).view_as(x) if ctx.needs_input_grad[0] else None
        return d_x, d_input_weight, d_hidden_weight, d_bias, d_projection, dh, dc, None, None


def window_lstm(x: torch.Tensor, input_weight: torch.Tensor, hidden_weight: torch.Tensor, bias: torch.Tensor,
                projection: torch.Tensor, h0: torch.Tensor, c0: torch.Tensor, cell_clip: float | None,
                proj_clip: float | None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Time-major: x (2, time, batch, in) → outputs (2, time, batch, P), final h (2, batch, P), final c (2, batch, H).

    ``bias`` must already include TF's forget bias of 1.0 on the f gate."""
    return _WindowLstm.apply(x, input_weight, hidden_weight, bias, projection, h0, c0, cell_clip, proj_clip)
