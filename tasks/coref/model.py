"""Lee et al. (2017) end-to-end coreference head: span ranking over all spans up to a width, within sentences.

Per document: BiLSTM contexts (run per sentence segment, so memory is bounded by the segment length) → every span
of width ≤ W inside one sentence → g = [x*_start; x*_end; attention-weighted sum of the span's word vectors;
width embedding] → mention score s_m → keep the ceil(spans_per_word · words) best spans (in document order) →
each kept span ranks its K nearest preceding kept spans plus the dummy ε (score 0) with
s(i, j) = s_m(i) + s_m(j) + s_a(i, j), s_a = FFNN([g_i; g_j; g_i ∘ g_j; φ(i, j)]), φ = distance bucket
(+ same-speaker, + genre embeddings when enabled). Loss = −log Σ over gold antecedents of softmax(s(i, ·)),
summed over kept spans, averaged over the documents of the batch. Distances are counted in kept spans between
the two mentions, as in the authors' implementation.
"""
from __future__ import annotations

import math
from typing import Mapping, Sequence

import torch
from torch import nn

from elmo_bench.data.batch import Batch
from elmo_bench.modules.char_cnn import CharCnn
from elmo_bench.modules.masked_rnn import MaskedBiRnn

NEG = -1e4  # score of an impossible antecedent (finite, so log-sum-exp stays finite)


def distance_bucket(d: torch.Tensor) -> torch.Tensor:
    """Distances ≥ 1 → bucket ids of [1, 2, 3, 4, 5-7, 8-15, 16-31, 32-63, 64+] (0..8)."""
    d = d.clamp(min=1)
    log_bucket = torch.floor(torch.log2(d.float())).long() + 2
    return torch.where(d <= 4, d - 1, log_bucket).clamp(max=8)


def ffnn(in_dim: int, hidden: int, layers: int, dropout: float) -> nn.Sequential:
    """`layers` ReLU layers of width `hidden` with dropout, then a linear scorer to 1."""
    mods: list[nn.Module] = []
    for k in range(layers):
        mods += [nn.Linear(in_dim if k == 0 else hidden, hidden), nn.ReLU(), nn.Dropout(dropout)]
    mods.append(nn.Linear(hidden if layers else in_dim, 1))
    return nn.Sequential(*mods)


def segments(sentence_ids: torch.Tensor, length: int, max_len: int) -> list[tuple[int, int]]:
    """[start, end) token ranges: one per sentence, long sentences cut into pieces of at most max_len."""
    ids = sentence_ids[:length].tolist()
    out = []
    start = 0
    for t in range(1, length + 1):
        if t == length or ids[t] != ids[start] or t - start == max_len:
            out.append((start, t))
            start = t
    return out


class CorefHead(nn.Module):
    """forward(batch) → top spans, antecedents and their scores (+ "loss").

    targets keys (from CorefTask.targets): ``sentence_ids`` (batch, time) — if absent, fixed windows of
    ``max_segment_len`` are used as sentences; optional ``speaker_ids`` (batch, time), ``genre`` (batch,);
    gold ``gold_spans`` (batch, M, 2) and ``gold_cluster_ids`` (batch, M) with −1 padding.
    """

    def __init__(self, input_dim: int, *, hidden: int, lstm_dropout: float, lexical_dropout: float,
                 max_span_width: int, feature_dim: int, ffnn_dim: int, ffnn_layers: int, ffnn_dropout: float,
                 spans_per_word: float, max_antecedents: int, max_segment_len: int, use_speakers: bool,
                 n_genres: int = 0, char_cnn: bool, char_dim: int = 8, char_filters: int = 50,
                 char_widths: Sequence[int] = (3, 4, 5), field: str = "tokens") -> None:
        super().__init__()
        self.field = field
        self.max_span_width = max_span_width
        self.spans_per_word = spans_per_word
        self.max_antecedents = max_antecedents
        self.max_segment_len = max_segment_len
        self.use_speakers = use_speakers
        self.n_genres = n_genres
        self.char_cnn = CharCnn(char_dim, char_filters, char_widths, padding="full") if char_cnn else None
        word_dim = input_dim + (self.char_cnn.output_dim if self.char_cnn is not None else 0)
        self.lexical_dropout = nn.Dropout(lexical_dropout)
        self.lstm = MaskedBiRnn(word_dim, hidden, "lstm")
        self.lstm_dropout = nn.Dropout(lstm_dropout)
        self.head_scorer = nn.Linear(2 * hidden, 1)
        self.width_embedding = nn.Embedding(max_span_width, feature_dim)
        span_dim = 4 * hidden + word_dim + feature_dim
        self.mention_scorer = ffnn(span_dim, ffnn_dim, ffnn_layers, ffnn_dropout)
        self.distance_embedding = nn.Embedding(9, feature_dim)
        pair_feat = feature_dim
        if use_speakers:
            self.speaker_embedding = nn.Embedding(2, feature_dim)
            pair_feat += feature_dim
        if n_genres:
            self.genre_embedding = nn.Embedding(n_genres, feature_dim)
            pair_feat += feature_dim
        self.antecedent_scorer = ffnn(3 * span_dim + pair_feat, ffnn_dim, ffnn_layers, ffnn_dropout)

    # ---- pieces -------------------------------------------------------------------------------------------------
    def _words(self, batch: Batch) -> torch.Tensor:
        """[lexical dropout(GloVe ; char CNN) ; ELMo_in] → (batch, time, word_dim); ELMo was dropped once upstream."""
        extra = [self.char_cnn(batch.chars(self.field, "CorefHead"))] if self.char_cnn is not None else []
        return batch.inputs(self.field, self.lexical_dropout, extra)

    def _contextualize(self, words: torch.Tensor, lengths: list[int], sentence_ids: torch.Tensor | None
                       ) -> torch.Tensor:
        """BiLSTM over sentence segments of every document → (batch, time, 2·hidden)."""
        batch, t_len, _ = words.shape
        pieces: list[tuple[int, int, int]] = []
        for b in range(batch):
            sid = sentence_ids[b] if sentence_ids is not None else torch.arange(t_len, device=words.device) // self.max_segment_len
            pieces += [(b, s, e) for s, e in segments(sid, lengths[b], self.max_segment_len)]
        seg_len = max(e - s for _, s, e in pieces)
        seg = words.new_zeros(len(pieces), seg_len, words.shape[-1])
        for k, (b, s, e) in enumerate(pieces):
            seg[k, : e - s] = words[b, s:e]
        seg_lengths = torch.tensor([e - s for _, s, e in pieces], device=words.device)
        seg_mask = torch.arange(seg_len, device=words.device).unsqueeze(0) < seg_lengths.unsqueeze(1)
        out = self.lstm(seg, seg_mask)  # (segments, seg_len, 2h)
        ctx = words.new_zeros(batch, t_len, out.shape[-1])
        for k, (b, s, e) in enumerate(pieces):
            ctx[b, s:e] = out[k, : e - s]
        return self.lstm_dropout(ctx)

    def _candidate_spans(self, sent: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """All (start, end) with end − start < W inside one sentence; sent (time,) → starts, ends (spans,)."""
        t_len = sent.shape[0]
        starts = torch.arange(t_len, device=sent.device).unsqueeze(1).expand(t_len, self.max_span_width)
        ends = starts + torch.arange(self.max_span_width, device=sent.device).unsqueeze(0)
        ok = ends < t_len
        ok &= sent[starts] == sent[ends.clamp(max=t_len - 1)]
        return starts[ok], ends[ok]

    def _span_embeddings(self, ctx: torch.Tensor, words: torch.Tensor, starts: torch.Tensor, ends: torch.Tensor
                         ) -> torch.Tensor:
        """ctx (time, 2h), words (time, word_dim), spans (spans,) → g (spans, 4h + word_dim + feature_dim)."""
        widths = ends - starts
        offsets = torch.arange(self.max_span_width, device=ctx.device)
        idx = (starts.unsqueeze(1) + offsets).clamp(max=ctx.shape[0] - 1)  # (spans, W)
        inside = offsets.unsqueeze(0) <= widths.unsqueeze(1)
        logits = self.head_scorer(ctx).squeeze(-1).float()[idx].masked_fill(~inside, -1e9)  # fp32: -1e9 overflows fp16
        attn = torch.softmax(logits, dim=1)  # (spans, W)
        # head = Σ_w attn[s, w] · words[start_s + w], as a sparse (spans, time) @ (time, word_dim) product so the
        # (spans, W, word_dim) gather of word vectors is never built (it dominates memory on long documents)
        rows = torch.arange(idx.shape[0], device=ctx.device).unsqueeze(1).expand_as(idx)[inside]
        weights = torch.sparse_coo_tensor(torch.stack([rows, idx[inside]]), attn[inside].float(),
                                          (idx.shape[0], words.shape[0]), check_invariants=False)
        with torch.autocast(ctx.device.type, enabled=False):  # fp32: autocast's addmm casts one side only
            head = torch.sparse.mm(weights, words.float())
        return torch.cat([ctx[starts], ctx[ends], head, self.width_embedding(widths)], dim=-1)

    def pair_scores(self, g: torch.Tensor, ant: torch.Tensor, feats: torch.Tensor) -> torch.Tensor:
        """s_a(i, j) = FFNN([g_i; g_j; g_i ∘ g_j; φ]) for g (k, span_dim), ant (k, K), φ (k, K, features) → (k, K).

        The first linear layer is applied piecewise (W_i g_i + W_j g_j + W_p (g_i ∘ g_j) + W_φ φ), which equals
        the layer on the concatenation but never builds the (k, K, 3·span_dim) tensor."""
        first = self.antecedent_scorer[0]
        d = g.shape[-1]
        w = first.weight
        hidden = ((g @ w[:, :d].T).unsqueeze(1) + (g @ w[:, d:2 * d].T)[ant]
                  + (g.unsqueeze(1) * g[ant]) @ w[:, 2 * d:3 * d].T + feats @ w[:, 3 * d:].T + first.bias)
        return self.antecedent_scorer[1:](hidden).squeeze(-1)

    # ---- forward ------------------------------------------------------------------------------------------------
    def forward(self, batch: Batch) -> dict[str, torch.Tensor]:
        targets = batch.targets
        m = batch.mask(self.field)
        lengths = m.long().sum(1).tolist()
        words = self._words(batch)  # (batch, time, word_dim)
        sentence_ids = targets.get("sentence_ids")
        ctx = self._contextualize(words, lengths, sentence_ids)
        results = []
        losses = []
        for b, n in enumerate(lengths):
            sent = sentence_ids[b, :n] if sentence_ids is not None else torch.arange(n, device=words.device) // self.max_segment_len
            results.append(self._document(ctx[b, :n], words[b, :n], sent.to(words.device), b, targets))
            if "loss" in results[-1]:
                losses.append(results[-1]["loss"])
        return self._collate(results, losses, words)

    def _document(self, ctx: torch.Tensor, words: torch.Tensor, sent: torch.Tensor, b: int,
                  targets: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        n = ctx.shape[0]
        starts, ends = self._candidate_spans(sent)
        g = self._span_embeddings(ctx, words, starts, ends)
        scores = self.mention_scorer(g).squeeze(-1)  # (spans,)
        k = min(int(math.ceil(self.spans_per_word * n)), scores.shape[0])
        top = torch.topk(scores, k).indices.sort().values  # document order (start, then end)
        t_starts, t_ends, t_g, t_s = starts[top], ends[top], g[top], scores[top]
        n_ant = min(self.max_antecedents, max(k - 1, 1))
        offsets = torch.arange(1, n_ant + 1, device=ctx.device)
        ant = torch.arange(k, device=ctx.device).unsqueeze(1) - offsets.unsqueeze(0)  # (k, K)
        valid = ant >= 0
        ant = ant.clamp(min=0)
        feats = [self.distance_embedding(distance_bucket(offsets)).unsqueeze(0).expand(k, -1, -1)]
        if self.use_speakers and "speaker_ids" in targets:
            spk = targets["speaker_ids"][b, :n].to(ctx.device)[t_starts]
            feats.append(self.speaker_embedding((spk.unsqueeze(1) == spk[ant]).long()))
        elif self.use_speakers:
            feats.append(self.speaker_embedding(torch.zeros(k, n_ant, dtype=torch.long, device=ctx.device)))
        if self.n_genres:
            genre = targets["genre"][b] if "genre" in targets else torch.tensor(0, device=ctx.device)
            feats.append(self.genre_embedding(genre.to(ctx.device).view(1, 1)).expand(k, n_ant, -1))
        pair_scores = self.pair_scores(t_g, ant, torch.cat(feats, dim=-1)) + t_s.unsqueeze(1) + t_s[ant]
        pair_scores = pair_scores.masked_fill(~valid, NEG)
        all_scores = torch.cat([pair_scores.new_zeros(k, 1), pair_scores], dim=1)  # (k, K+1), column 0 = ε
        out = {"starts": t_starts, "ends": t_ends, "antecedents": ant.masked_fill(~valid, -1), "scores": all_scores}
        if "gold_spans" in targets:
            gold = targets["gold_spans"][b]
            gid = targets["gold_cluster_ids"][b]
            keep = gid >= 0
            lookup = {(int(s), int(e)): int(c) + 1 for (s, e), c in zip(gold[keep].tolist(), gid[keep].tolist())}
            cluster = torch.tensor([lookup.get((int(s), int(e)), 0) for s, e in zip(t_starts, t_ends)],
                                   dtype=torch.long, device=ctx.device)
            same = (cluster[ant] == cluster.unsqueeze(1)) & valid & (cluster.unsqueeze(1) > 0)
            gold_mask = torch.cat([~same.any(1, keepdim=True), same], dim=1)  # dummy is gold when nothing else is
            gold_scores = all_scores.masked_fill(~gold_mask, NEG)
            out["loss"] = (torch.logsumexp(all_scores, 1) - torch.logsumexp(gold_scores, 1)).sum()
        return out

    @staticmethod
    def _collate(results: list[dict[str, torch.Tensor]], losses: list[torch.Tensor], x: torch.Tensor
                 ) -> dict[str, torch.Tensor]:
        """Per-document results → padded batch tensors: top_spans (batch, k, 2) −1 padded, antecedents
        (batch, k, K) −1 = impossible, antecedent_scores (batch, k, K+1) with column 0 the dummy ε."""
        batch = len(results)
        k_max = max(r["starts"].shape[0] for r in results)
        a_max = max(r["antecedents"].shape[1] for r in results)
        spans = x.new_full((batch, k_max, 2), -1, dtype=torch.long)
        ants = x.new_full((batch, k_max, a_max), -1, dtype=torch.long)
        scores = x.new_full((batch, k_max, a_max + 1), NEG)
        for b, r in enumerate(results):
            k, a = r["antecedents"].shape
            spans[b, :k, 0], spans[b, :k, 1] = r["starts"], r["ends"]
            ants[b, :k, :a] = r["antecedents"]
            scores[b, :k, : a + 1] = r["scores"]
        out = {"top_spans": spans, "antecedents": ants, "antecedent_scores": scores}
        if losses:
            out["loss"] = torch.stack(losses).sum() / batch
        return out


def clusters_from_output(top_spans: torch.Tensor, antecedents: torch.Tensor, scores: torch.Tensor
                         ) -> list[list[tuple[int, int]]]:
    """One document's top_spans (k, 2), antecedents (k, K), antecedent_scores (k, K+1) → predicted clusters:
    each span links to its best-scoring antecedent unless the dummy ε (column 0) wins."""
    cluster_of: dict[int, int] = {}
    clusters: list[list[tuple[int, int]]] = []
    best = scores.argmax(dim=1).tolist()
    spans = top_spans.tolist()
    for i, choice in enumerate(best):
        if spans[i][0] < 0 or choice == 0:
            continue
        j = int(antecedents[i, choice - 1])
        if j < 0:
            continue
        if j not in cluster_of:
            cluster_of[j] = len(clusters)
            clusters.append([tuple(spans[j])])
        cluster_of[i] = cluster_of[j]
        clusters[cluster_of[j]].append(tuple(spans[i]))
    return clusters
