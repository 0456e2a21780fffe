"""The coreference task as the engine sees it: one example per document, Lee et al. head, v8.01 metrics.

``targets`` carries the sentence ids (and speakers, genre) that the head needs as inputs, so the engine must call
it at prediction time too; the gold span tensors are included only when every example has ``clusters``.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Mapping, Sequence

import torch
from torch import nn

from elmo_bench.base.errors import DataError
from elmo_bench.data.conll2012_coref import Cluster, read_split
from elmo_bench.data.splits import split_location
from elmo_bench.tasks.api import Example, Task
from elmo_bench.tasks.coref.metric import document_counts, score_documents
from elmo_bench.tasks.coref.metric import score_files as metric_files
from elmo_bench.tasks.coref.model import CorefHead, clusters_from_output
from elmo_bench.tasks.coref.writer import write_conll

log = logging.getLogger(__name__)
SPLITS: tuple[str, ...] = ("train", "dev", "test")


class CorefTask(Task):
    name = "coref"
    text_fields = ("tokens",)
    main_metric = "conll_f1"

    def __init__(self) -> None:
        self.genres: list[str] = []

    def read(self, data_cfg: Mapping[str, Any]) -> dict[str, list[Example]]:
        splits = {}
        for split in SPLITS:
            if split_location(data_cfg, split) is not None:
                splits[split] = read_split(data_cfg, split)
                log.info("coref %s: %d documents, %d mentions from %s", split, len(splits[split]),
                         sum(len(c) for d in splits[split] for c in d["clusters"]), split_location(data_cfg, split))
        return splits

    def fit_labels(self, splits: Mapping[str, Sequence[Example]]) -> None:
        """Genre vocabulary (OntoNotes name prefixes) of the training documents; empty for LitBank."""
        self.genres = sorted({ex["genre"] for ex in splits["train"] if ex.get("genre")})

    def targets(self, examples: Sequence[Example]) -> dict[str, torch.Tensor]:
        """sentence_ids (batch, time) −1 padded; speaker_ids (batch, time) when speakers are known; genre (batch,)
        when genres exist; gold_spans (batch, M, 2) and gold_cluster_ids (batch, M), −1 padded."""
        batch, t_len = len(examples), max(len(ex["tokens"]) for ex in examples)
        sent = torch.full((batch, t_len), -1, dtype=torch.long)
        for b, ex in enumerate(examples):
            sent[b, : len(ex["tokens"])] = torch.tensor(ex["sentence_ids"], dtype=torch.long)
        out = {"sentence_ids": sent}
        if any(ex.get("speakers") for ex in examples):
            spk = torch.zeros(batch, t_len, dtype=torch.long)
            for b, ex in enumerate(examples):
                names: dict[str, int] = {}
                ids = [names.setdefault(s, len(names)) for s in (ex.get("speakers") or ["_"] * len(ex["tokens"]))]
                spk[b, : len(ids)] = torch.tensor(ids, dtype=torch.long)
            out["speaker_ids"] = spk
        if self.genres:
            out["genre"] = torch.tensor([self.genres.index(ex["genre"]) if ex.get("genre") in self.genres else 0
                                         for ex in examples], dtype=torch.long)
        if all("clusters" in ex for ex in examples):
            m_max = max(1, max(sum(len(c) for c in ex["clusters"]) for ex in examples))
            spans = torch.full((batch, m_max, 2), -1, dtype=torch.long)
            cids = torch.full((batch, m_max), -1, dtype=torch.long)
            for b, ex in enumerate(examples):
                flat = [(s, e, c) for c, cl in enumerate(ex["clusters"]) for s, e in cl]
                if flat:
                    spans[b, : len(flat)] = torch.tensor([(s, e) for s, e, _ in flat], dtype=torch.long)
                    cids[b, : len(flat)] = torch.tensor([c for _, _, c in flat], dtype=torch.long)
            out["gold_spans"], out["gold_cluster_ids"] = spans, cids
        return out

    def build_head(self, head_cfg: Mapping[str, Any], input_dims: Mapping[str, int], elmo_output_dim: int) -> nn.Module:
        """ELMo sits at the input only (Lee et al. + ELMo); an ELMo output placement is refused."""
        if elmo_output_dim:
            raise ValueError("coref uses ELMo at the input only; set elmo.placement: input")
        cfg = dict(head_cfg)
        if cfg.pop("use_genres", None):   # absent (a head built by hand): no genres
            cfg["n_genres"] = max(1, len(self.genres))
        return CorefHead(input_dim=input_dims["tokens"], **cfg)

    def decode(self, output: Mapping[str, torch.Tensor], examples: Sequence[Example]) -> list[list[Cluster]]:
        """Predicted clusters per document, as lists of inclusive (start, end) token spans."""
        return [clusters_from_output(output["top_spans"][b], output["antecedents"][b],
                                     output["antecedent_scores"][b].detach())
                for b in range(len(examples))]

    def metric(self, predictions: Sequence[Sequence[Cluster]], examples: Sequence[Example]) -> dict[str, float]:
        res = score_documents((ex["clusters"], pred) for ex, pred in zip(examples, predictions, strict=True))
        flat = {"conll_f1": res["conll_f1"]}
        for name in ("muc", "bcub", "ceafe"):
            for k, v in res[name].items():
                flat[f"{name}_{k}"] = v
        return flat

    statistics_kind = "conll_f1"

    def statistics(self, predictions: Sequence[Sequence[Cluster]], examples: Sequence[Example]) -> list[list[float]]:
        """Per document the 12 counts the reference scorer sums (metric.document_counts)."""
        return [document_counts(ex["clusters"], p) for p, ex in zip(predictions, examples, strict=True)]

    score_file_count = 2

    def score_files(self, *paths: str) -> dict:
        """Key and response CoNLL-2012 files → the scorer's MUC, B-cubed, CEAF-e and ``conll_f1``."""
        return metric_files(*paths)

    def write_official(self, path: str | Path, predictions: Sequence[Sequence[Cluster]],
                       examples: Sequence[Example]) -> None:
        """Predicted clusters as a CoNLL-2012 response file: the rows of the key file the documents were read
        from (each example's ``path``), last column replaced."""
        keys = {ex.get("path") for ex in examples}
        if len(keys) != 1 or None in keys or not Path(str(next(iter(keys)))).is_file():
            raise DataError(f"coref: a response file copies the rows of one key file; the documents come from "
                            f"{sorted(map(str, keys))}")
        write_conll(str(next(iter(keys))), path,
                    {(ex["doc_name"], ex["part"]): p for ex, p in zip(examples, predictions, strict=True)})

    def state_dict(self) -> dict[str, Any]:
        return {"genres": list(self.genres)}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        if "genres" in state:
            self.genres = list(state["genres"])
