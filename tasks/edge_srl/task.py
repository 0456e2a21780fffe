"""EdgeSrlTask: edge probing, (predicate, argument) → its CoNLL-2005 role; scored on A0-A5, AA and AM-*.

The reader (reader.py) turns the source annotation into edge targets (elmo_bench.data.edge); everything else is the
edge-probing task every such task is (elmo_bench.tasks.edge_probing). docs/edge-probing.md.
"""
from __future__ import annotations

from elmo_bench.tasks.edge_probing import EdgeProbingTask
from elmo_bench.tasks.edge_srl.reader import read_native


class EdgeSrlTask(EdgeProbingTask):
    name = "edge_srl"
    two_spans = True
    metric_kind = "srl_roles"
    read_native = staticmethod(read_native)
