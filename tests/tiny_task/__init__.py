"""A seventh task that lives in the tests: sentence polarity (0/1) from mean-pooled inputs.

Adding it touched this folder (task.py, conf/task/tiny.yaml, conf/data/default_tiny.yaml, samples/) and one
registry line (``tasks.TASKS["tiny"] = "tests.tiny_task.task:TinyTask"``, set by the test); the engine is unchanged.
"""
