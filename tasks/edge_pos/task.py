"""EdgePosTask: edge probing, each word → its PTB tag (UD English-EWT XPOS).

The reader (reader.py) turns the source annotation into edge targets (elmo_bench.data.edge); everything else is the
edge-probing task every such task is (elmo_bench.tasks.edge_probing). docs/edge-probing.md.
"""
from __future__ import annotations

from elmo_bench.tasks.edge_pos.reader import read_native
from elmo_bench.tasks.edge_probing import EdgeProbingTask


class EdgePosTask(EdgeProbingTask):
    name = "edge_pos"
    two_spans = False
    metric_kind = "micro"
    read_native = staticmethod(read_native)
