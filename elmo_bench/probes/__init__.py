"""The shipped probes, one folder each (``config.py``: the torch-free declaration and settings; ``probe.py``: the run
function), found by elmo_bench.probe.registry. Nothing here imports them."""
