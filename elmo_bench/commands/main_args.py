"""What ``python run.py ARGS`` means before Hydra sees it: the quickstart unless a job is named, ``-v`` for verbose.

The promise: ``python run.py`` plus overrides that name no job (no ``task=`` and no ``experiment=``) is the quickstart
with those overrides, e.g. ``python run.py logger=disabled`` or ``python run.py -m seed=1,2``; the full default NER
run needs ``task=ner`` (or a named experiment). Without this, any override silently switched from the 40-second
quickstart to the full CoNLL-2003 run (config.yaml's defaults). ``--cfg``, ``--info`` and ``--help`` describe what
would run, so they see the quickstart too; flags that describe Hydra itself or pick another primary config
(``--version``, ``--hydra-help``, ``--shell-completion``, ``--experimental-rerun``, ``-cn``, ``-cp``) are left alone.
"""
from __future__ import annotations

QUICKSTART = "experiment=quickstart"
#: override keys that choose the job; any of them turns the quickstart default off
JOB_KEYS = ("task", "experiment", "probe")
#: flags after which Hydra would not compose config.yaml's job (or reads a value we must not take for an override)
LEAVE_ALONE = ("--version", "--hydra-help", "-sc", "--shell-completion", "--experimental-rerun",
               "-cn", "--config-name", "-cp", "--config-path")
#: Hydra flags that take the next argument as their value (so it is not an override)
TAKES_VALUE = ("-c", "--cfg", "-p", "--package", "-cd", "--config-dir",
               "-cn", "--config-name", "-cp", "--config-path", "--experimental-rerun")
#: the values ``--info`` may take (it takes none when the next argument is not one of them)
INFO_CHOICES = ("all", "config", "defaults", "defaults-tree", "plugins", "searchpath")
VERBOSE_FLAGS = ("-v", "--verbose")
#: what ``-v`` stands for: Hydra's switch that puts every logger (wandb's terminal output included) at DEBUG
VERBOSE_OVERRIDE = "hydra.verbose=true"


def override_key(arg: str) -> str | None:
    """``task`` for ``task=ner``, ``+task=x``, ``~task``; None for a flag."""
    if arg.startswith("-"):
        return None
    key = arg.lstrip("+~").split("=", 1)[0]
    return key or None


def names_a_job(args: list[str]) -> bool:
    """Does an override among ``args`` choose the job (``task=...``, ``experiment=...``)?"""
    return any(override_key(arg) in JOB_KEYS for arg in args)


def main_args(argv: list[str]) -> list[str]:
    """``argv`` (program name first) as Hydra should see it: ``-v`` → ``hydra.verbose=true``, and
    ``experiment=quickstart`` appended when nothing names a job."""
    program, args = argv[:1], [VERBOSE_OVERRIDE if arg in VERBOSE_FLAGS else arg for arg in argv[1:]]
    flags = {arg.split("=", 1)[0] for arg in args if arg.startswith("-")}
    positions = _override_positions(args)
    if flags & set(LEAVE_ALONE) or names_a_job([args[i] for i in positions]):
        return program + args
    # Hydra's argparse takes the overrides as one run of positionals: join the user's run (or lead, before any
    # flag, where an optional flag value such as --info's could otherwise swallow it)
    at = positions[0] if positions else 0
    return program + args[:at] + [QUICKSTART] + args[at:]


def _override_positions(args: list[str]) -> list[int]:
    """Indexes of the positional overrides in ``args`` (a flag's separate value, as in ``--cfg job``, is skipped)."""
    out, skip = [], False
    for i, arg in enumerate(args):
        if skip:
            skip = False
        elif arg.startswith("-"):
            skip = arg in TAKES_VALUE
        elif i and args[i - 1] in ("-i", "--info") and arg in INFO_CHOICES:
            continue  # --info's optional value
        else:
            out.append(i)
    return out
