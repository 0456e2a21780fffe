"""The SQuAD v1.1 task as the engine sees it: read (optionally article slices of one file), build the
BiDAF + self-attention head, decode capped spans to context text, score EM/F1 with the official semantics."""
from __future__ import annotations

import logging
from typing import Any, Mapping, Sequence

import torch
from torch import nn

from elmo_bench.errors import DataError
from elmo_bench.task_api import Example, Task
from tasks.squad.decode import best_spans, span_text
from tasks.squad.metric import evaluate
from elmo_bench.modules.labels import IGNORE
from tasks.squad.model import BidafSelfAttention
from tasks.squad.reader import examples_from_squad, hub_to_squad, load_json

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
        self.max_span_length = 17

    def read(self, data_cfg: Mapping[str, Any]) -> dict[str, list[Example]]:
        """Splits named in data_cfg (local: file paths; hub: split names of ``hub_name``).

        ``split_by_article: {split: [first, stop)}`` keeps only those articles of that split's file — the sandbox
        cuts the one local file (SQuAD dev) into train / dev / test this way. ``max_context_tokens`` truncates
        longer paragraphs, counting them and the answers cut off (default: no truncation).
        """
        source = data_cfg.get("source", "local")
        by_article = data_cfg.get("split_by_article") or {}
        max_ctx = data_cfg.get("max_context_tokens")
        parsed: dict[str, dict[str, Any]] = {}
        splits: dict[str, list[Example]] = {}
        for split in SPLITS:
            where = data_cfg.get(split)
            if not where:
                continue
            where = str(where)
            if where not in parsed:
                if source == "hub":
                    import datasets  # deferred: heavy import, and only this code path needs it
                    hub_name = str(data_cfg.get("hub_name") or "squad")
                    parsed[where] = hub_to_squad(datasets.load_dataset(hub_name, split=where))
                elif source == "local":
                    parsed[where] = load_json(where)
                else:
                    raise DataError(f"data config: source={source!r}; expected 'local' or 'hub'")
            articles = by_article.get(split)
            examples, stats = examples_from_squad(parsed[where], where, articles,
                                                  None if max_ctx is None else int(max_ctx))
            splits[split], self.stats[split] = examples, stats.as_dict()
            log.info("squad %s (%s, articles %s): %s", split, where, articles or "all", self.stats[split])
        return splits

    def targets(self, examples: Sequence[Example]) -> dict[str, torch.Tensor]:
        """span_start / span_end (batch,): the first aligned gold span, -100 (ignored) when none aligned."""
        spans = [ex["span"] if ex.get("span") is not None else (IGNORE, IGNORE) for ex in examples]
        return {"span_start": torch.tensor([s for s, _ in spans], dtype=torch.long),
                "span_end": torch.tensor([e for _, e in spans], dtype=torch.long)}

    def build_head(self, head_cfg: Mapping[str, Any], input_dims: Mapping[str, int], elmo_output_dim: int) -> nn.Module:
        cfg = dict(head_cfg)
        self.max_span_length = int(cfg.pop("max_span_length", self.max_span_length))
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

    def state_dict(self) -> dict[str, Any]:
        return {"max_span_length": self.max_span_length}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.max_span_length = int(state.get("max_span_length", self.max_span_length))
