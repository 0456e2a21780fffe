"""The task registry: name → the Task subclass (``module:Class``), imported only when used.

Adding a task touches ``tasks/<new>/``, ``conf/task/<new>.yaml`` (whose ``target`` names the same class) and
this one line.
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
