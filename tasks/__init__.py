"""The task registry, the only one: ``cfg.task.name`` → the Task subclass (``module:Class``), imported when used.

Adding a task touches ``tasks/<new>/``, ``conf/task/<new>.yaml`` (its ``name`` is the key here) and this one line
(tests/tiny_task shows a seventh task added that way and run through the engine, the report and ``elmo-bench
score``). Everything about a task is behind its Task class (elmo_bench.tasks.api): the engine and ``elmo-bench score``
look it up here; the report knows it only from the run records the engine wrote.
"""
TASKS: dict[str, str] = {
    "ner": "elmo_bench.tasks.ner.task:NerTask",
    "sst": "elmo_bench.tasks.sst.task:SstTask",
    "snli": "elmo_bench.tasks.snli.task:SnliTask",
    "squad": "elmo_bench.tasks.squad.task:SquadTask",
    "srl": "elmo_bench.tasks.srl.task:SrlTask",
    "coref": "elmo_bench.tasks.coref.task:CorefTask",
    "pos": "elmo_bench.tasks.pos.task:PosTask",
    "edge_pos": "elmo_bench.tasks.edge_pos.task:EdgePosTask",
    "edge_chunk": "elmo_bench.tasks.edge_chunk.task:EdgeChunkTask",
    "edge_dep": "elmo_bench.tasks.edge_dep.task:EdgeDepTask",
    "edge_ner": "elmo_bench.tasks.edge_ner.task:EdgeNerTask",
    "edge_srl": "elmo_bench.tasks.edge_srl.task:EdgeSrlTask",
    "edge_coref": "elmo_bench.tasks.edge_coref.task:EdgeCorefTask",
}
