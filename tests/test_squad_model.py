"""BiDAF + self-attention head: shapes, padding invariance (chars and ELMo included), a training step that learns."""
from __future__ import annotations

import torch
from helpers_heads import lengths_mask, train_losses

from elmo_bench.tasks.squad.model import span_loss
from elmo_bench.tasks.squad.task import SquadTask
from tests.helpers_heads import call

D, E = 6, 4
HEAD = {"hidden_dim": 5, "linear_dim": 8, "dropout": 0.0, "char_dim": 3, "char_filters": 4, "char_width": 3,
        "use_chars": True, "max_span_length": 4}


def _inputs(q_lens: list[int], c_lens: list[int], seed: int) -> tuple[dict, dict, dict, dict]:
    g = torch.Generator().manual_seed(seed)
    tq, tc = max(q_lens), max(c_lens)
    mask = {"question": lengths_mask(q_lens), "context": lengths_mask(c_lens)}
    emb = {"question": torch.randn(len(q_lens), tq, D, generator=g), "context": torch.randn(len(c_lens), tc, D, generator=g)}
    elmo = {"question": torch.randn(len(q_lens), tq, E, generator=g), "context": torch.randn(len(c_lens), tc, E, generator=g)}
    chars = {f: torch.randint(1, 262, (*m.shape, 50), generator=g) * m[..., None] for f, m in mask.items()}
    return emb, mask, elmo, chars


def _slice(d: dict, b: int, t: dict) -> dict:
    return {f: v[b:b + 1, : t[f]] for f, v in d.items()}


def test_shapes_and_padding_invariance() -> None:
    torch.manual_seed(0)
    task = SquadTask()
    head = task.build_head(HEAD, {"question": D, "context": D}, E).eval()
    assert task.max_span_length == 4
    emb, mask, elmo, chars = _inputs([3, 5], [7, 11], seed=1)
    out = call(head, emb, mask, elmo, chars, {})
    assert out["span_start_logits"].shape == out["span_end_logits"].shape == (2, 11) and "loss" not in out
    lens = {"question": 3, "context": 7}
    alone = call(head, _slice(emb, 0, lens), _slice(mask, 0, lens), _slice(elmo, 0, lens), _slice(chars, 0, lens), {})
    for key in ("span_start_logits", "span_end_logits"):
        assert torch.allclose(alone[key], out[key][:1, :7], atol=1e-5)
        assert (out[key][0, 7:] < -1e30).all()                      # padding can never be chosen


def test_training_step_lowers_loss_and_decodes_gold() -> None:
    torch.manual_seed(0)
    task = SquadTask()
    head = task.build_head(HEAD, {"question": D, "context": D}, 0)
    emb, mask, _, chars = _inputs([2, 4, 3], [6, 8, 5], seed=2)
    ctx = "k b c d e f g h"  # no "a": an article would normalise away
    offsets = [(2 * i, 2 * i + 1) for i in range(8)]
    examples = [{"id": f"q{i}", "span": span, "answers": [ctx[offsets[span[0]][0]:offsets[span[1]][1]]],
                 "context_text": ctx, "offsets": offsets} for i, span in enumerate([(1, 2), (5, 7), (0, 0)])]
    targets = task.targets(examples)
    losses = train_losses(head, lambda: call(head, emb, mask, None, chars, targets)["loss"], steps=30, lr=0.02)
    assert losses[-1] < 0.2 * losses[0]
    preds = task.decode(call(head.eval(), emb, mask, None, chars), examples)
    assert preds == ["b c", "f g h", "k"]
    assert task.metric(preds, examples) == {"exact_match": 100.0, "f1": 100.0}


def test_span_loss_ignores_questions_without_span() -> None:
    logits = torch.log(torch.tensor([[0.5, 0.25, 0.25], [0.1, 0.1, 0.8]]))
    loss = span_loss(logits, logits, torch.tensor([0, -100]), torch.tensor([1, -100]))
    assert torch.isclose(loss, -(torch.log(torch.tensor(0.5)) + torch.log(torch.tensor(0.25))))
    none = span_loss(logits, logits, torch.tensor([-100, -100]), torch.tensor([-100, -100]))
    assert none.item() == 0.0
