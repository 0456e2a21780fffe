"""The task registry, the only one: ``cfg.task.name`` → the Task subclass (``module:Class``), imported when used.

Adding a task touches ``tasks/<new>/``, ``conf/task/<new>.yaml`` (its ``name`` is the key here) and this one line
(tests/tiny_task shows a seventh task added that way and run through the engine).
"""
TASKS: dict[str, str] = {
    "ner": "elmo_bench.tasks.ner.task:NerTask",
    "sst": "elmo_bench.tasks.sst.task:SstTask",
    "snli": "elmo_bench.tasks.snli.task:SnliTask",
    "squad": "elmo_bench.tasks.squad.task:SquadTask",
    "srl": "elmo_bench.tasks.srl.task:SrlTask",
    "coref": "elmo_bench.tasks.coref.task:CorefTask",
    "pos": "elmo_bench.tasks.pos.task:PosTask",
}
