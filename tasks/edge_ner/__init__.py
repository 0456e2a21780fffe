"""Edge probing: ner (Tenney et al. 2019); see docs/edge-probing.md."""
