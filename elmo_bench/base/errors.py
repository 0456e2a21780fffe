"""The errors a user can fix: each carries a one-line message and reaches the terminal as that line, exit code 2.

``run.py`` and every ``elmo-bench`` command print ``error: <message>`` on stderr for these (no traceback);
``--debug`` or ``HYDRA_FULL_ERROR=1`` shows the traceback. Anything else is a bug and keeps its traceback.
"""


class UserError(ValueError):
    """Bad input or configuration: the message says what was found and what was expected."""


class DataError(UserError):
    """Bad input data: the message names the file, the line or record, and what was expected."""


class ConfigError(UserError):
    """A configuration value out of range, of the wrong type, or inconsistent with an existing run directory."""


class TrainingError(UserError):
    """Training cannot go on (a non-finite loss): the message names the epoch and step."""
