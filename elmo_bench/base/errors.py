"""The errors a user can fix: each carries a one-line message and reaches the terminal as that line, exit code 2.

``run.py`` and every ``elmo-bench`` command print ``error: <message>`` on stderr for these (no traceback);
``--debug`` or ``HYDRA_FULL_ERROR=1`` shows the traceback. Anything else is a bug and keeps its traceback.
"""
from __future__ import annotations

from typing import Mapping

#: the exit code of every user error (argparse's own code for usage errors)
EXIT_USER_ERROR = 2


class UserError(ValueError):
    """Bad input or configuration: the message says what was found and what was expected."""


class DataError(UserError):
    """Bad input data: the message names the file, the line or record, and what was expected."""


class ConfigError(UserError):
    """A configuration value out of range, of the wrong type, or inconsistent with an existing run directory.

    ``key``: the config key the message names (``probe.max_train_sentences``) where a command that takes it under
    another name rewrites it: an ``elmo-bench probe-*`` alias names its flag instead (:meth:`spelled`), while
    ``python run.py probe=...`` shows the key as it is.
    """

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key

    def __reduce__(self):  # the key survives pickling (a submitit job's error comes back pickled)
        return type(self), (str(self), self.key)

    def spelled(self, names: Mapping[str, str]) -> "ConfigError":
        """This error with its ``key`` written as ``names`` spells it (``--max-train-sentences``); itself when its
        key is none of them."""
        if self.key is None or self.key not in names:
            return self
        return ConfigError(str(self).replace(self.key, names[self.key]), names[self.key])


class TrainingError(UserError):
    """Training cannot go on (a non-finite loss): the message names the epoch and step."""
