"""The SQuAD v1.1 task as the engine sees it: read (optionally article slices of one file), build the
BiDAF + self-attention head, decode capped spans to context text, score EM/F1 with the official semantics."""
from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any, Mapping, Sequence

import torch
from torch import nn

from elmo_bench.base.atomic import atomic_write_text
from elmo_bench.base.errors import DataError
from elmo_bench.data.data_options import data_options
from elmo_bench.data.hub import load_split
from elmo_bench.data.splits import source_of, split_location
from elmo_bench.modules.labels import IGNORE
from elmo_bench.tasks.api import Example, Task
from elmo_bench.tasks.squad import metric as squad_metric
from elmo_bench.tasks.squad.config import DataOptions
from elmo_bench.tasks.squad.decode import best_spans, span_text
from elmo_bench.tasks.squad.metric import evaluate, f1_score, metric_max_over_ground_truths
from elmo_bench.tasks.squad.model import BidafSelfAttention
from elmo_bench.tasks.squad.reader import article_indices, carve_articles, examples_from_squad, hub_to_squad, load_json

log = logging.getLogger(__name__)
SPLITS: tuple[str, ...] = ("train", "dev", "test")


class SquadTask(Task):
    """Extractive QA. After ``read``, ``self.stats[split]`` holds the reader's counts (questions, answers,
    unalignable, inexact, truncated contexts, ...) for the report."""

    name = "squad"
    text_fields = ("question", "context")
    main_metric = "f1"

    def __init__(self) -> None:
        self.stats: dict[str, dict[str, int]] = {}
        self.max_span_length: int | None = None  # conf/task/squad.yaml head.max_span_length, set by build_head

    def read(self, data_cfg: Mapping[str, Any]) -> dict[str, list[Example]]:
        """Splits named in data_cfg (local: file paths; hub / disk: ``hub_splits``, see elmo_bench/data/splits.py).

        ``split_by_article: {split: [first, stop)}`` keeps only those articles of that split's file — the sandbox
        cuts the one local file (SQuAD dev) into train / dev / test this way. ``dev_from_train: {articles: N,
        seed: S}`` (with no dev split of its own) moves N training articles, drawn with seed S, to dev, so model
        selection never sees the official dev set, which is the test set here. Two splits read from one file
        must not share an article (DataError otherwise). ``max_context_tokens`` truncates longer paragraphs,
        counting them and the answers cut off (default: no truncation).
        """
        source = source_of(data_cfg)
        by_article = data_cfg.get("split_by_article") or {}
        carve = data_cfg.get("dev_from_train") or None
        max_ctx = data_cfg.get("max_context_tokens")
        offsets = data_options(DataOptions, data_cfg).answer_offsets
        parsed: dict[str, dict[str, Any]] = {}
        chosen: dict[str, tuple[str, list[int]]] = {}
        for split in SPLITS:
            where = split_location(data_cfg, split)
            if where is None:
                continue
            if where not in parsed:
                parsed[where] = self._parse(data_cfg, source, where)
            chosen[split] = (where, article_indices(len(parsed[where]["data"]), by_article.get(split), where))
        if carve:
            if "dev" in chosen:
                raise DataError("data config: both a dev split and dev_from_train are set; expected only one")
            if "train" not in chosen:
                raise DataError("data config: dev_from_train needs a train split to carve dev from")
            where, indices = chosen["train"]
            train_idx, dev_idx = carve_articles(indices, int(carve["articles"]), int(carve.get("seed", 0)), where)
            chosen["train"], chosen["dev"] = (where, train_idx), (where, dev_idx)
        _check_disjoint(chosen)
        splits: dict[str, list[Example]] = {}
        for split in SPLITS:
            if split not in chosen:
                continue
            where, indices = chosen[split]
            examples, stats = examples_from_squad(parsed[where], where, max_context_tokens=None if max_ctx is None
                                                  else int(max_ctx), indices=indices,
                                                  mismatched_answers=offsets)
            splits[split], self.stats[split] = examples, stats.as_dict()
            log.info("squad %s (%s, %d articles): %s", split, where, len(indices), self.stats[split])
        return splits

    @staticmethod
    def _parse(data_cfg: Mapping[str, Any], source: str, where: str) -> dict[str, Any]:
        """The official nested JSON object of one file or hub split."""
        if source == "local":
            return load_json(where)
        return hub_to_squad(load_split(data_cfg, where))

    def targets(self, examples: Sequence[Example]) -> dict[str, torch.Tensor]:
        """span_start / span_end (batch,): the first aligned gold span, -100 (ignored) when none aligned."""
        spans = [ex["span"] if ex.get("span") is not None else (IGNORE, IGNORE) for ex in examples]
        return {"span_start": torch.tensor([s for s, _ in spans], dtype=torch.long),
                "span_end": torch.tensor([e for _, e in spans], dtype=torch.long)}

    def build_head(self, head_cfg: Mapping[str, Any], input_dims: Mapping[str, int], elmo_output_dim: int) -> nn.Module:
        cfg = dict(head_cfg)
        self.max_span_length = int(cfg.pop("max_span_length"))
        dims = {input_dims[f] for f in self.text_fields}
        if len(dims) != 1:
            raise ValueError(f"the contextual BiGRU is shared by question and context; got input dims {dict(input_dims)}")
        return BidafSelfAttention(input_dim=dims.pop(), elmo_output_dim=elmo_output_dim, **cfg)

    def decode(self, output: Mapping[str, torch.Tensor], examples: Sequence[Example]) -> list[str]:
        """One answer text per question: the best span with start <= end, at most max_span_length tokens."""
        starts, ends = best_spans(output["span_start_logits"], output["span_end_logits"], output["context_mask"],
                                  self.max_span_length)
        return [span_text(ex["context_text"], ex["offsets"], s, e)
                for ex, s, e in zip(examples, starts.tolist(), ends.tolist())]

    def metric(self, predictions: Sequence[str], examples: Sequence[Example]) -> dict[str, float]:
        scores, _ = evaluate([(ex["id"], ex["answers"]) for ex in examples],
                             {ex["id"]: p for ex, p in zip(examples, predictions)})
        return scores

    statistics_kind = "ratio"

    def statistics(self, predictions: Sequence[str], examples: Sequence[Example]) -> list[list[float]]:
        """[F1 against the best gold answer (0..1), 1] per question: the official script's mean."""
        return [[float(metric_max_over_ground_truths(f1_score, p, ex["answers"])), 1.0]
                for p, ex in zip(predictions, examples, strict=True)]

    def record_predictions(self, predictions: Sequence[str], examples: Sequence[Example]) -> list[Any]:
        """Answer text → ``[char_start, char_end)`` of its first occurrence in the context (None: not in it), so
        the record holds no text of the dataset."""
        out: list[Any] = []
        for p, ex in zip(predictions, examples, strict=True):
            start = ex["context_text"].find(p) if p else -1
            out.append([start, start + len(p)] if start >= 0 else None)
        return out

    score_file_count = 2

    def score_files(self, *paths: str) -> dict[str, float]:
        """The official evaluate-v1.1.py: dataset JSON and {question id: answer} JSON → {"exact_match", "f1"}."""
        return squad_metric.score_files(*paths)

    def write_official(self, path: str | Path, predictions: Sequence[str], examples: Sequence[Example]) -> None:
        """The official prediction file: {question id: answer text}."""
        atomic_write_text(path, json.dumps({ex["id"]: p for ex, p in zip(examples, predictions, strict=True)}))

    def state_dict(self) -> dict[str, Any]:
        return {"max_span_length": self.max_span_length}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        if "max_span_length" in state:  # else build_head sets it from the run's config
            self.max_span_length = int(state["max_span_length"])


def _check_disjoint(chosen: Mapping[str, tuple[str, list[int]]]) -> None:
    """DataError when two splits read the same file or hub split and share an article (e.g. dev = test)."""
    names = list(chosen)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            (where_a, idx_a), (where_b, idx_b) = chosen[a], chosen[b]
            shared = sorted(set(idx_a) & set(idx_b)) if where_a == where_b else []
            if shared:
                raise DataError(f"data config: {a} and {b} share {len(shared)} article(s) of {where_a} (first: "
                                f"{shared[0]}); splits of one file must not overlap: set split_by_article or "
                                f"dev_from_train")
