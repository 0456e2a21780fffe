"""The task registry, the only one: ``cfg.task.name`` → the Task subclass (``module:Class``), imported when used.

Adding a task touches ``tasks/<new>/``, ``conf/task/<new>.yaml`` (its ``name`` is the key here) and this one line
(tests/tiny_task shows a seventh task added that way and run through the engine).
"""
TASKS: dict[str, str] = {
    "ner": "tasks.ner.task:NerTask",
    "sst": "tasks.sst.task:SstTask",
    "snli": "tasks.snli.task:SnliTask",
    "squad": "tasks.squad.task:SquadTask",
    "srl": "tasks.srl.task:SrlTask",
    "coref": "tasks.coref.task:CorefTask",
    "pos": "tasks.pos.task:PosTask",
}
