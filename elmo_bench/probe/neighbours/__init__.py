"""The nearest-neighbour probe of the paper's Table 4, made measurable (sense agreement@k): config.py declares it."""
