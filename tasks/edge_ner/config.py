"""Task edge_ner's declaration; its ``task.head`` keys and defaults are every edge task's
(elmo_bench.tasks.edge_head_config); torch-free."""
from __future__ import annotations

from elmo_bench.tasks.declaration import TaskDeclaration
from elmo_bench.tasks.edge_head_config import EdgeHeadConfig as HeadConfig

#: task edge_ner as the registry (elmo_bench.tasks.registry) finds it: an edge-probing task (Tenney et al. 2019), in
#: the report's edge-probing table only (elmo_bench.report.edge_report), never in the ELMo paper's tables
TASK = TaskDeclaration("edge_ner", ".task:EdgeNerTask", HeadConfig, tables=("edge_probing",))
