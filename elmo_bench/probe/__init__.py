"""The probes: the framework (api, declaration, registry, settings, probe_cost), the shared methods (``lib/``, one
module per method) and one folder per probe (``<name>/config.py``: its torch-free declaration and settings; its run
function, cost and method modules beside it), found by elmo_bench.probe.registry. Nothing here imports a probe."""
