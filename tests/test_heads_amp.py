"""Every task head trains and decodes under ``amp`` (torch.autocast in bf16 and fp16, on the CPU here): the loss is
finite, every gradient is finite and lands in the fp32 parameters, and decoding gives valid predictions. A dtype
clash inside a head (an fp32 buffer meeting a bf16 activation, an index_put of mixed dtypes) fails here."""
from __future__ import annotations

from typing import Any, Callable

import pytest
import torch

from elmo_bench.tasks.coref.task import CorefTask
from elmo_bench.tasks.ner.task import NerTask
from elmo_bench.tasks.snli.task import SnliTask
from elmo_bench.tasks.squad.task import SquadTask
from elmo_bench.tasks.srl.model import SrlHead
from elmo_bench.tasks.sst.task import SstTask
from tests import test_coref_model, test_ner_model, test_snli_model, test_squad_model, test_sst_model
from tests.helpers_heads import call

Case = tuple[torch.nn.Module, Callable[[], dict], Callable[[dict], list[Any]]]


def _ner() -> Case:
    task, head, table, vocab = test_ner_model.setup()
    emb, mask, chars = test_ner_model.batch(test_ner_model.EXAMPLES, table, vocab)
    targets = task.targets(test_ner_model.EXAMPLES)
    return head, lambda: call(head, emb, mask, None, chars, targets), \
        lambda out: task.decode(out, test_ner_model.EXAMPLES)


def _snli() -> Case:
    task = SnliTask()
    examples = [{"label": lab} for lab in ("entailment", "neutral", "contradiction", "neutral")]
    d, e = test_snli_model.D, test_snli_model.E
    head = task.build_head({"hidden_dim": 8, "projection_dim": None, "mlp_dim": None, "dropout": 0.1}, {"premise": d, "hypothesis": d}, e)
    emb, mask = test_snli_model._batch([4, 2, 5, 3], [3, 3, 1, 4], d, seed=4)
    elmo = {f: torch.randn(*m.shape, e) for f, m in mask.items()}
    targets = task.targets(examples)
    return head, lambda: call(head, emb, mask, elmo, None, targets), lambda out: task.decode(out, examples)


def _squad() -> Case:
    task = SquadTask()
    d, e = test_squad_model.D, test_squad_model.E
    head = task.build_head(test_squad_model.HEAD, {"question": d, "context": d}, e)
    emb, mask, elmo, chars = test_squad_model._inputs([2, 4, 3], [6, 8, 5], seed=2)
    ctx = "k b c d e f g h"
    offsets = [(2 * i, 2 * i + 1) for i in range(8)]
    examples = [{"id": f"q{i}", "span": span, "answers": ["b"], "context_text": ctx, "offsets": offsets}
                for i, span in enumerate([(1, 2), (5, 7), (0, 0)])]
    targets = task.targets(examples)
    return head, lambda: call(head, emb, mask, elmo, chars, targets), lambda out: task.decode(out, examples)


def _srl() -> Case:
    labels = ["O", "B-A0", "I-A0", "B-A1", "I-A1", "B-V"]
    head = SrlHead(input_dim=6, n_labels=len(labels), hidden=8, layers=2, predicate_dim=4, recurrent_dropout=0.1,
                   elmo_output_dim=5)
    x, mask = torch.randn(4, 5, 6), torch.ones(4, 5, dtype=torch.bool)
    mask[2, 3:] = False
    indicator = torch.zeros(4, 5, dtype=torch.long)
    indicator[torch.arange(4), torch.tensor([0, 2, 1, 4])] = 1
    targets = {"predicate_indicator": indicator, "tags": torch.randint(0, len(labels), (4, 5))}
    from elmo_bench.tasks.srl.decode import decode_batch

    return head, lambda: call(head, {"tokens": x}, {"tokens": mask}, {"tokens": torch.randn(4, 5, 5)}, None, targets), \
        lambda out: decode_batch(out["logits"], mask.sum(1).tolist(), labels)


def _coref() -> Case:
    task, head, examples, emb, mask = test_coref_model.head_and_batch(1)
    targets = task.targets(examples)
    return head, lambda: call(head, emb, mask, None, None, targets), lambda out: task.decode(out, examples)


def _sst() -> Case:
    task = SstTask()
    examples = [{"id": str(i), "tokens": ["w"] * n, "label": i % 5, "is_root": True} for i, n in enumerate([3, 5, 2, 4])]
    head = task.build_head(test_sst_model.HEAD, {"tokens": 4}, elmo_output_dim=3)
    x, mask = test_sst_model.padded([torch.randn(len(ex["tokens"]), 4) for ex in examples])
    targets = task.targets(examples)
    elmo = {"tokens": torch.randn(*mask.shape, 3)}
    return head, lambda: call(head, {"tokens": x}, {"tokens": mask}, elmo, None, targets), \
        lambda out: task.decode(out, examples)


CASES = {"ner": _ner, "snli": _snli, "squad": _squad, "srl": _srl, "coref": _coref, "sst": _sst}


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "fp16"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_head_trains_and_decodes_under_autocast(name: str, dtype: torch.dtype) -> None:
    torch.manual_seed(0)
    head, forward, decode = CASES[name]()
    head.train()
    with torch.autocast("cpu", dtype=dtype):
        loss = forward()["loss"]
    assert torch.isfinite(loss), f"{name}: loss {loss} under {dtype}"
    loss.float().backward()
    grads = [p.grad for p in head.parameters() if p.requires_grad and p.grad is not None]
    assert grads and all(g.dtype == torch.float32 and torch.isfinite(g).all() for g in grads)
    head.eval()
    with torch.no_grad(), torch.autocast("cpu", dtype=dtype):
        predictions = decode(forward())
    assert len(predictions) > 0 and all(p is not None for p in predictions)
