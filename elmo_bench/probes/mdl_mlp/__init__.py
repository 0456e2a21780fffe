"""MDL with the MLP-1 probe: config.py declares it."""
