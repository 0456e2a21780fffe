"""The converged linear POS probe (paper Table 6): elmo_bench/probes/pos/config.py declares it."""
