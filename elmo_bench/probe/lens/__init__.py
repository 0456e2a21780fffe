"""Probe ``lens``: the logit lens and the tuned lens (Belrose et al. 2023) on the biLM and on Hugging Face causal
LMs: what each layer already predicts through the model's own output head (issue 57 item 1). Imports nothing."""
