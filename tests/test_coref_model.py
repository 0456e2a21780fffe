"""Lee et al. coref head: distance buckets, segments, span enumeration, shapes, a falling loss, decoding."""
from __future__ import annotations

import torch
from helpers_heads import train_losses

from elmo_bench.tasks.coref.model import clusters_from_output, distance_bucket, segments
from elmo_bench.tasks.coref.task import CorefTask
from tests.helpers_heads import call


def test_distance_buckets() -> None:
    d = torch.tensor([1, 2, 3, 4, 5, 7, 8, 15, 16, 31, 32, 63, 64, 500])
    assert distance_bucket(d).tolist() == [0, 1, 2, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8]


def test_segments_follow_sentences_and_cap_length() -> None:
    sid = torch.tensor([0, 0, 0, 1, 1, 1, 1, 1, 2, -1])
    assert segments(sid, 9, 3) == [(0, 3), (3, 6), (6, 8), (8, 9)]


def make_examples() -> list[dict]:
    return [
        {"tokens": ["Ann", "saw", "Bo", ".", "She", "waved", "at", "him", "."], "sentence_ids": [0] * 4 + [1] * 5,
         "speakers": None, "genre": None, "clusters": [[(0, 0), (4, 4)], [(2, 2), (7, 7)]]},
        {"tokens": ["It", "rained", "."], "sentence_ids": [0, 0, 0], "speakers": None, "genre": None,
         "clusters": []},
    ]


def head_and_batch(seed: int = 0):
    torch.manual_seed(seed)
    task = CorefTask()
    ex = make_examples()
    task.fit_labels({"train": ex})
    head = task.build_head({"hidden": 8, "max_span_width": 3, "feature_dim": 4, "ffnn_dim": 16, "ffnn_layers": 1,
                            "max_antecedents": 4, "max_segment_len": 4, "lexical_dropout": 0.0,
                            "lstm_dropout": 0.0, "ffnn_dropout": 0.0, "spans_per_word": 0.4,
                            "use_speakers": False, "char_cnn": False},
                           {"tokens": 6}, 0)
    x = torch.randn(2, 9, 6)
    mask = torch.zeros(2, 9, dtype=torch.bool)
    mask[0] = True
    mask[1, :3] = True
    return task, head, ex, {"tokens": x}, {"tokens": mask}


def test_span_enumeration_stays_inside_sentences() -> None:
    _, head, _, _, _ = head_and_batch()
    starts, ends = head._candidate_spans(torch.tensor([0, 0, 1, 1, 1]))
    assert list(zip(starts.tolist(), ends.tolist())) == [(0, 0), (0, 1), (1, 1), (2, 2), (2, 3), (2, 4), (3, 3),
                                                        (3, 4), (4, 4)]


def test_shapes_and_pruning() -> None:
    task, head, ex, emb, mask = head_and_batch()
    out = call(head, emb, mask, None, None, task.targets(ex))
    # doc 0: ceil(0.4·9) = 4 kept spans, K = min(4, 3) = 3; doc 1: ceil(0.4·3) = 2 kept spans
    assert out["top_spans"].shape == (2, 4, 2)
    assert out["antecedents"].shape == (2, 4, 3)
    assert out["antecedent_scores"].shape == (2, 4, 4)
    assert (out["top_spans"][1, 2:] == -1).all()
    assert out["loss"].dim() == 0
    # kept spans are in document order and antecedents always precede
    s = out["top_spans"][0].tolist()
    assert s == sorted(s)
    a = out["antecedents"][0]
    assert all(j < i for i in range(4) for j in a[i].tolist() if j >= 0)
    assert (out["antecedent_scores"][0, 0, 1:] < -1e3).all()  # the first span has no antecedent


def test_loss_falls_and_decoding_recovers_gold() -> None:
    task, head, ex, emb, mask = head_and_batch(1)
    # keep all 21 candidate spans (no pruning: a tiny model could otherwise prune the gold mentions away and
    # reach zero loss with every span linked to ε) and let every span reach every earlier one
    head.spans_per_word, head.max_antecedents = 3.0, 21
    targets = task.targets(ex)
    losses = train_losses(head, lambda: call(head, emb, mask, None, None, targets)["loss"], steps=150, lr=0.01)
    assert losses[-1] < 0.2 * losses[0]
    head.eval()
    preds = task.decode(call(head, emb, mask, None, None, targets), ex)
    assert sorted(map(sorted, preds[0])) == [[(0, 0), (4, 4)], [(2, 2), (7, 7)]]
    assert task.metric(preds, ex)["conll_f1"] > 99.0


def test_prediction_without_targets_uses_fixed_segments() -> None:
    task, head, ex, emb, mask = head_and_batch()
    head.eval()
    out = call(head, emb, mask, None, None, {})
    assert "loss" not in out and out["top_spans"].shape[0] == 2


def test_clusters_from_output_follow_best_antecedent() -> None:
    spans = torch.tensor([[0, 0], [2, 3], [5, 5], [7, 7]])
    ants = torch.tensor([[-1, -1], [0, -1], [1, 0], [2, 1]])
    scores = torch.tensor([[0., -9, -9], [-1., -9, -9], [0., -2, 3.], [0., 5., 1.]])
    # span 1 → ε; span 2 → antecedent 0 (column 2); span 3 → antecedent 2 (column 1)
    assert clusters_from_output(spans, ants, scores) == [[(0, 0), (5, 5), (7, 7)]]


def test_piecewise_pair_scores_equal_ffnn_on_concatenation() -> None:
    _, head, _, _, _ = head_and_batch()
    head.eval()
    g = torch.randn(5, head.width_embedding.embedding_dim + 4 * 8 + 6)
    ant = torch.tensor([[0, 0, 0], [0, 0, 0], [1, 0, 0], [2, 1, 0], [3, 2, 1]])
    feats = torch.randn(5, 3, 4)
    gi, gj = g.unsqueeze(1).expand(-1, 3, -1), g[ant]
    direct = head.antecedent_scorer(torch.cat([gi, gj, gi * gj, feats], dim=-1)).squeeze(-1)
    assert torch.allclose(head.pair_scores(g, ant, feats), direct, atol=1e-5)


def test_span_embedding_head_is_attention_weighted_word_sum() -> None:
    _, head, _, _, _ = head_and_batch()
    torch.manual_seed(3)
    ctx, words = torch.randn(6, 16), torch.randn(6, 6)
    starts, ends = torch.tensor([0, 1, 3, 5]), torch.tensor([2, 1, 4, 5])
    g = head._span_embeddings(ctx, words, starts, ends)
    alpha = head.head_scorer(ctx).squeeze(-1)
    for k, (s, e) in enumerate(zip(starts.tolist(), ends.tolist())):
        a = torch.softmax(alpha[s:e + 1], 0)
        expect = torch.cat([ctx[s], ctx[e], (a.unsqueeze(1) * words[s:e + 1]).sum(0),
                            head.width_embedding(torch.tensor(e - s))])
        assert torch.allclose(g[k], expect, atol=1e-5)
