"""NER head + task: shapes, masking, a tiny training run where the CRF loss falls, decode and metric."""
from __future__ import annotations

import torch
from helpers_heads import train_losses

from elmo_bench.tasks.ner.task import NerTask
from tests.helpers_heads import call

EXAMPLES = [
    {"id": "a", "tokens": ["Ada", "met", "Bo", "in", "Rome"], "tags": ["B-PER", "O", "B-PER", "O", "B-LOC"]},
    {"id": "b", "tokens": ["Acme", "hired", "Cy"], "tags": ["B-ORG", "O", "B-PER"]},
    {"id": "c", "tokens": ["Rome", "is", "big"], "tags": ["B-LOC", "O", "O"]},
    {"id": "d", "tokens": ["Acme", "Corp", "left", "Rome"], "tags": ["B-ORG", "I-ORG", "O", "B-LOC"]},
]
DIM = 6


def batch(examples, vocab_table: torch.Tensor, vocab: dict[str, int]):
    """Fake engine: a fixed random vector per word type, char ids from the code points, left-aligned mask."""
    time = max(len(e["tokens"]) for e in examples)
    ids = torch.zeros(len(examples), time, dtype=torch.long)
    chars = torch.zeros(len(examples), time, 50, dtype=torch.long)
    mask = torch.zeros(len(examples), time, dtype=torch.bool)
    for b, e in enumerate(examples):
        for t, w in enumerate(e["tokens"]):
            ids[b, t] = vocab[w]
            mask[b, t] = True
            chars[b, t, : len(w)] = torch.tensor([min(ord(c), 255) + 1 for c in w])
    return {"tokens": vocab_table[ids] * mask.unsqueeze(2)}, {"tokens": mask}, {"tokens": chars}


def setup():
    torch.manual_seed(0)
    task = NerTask()
    task.fit_labels({"train": EXAMPLES})
    vocab = {w: i for i, w in enumerate(sorted({w for e in EXAMPLES for w in e["tokens"]}))}
    table = torch.randn(len(vocab), DIM)
    head = task.build_head({"char_dim": 4, "char_filters": 5, "char_width": 3, "lstm_hidden": [8, 8], "dropout": 0.1,
                            "constrain_decoding": True},
                           {"tokens": DIM}, elmo_output_dim=0)
    return task, head, table, vocab


def test_labels_and_targets() -> None:
    task, _, _, _ = setup()
    assert task.labels == ["O", "B-LOC", "I-LOC", "B-ORG", "I-ORG", "B-PER", "I-PER"]
    t = task.targets(EXAMPLES[1:3])["tags"]
    assert t.shape == (2, 3)
    assert t.tolist() == [[3, 0, 5], [1, 0, 0]]


def test_training_step_lowers_loss_and_decodes() -> None:
    task, head, table, vocab = setup()
    emb, mask, chars = batch(EXAMPLES, table, vocab)
    targets = task.targets(EXAMPLES)
    head.train()
    losses = train_losses(head, lambda: call(head, emb, mask, {"tokens": None}, chars, targets)["loss"], steps=40, lr=0.02)
    assert losses[-1] < 0.5 * losses[0]
    head.eval()
    out = call(head, emb, mask, None, chars, {})
    assert "loss" not in out
    assert out["emissions"].shape == (4, 5, len(task.labels))
    preds = task.decode(out, EXAMPLES)
    assert [len(p) for p in preds] == [5, 3, 3, 4]
    assert task.metric(preds, EXAMPLES)["f1"] == 100.0
    # an output without Viterbi paths (training mode) is decoded from its emissions by the same Viterbi
    assert task.decode({"emissions": out["emissions"], "mask": out["mask"]}, EXAMPLES) == preds


def test_padding_does_not_change_emissions_and_elmo_out_is_used() -> None:
    torch.manual_seed(1)
    task = NerTask()
    task.fit_labels({"train": EXAMPLES})
    head = task.build_head({"char_dim": 4, "char_filters": 5, "char_width": 3, "lstm_hidden": [8], "dropout": 0.5,
                            "constrain_decoding": True},
                           {"tokens": DIM}, elmo_output_dim=3).eval()
    vocab = {w: i for i, w in enumerate(sorted({w for e in EXAMPLES for w in e["tokens"]}))}
    table = torch.randn(len(vocab), DIM)
    emb, mask, chars = batch(EXAMPLES[1:3], table, vocab)
    elmo = {"tokens": torch.randn(2, 3, 3)}
    alone_emb, alone_mask, alone_chars = batch(EXAMPLES[2:3], table, vocab)
    full = call(head, emb, mask, elmo, chars, {})
    alone = call(head, alone_emb, alone_mask, {"tokens": elmo["tokens"][1:2]}, alone_chars, {})
    assert torch.allclose(full["emissions"][1], alone["emissions"][0], atol=1e-6)
    assert full["predicted"][1].tolist() == alone["predicted"][0].tolist()
    elmo2 = {"tokens": elmo["tokens"] + 1.0}
    assert not torch.allclose(call(head, emb, mask, elmo2, chars, {})["emissions"], full["emissions"])


def test_state_dict_round_trip() -> None:
    task, _, _, _ = setup()
    other = NerTask()
    other.load_state_dict(task.state_dict())
    assert other.labels == task.labels
