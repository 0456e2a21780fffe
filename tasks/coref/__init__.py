"""Coreference resolution (Lee et al. 2017) with reference-scorer v8.01 metrics."""
