"""EdgeDepTask: edge probing, (dependent, head) → the full UD relation with subtypes; the root a self-pair labelled root.

The reader (reader.py) turns the source annotation into edge targets (elmo_bench.data.edge); everything else is the
edge-probing task every such task is (elmo_bench.tasks.edge_probing). docs/edge-probing.md.
"""
from __future__ import annotations

from elmo_bench.tasks.edge_dep.reader import read_native
from elmo_bench.tasks.edge_probing import EdgeProbingTask


class EdgeDepTask(EdgeProbingTask):
    name = "edge_dep"
    two_spans = True
    metric_kind = "micro"
    read_native = staticmethod(read_native)
