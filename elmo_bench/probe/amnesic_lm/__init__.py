"""Amnesic probing of the biLM's own LM (Elazar et al. 2021): erase a concept inside, score the LM: config.py."""
