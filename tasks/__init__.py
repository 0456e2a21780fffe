"""The tasks, one package each (tasks/<name>/), installed as ``elmo_bench.tasks``. Each declares itself in its
torch-free ``config.py`` (``TASK = TaskDeclaration(...)``, elmo_bench.tasks.declaration); the registry
(elmo_bench.tasks.registry) finds them by scanning this package, so adding a task edits nothing outside its folder.
"""
