"""Layer probes of the paper (section 5.3): word sense disambiguation by nearest sense centroid."""
