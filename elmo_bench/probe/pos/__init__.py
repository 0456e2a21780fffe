"""The converged linear POS probe (paper Table 6): elmo_bench/probe/pos/config.py declares it."""
