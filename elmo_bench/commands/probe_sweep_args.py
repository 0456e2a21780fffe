"""``python run.py -m probe=structural,mdl probe.max_epochs=5``: Hydra's multirun composes the primary config
without the swept group, where no probe is chosen yet and ``probe.<key>=v`` is refused ("Key 'probe' is not in
struct"), so a probe setting could not be given to a sweep over probes (or to ``experiment=probe_suite``, which
sweeps ``probe`` itself). When the command line chooses no single probe but sweeps one, each ``probe.<key>=v`` is
passed as ``++probe.<key>=v``: the same value in every job, and the door (elmo_bench.engine.config_door) still
refuses a key the chosen probe does not have, in one line. A command line with one ``probe=<name>`` is left as it is.
"""
from __future__ import annotations

from pathlib import Path

from elmo_bench.base.paths import CONF_DIR


def _value(arg: str, key: str) -> str | None:
    """The value of override ``key=value`` in ``arg`` (None for another key or a flag)."""
    if arg.startswith("-") or "=" not in arg:
        return None
    name, value = arg.split("=", 1)
    return value if name == key else None


def sweeps_probes(args: list[str]) -> bool:
    """Does the command line sweep the probe group: ``probe=a,b`` (or a sweep function), or an experiment whose
    sweeper sets ``probe``?"""
    for arg in args:
        probe = _value(arg, "probe")
        if probe is not None and ("," in probe or "(" in probe):
            return True
        experiment = _value(arg, "experiment")
        if experiment and "," not in experiment:
            path = Path(CONF_DIR) / "experiment" / f"{experiment}.yaml"
            if path.is_file() and _sweeps_probe_key(path.read_text(encoding="utf-8")):
                return True
    return False


def _sweeps_probe_key(text: str) -> bool:
    from omegaconf import OmegaConf  # lazy: omegaconf

    params = OmegaConf.create(text).get("hydra", {}).get("sweeper", {}).get("params", {}) or {}
    return "probe" in params


#: what a sweep over probes that names no experiment runs under: conf/experiment/probe_sweep.yaml, whose only line
#: sets ``task`` to null, so the sweep's primary config (composed before any probe is chosen) composes no task
#: either (issue 56: a user task declaring ``ner`` broke every probe sweep); ``experiment`` is never in a run
#: directory's name (conf/config.yaml's exclude_keys)
PROBE_SWEEP = "experiment=probe_sweep"


def probe_sweep_args(argv: list[str]) -> list[str]:
    """``argv`` with ``probe.<key>=v`` as ``++probe.<key>=v`` when the probe group is swept (module docstring), and
    :data:`PROBE_SWEEP` when it names no experiment."""
    args = argv[1:]
    if not sweeps_probes(args):
        return argv
    named = any(_value(arg, "experiment") is not None for arg in args)
    return argv[:1] + [f"++{arg}" if arg.startswith("probe.") and "=" in arg else arg for arg in args] + (
        [] if named else [PROBE_SWEEP])
