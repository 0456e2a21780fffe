"""The WSD nearest-neighbour probe (paper Table 5): config.py declares it."""
