"""POS tagging with a linear head: the layer probe of the paper (Table 6)."""
