"""Fine-grained sentiment (SST-5) with the biattentive classification network."""
