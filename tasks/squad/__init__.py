"""SQuAD v1.1: offset-keeping reader, BiDAF + self-attention head, official EM/F1."""
