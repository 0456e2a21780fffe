"""From files to batches: where each split comes from (local files, the hub, a save_to_disk copy), UTF-8
text reading, GloVe vectors, and the Batch type every head takes."""
