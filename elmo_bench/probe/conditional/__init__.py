"""Conditional probing (Hewitt et al. 2021): bits a layer adds beyond a baseline. config.py declares it."""
