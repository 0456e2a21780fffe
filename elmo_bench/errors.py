class DataError(ValueError):
    """Bad input data: the message names the file, the line or record, and what was expected."""
