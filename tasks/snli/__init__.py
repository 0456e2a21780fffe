"""SNLI: official jsonl reader, ESIM head, accuracy."""
