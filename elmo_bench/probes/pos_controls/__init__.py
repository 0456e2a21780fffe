"""The papers' POS probes with the control task (Hewitt & Liang 2019): config.py declares them."""
