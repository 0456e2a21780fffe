"""LEACE concept erasure per layer (Belrose et al. 2023): config.py declares it."""
