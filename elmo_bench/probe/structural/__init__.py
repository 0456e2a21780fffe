"""Hewitt & Manning's structural probes: config.py declares them."""
