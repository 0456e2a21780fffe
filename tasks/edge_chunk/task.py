"""EdgeChunkTask: edge probing, each CoNLL-2000 chunk → its type (NP, VP, PP, ...).

The reader (reader.py) turns the source annotation into edge targets (elmo_bench.data.edge); everything else is the
edge-probing task every such task is (elmo_bench.tasks.edge_probing). docs/edge-probing.md.
"""
from __future__ import annotations

from elmo_bench.tasks.edge_chunk.reader import read_native
from elmo_bench.tasks.edge_probing import EdgeProbingTask


class EdgeChunkTask(EdgeProbingTask):
    name = "edge_chunk"
    two_spans = False
    metric_kind = "micro"
    read_native = staticmethod(read_native)
