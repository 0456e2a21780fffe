"""What a probe declares about itself, in one act and without torch: ``PROBE = ProbeDeclaration(...)`` in the
torch-free ``config.py`` of its folder (elmo_bench/probe/<name>/config.py; a folder whose code also runs under other
names with other defaults declares those as ``VARIANTS``, a tuple of declarations). The registry
(elmo_bench.probe.registry) finds every declaration by scanning elmo_bench.probe and the ``elmo_bench.probes``
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
- ``sentences``: optional ``"module:function"`` (``(settings, data_root) -> {split: list[list[str]]}``): the sentences
  per split the probe sends through the encoder, read as the probe reads them, for ``elmo-bench plan``; it raises
  DataError when the data is not readable here;
- ``cost``: optional ``"module:function"`` (``(settings, sizes, layers, dim) -> ProbeCost``, elmo_bench.probe.
  probe_cost): the FLOPs of the probe's training over cached layers, for ``elmo-bench plan``;
- ``run_cost``: optional ``"module:function"`` (``(run, sizes) -> ProbeCost``, ``run`` the ProbeRunConfig), used
  instead of ``cost`` by a probe that runs the encoder itself instead of reading the activation cache
  (``amnesic_lm``): it sees the whole run (the biLM's options and files) and sets ``ProbeCost.encoder_flops``;
- ``documented``: the sizes plan prices with when the data is not readable here (elmo_bench.probe.probe_cost.
  SplitCount per split of the full data; a ``max_train_sentences`` cut scales train, ``max_eval_sentences`` or
  ``max_dev_sentences`` dev; a settings class with an ``encoded_splits`` property keeps only those splits);
- ``budgets``: ``budget=<b>``'s bounds for this probe, settings over its defaults (``{"cpu": {"max_train_sentences":
  2000}}``): Hydra's ``probe_budget/<b>_<name>`` node is generated from it (elmo_bench.engine.config_schema);
- ``presets``: a probe set's settings for this probe (``{"suite": {"glove": False}}``): ``probe_set=<set>`` composes
  Hydra's generated ``probe_preset/<set>_<name>`` node;
- which settings name a dataset is said by the settings themselves (elmo_bench.probe.settings.dataset: the run's
  identity fingerprints each such directory, with no engine edit);
- ``scorer``: optional ``"module:attribute"``, a file scorer in a task's shape (``score_file_count``,
  ``score_files(*paths)``): ``elmo-bench score <name> FILES`` (elmo_bench.commands.main.file_scorers);
- ``command``: optional :class:`ProbeCommand`, the probe's own ``elmo-bench`` command (``probe-pos``): the
  flags of ``elmo-bench probe NAME`` (generated from ``settings``, elmo_bench.probe.command_line) under the
  spellings that command has always taken;
- ``report``: the probe's report section(s), each ``"module:NAME"`` (a leading dot: relative to the declaring
  package) of an elmo_bench.report.sections.Section in its folder's ``report.py``; a section claims the probe's
  ``record_task`` unless it says otherwise (two probes sharing a record task: one section claims it), names its
  place and order among the sections, its figures and what it adds to the Directions table. A probe with no section
  has its records listed as unshown, with that reason, never in a task table. The ``elmo-bench report`` command
  gathers them (elmo_bench.commands.report); the report's framework names no probe;
- ``package``: filled in by the registry.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping


@dataclass(frozen=True)
class ProbeCommand:
    """A probe's own command, ``elmo-bench <name>``: ``elmo-bench probe <probe>`` with the spellings, run-level
    flags and defaults that command has always had (its flags are contracts); nothing of it is written twice.

    - ``flags``: setting → its flag here where it is not ``--<setting>`` (``tags``: ``--tag-column``), or None
      where this command does not take the setting (the probe still runs with its default);
    - ``run``: run-level keys it takes as flags (``seed``: ``--seed``, ``max_segment``: ``--max-segment``), each
      with this command's default (None: the run's own, conf/config.yaml's);
    - ``random_init``: it takes ``--random-init``/``--random-seed`` (the random-encoder baseline);
    - ``out_required``: ``--out`` must be given (the probe writes files beside its printed object).
    """

    name: str
    summary: str
    flags: Mapping[str, str | None] = field(default_factory=dict)
    run: Mapping[str, Any] = field(default_factory=dict)
    random_init: bool = True
    out_required: bool = False


@dataclass(frozen=True)
class ProbeDeclaration:
    """One probe, as its folder declares it (see the module docstring)."""

    name: str
    target: str
    settings: type
    data: str
    predicts: str
    record_task: str
    sentences: str | None = None
    cost: str | None = None
    documented: Mapping[str, Any] | None = None
    run_cost: str | None = None
    budgets: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    presets: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    scorer: str | None = None
    command: ProbeCommand | None = None
    report: tuple[str, ...] = ()
    package: str = ""
    #: the probe's version (issue 54): ``plugin.probe: <name>@<version>`` in its runs' identity; bump it when a
    #: change may move a number, else record the new code hash in elmo_bench/identity/plugins.txt
    version: int = 1

    def resolved_target(self) -> str:
        """``target`` with a relative module made absolute against ``package``."""
        return self.resolved(self.target)

    def resolved(self, target: str) -> str:
        """A declared ``"module:function"`` with a relative module made absolute against ``package``."""
        module, _, function = target.partition(":")
        if module.startswith("."):
            module = self.package + module
        return f"{module}:{function}"
