"""argparse for every command-line entry of the package (subcommands, probes, report, evaluate): a usage error is
one line, ``error: PROG: what (see PROG --help)``, exit 2, instead of the whole usage text before it.

It lives at the base layer so that the probe, report and engine CLIs use it without importing the command layer.
"""
from __future__ import annotations

import argparse
import sys
from typing import NoReturn

from elmo_bench.base.errors import EXIT_USER_ERROR


class ArgumentParser(argparse.ArgumentParser):
    """argparse with a usage error reported as one line and exit code 2."""

    def error(self, message: str) -> NoReturn:
        print(f"error: {self.prog}: {message} (see {self.prog} --help)", file=sys.stderr, flush=True)
        raise SystemExit(EXIT_USER_ERROR)


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1 (``--batch-size 0`` or ``-1`` is a usage error, exit code 2)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, found {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, found {value}")
    return value
