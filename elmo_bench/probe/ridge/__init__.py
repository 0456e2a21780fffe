"""The closed-form ridge POS probe fitted from streamed statistics (issue 46): config.py declares it."""
