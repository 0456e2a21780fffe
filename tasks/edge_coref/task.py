"""EdgeCorefTask: edge probing, every pair of gold mentions of a sentence → 1 (same entity) or 0; scored as the F1 of label 1.

The reader (reader.py) turns the source annotation into edge targets (elmo_bench.data.edge); everything else is the
edge-probing task every such task is (elmo_bench.tasks.edge_probing). docs/edge-probing.md.
"""
from __future__ import annotations

from elmo_bench.tasks.edge_coref.reader import read_native
from elmo_bench.tasks.edge_probing import EdgeProbingTask


class EdgeCorefTask(EdgeProbingTask):
    name = "edge_coref"
    two_spans = True
    metric_kind = "positive"
    read_native = staticmethod(read_native)
