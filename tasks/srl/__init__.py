"""Semantic role labelling (He et al. 2017) with srl-eval.pl scoring."""
