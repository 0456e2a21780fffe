"""A seventh task that lives in the tests: sentence polarity (0/1) from mean-pooled inputs.

The whole task is this folder: config.py (its declaration), task.py, conf/ (task/tiny.yaml, data/default_tiny.yaml,
found by Hydra through hydra_plugins.elmo_bench_tasks) and samples/. Copied under tasks/ it is registered with no
other edit (tests/test_task_plugin.py); the engine tests register it by hand (tests/engine_helpers.py).
"""
