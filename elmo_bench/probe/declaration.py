"""What a probe declares about itself, in one act and without torch: ``PROBE = ProbeDeclaration(...)`` in the
torch-free ``config.py`` of its folder (elmo_bench/probes/<name>/config.py). The registry
(elmo_bench.probe.registry) finds every declaration by scanning elmo_bench.probes and the ``elmo_bench.probes``
entry-point group; nothing else names a probe, as nothing names a task (tasks/declaration.py).

- ``name``: the key of ``probe=<name>`` (Hydra's ``probe`` group: its option is generated from ``settings``);
- ``target``: the probe's run function as ``"module:function"`` (a leading dot: relative to the declaring package),
  called with a :class:`elmo_bench.probe.api.ProbeContext` and returning a :class:`elmo_bench.probe.api.ProbeOutcome`;
- ``settings``: the frozen dataclass of ``probe.<key>`` settings, every default written there only; fields with a
  range say so (elmo_bench.base.ranges.ranged), so ``probe.max_epochs=0`` is one line at the door;
- ``data``: what it reads (``ud_ewt``, ``semcor``; recorded as results.json's ``data.name``);
- ``predicts``: what it predicts (token labels, arcs and depths, senses), for ``elmo-bench config`` and the docs;
- ``record_task``: the ``task`` its results.json carries (``pos_probe``, ``structural_probe``, ...), which the
  report's tables select by;
- ``package``: filled in by the registry.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ProbeDeclaration:
    """One probe, as its folder declares it (see the module docstring)."""

    name: str
    target: str
    settings: type
    data: str
    predicts: str
    record_task: str
    package: str = ""

    def resolved_target(self) -> str:
        """``target`` with a relative module made absolute against ``package``."""
        module, _, function = self.target.partition(":")
        if module.startswith("."):
            module = self.package + module
        return f"{module}:{function}"
