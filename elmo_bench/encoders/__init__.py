"""Frozen encoders that yield layers per word: the biLM is one kind; the protocol is in ``protocol.py``."""
