"""Issue 44 item 7: adding a probe is one new folder and no edit anywhere else (docs/adding-a-probe.md).

The structural probe's folder is copied into a temporary folder on ``elmo_bench.probe``' package path (as if under
elmo_bench/probe/), its declared name changed; nothing else is written. The registry finds it, ``probe=<name>``
composes through run.py's door (``elmo-bench config`` and ``plan``'s job_run) with the copy's settings, and it runs
end to end on tiny UD data with the test biLM (elmo_bench.engine.probe_run.run_probe): results.json, then a second
run that skips. A copy with a syntax error in its config.py is skipped with a warning while the shipped probes keep
composing; a copy declaring a shipped name is one ConfigError line naming both packages. Issue 55: a copy of
``ridge`` under another name and record task runs, and ``elmo-bench report`` shows it in its own section (the one its
folder's report.py declares), never as a task's Table 1 row, and lists nothing as unshown.
"""
from __future__ import annotations

import importlib.util
import json
import logging
import re
import shutil
import sys
from pathlib import Path

import pytest

from elmo_bench.base.errors import ConfigError
from tests.conftest import DATA, needs_fixtures
from tests.test_structural_probe import _data

SOURCE = "structural"
NEW = "user44_depth"
IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc")


@pytest.fixture
def user_probes(tmp_path, monkeypatch):
    """A folder on elmo_bench.probe's path; ``add(folder, declared_name, config_text=None)`` copies the structural
    probe there as ``folder`` (its PROBE renamed to ``declared_name``, or config.py replaced by ``config_text``).
    The registry, the ConfigStore's probe options and the imported copies are cleared afterwards."""
    import elmo_bench.probe as probes_package
    from elmo_bench.commands.report import report_plugins
    from elmo_bench.probe import registry

    root = tmp_path / "user_probes"
    root.mkdir()
    monkeypatch.setattr(probes_package, "__path__", [*probes_package.__path__, str(root)])
    registry.registered_probes.cache_clear()

    def add(folder: str, declared: str, config_text: str | None = None, source: str = SOURCE,
            record_task: str | None = None) -> None:
        shutil.copytree(Path(probes_package.__path__[0]) / source, root / folder, ignore=IGNORE)
        config = root / folder / "config.py"
        text = config.read_text(encoding="utf-8")
        renamed = text.replace(f'ProbeDeclaration("{source}",', f'ProbeDeclaration("{declared}",')
        assert (renamed != text) == (declared != source)                # the one change: the declared name
        if record_task is not None:                                     # and, when asked, the record task
            before = renamed
            renamed = re.sub(r'record_task="[a-z_]+"', f'record_task="{record_task}"', renamed)
            assert renamed != before
        config.write_text(config_text if config_text is not None else renamed, encoding="utf-8")
        registry.registered_probes.cache_clear()
        report_plugins.cache_clear()

    yield add
    registry.registered_probes.cache_clear()
    report_plugins.cache_clear()
    _forget_options()
    for name in [m for m in sys.modules if m.startswith("elmo_bench.probe.user44_")]:
        del sys.modules[name]


def _forget_options() -> None:
    """The ConfigStore nodes register_schemas stored for the copies (so no later test composes them)."""
    from hydra.core.config_store import ConfigStore

    for group in ("probe", "probe_budget", "probe_preset"):      # the options and their generated budgets, presets
        options = ConfigStore.instance().repo.get(group, {})
        for name in [n for n in options if "user44_" in n]:
            del options[name]


def _overrides(tmp_path, *more: str) -> list[str]:
    data = tmp_path / "ewt" if (tmp_path / "ewt").is_dir() else _data(tmp_path)     # tiny UD EWT, made once
    return [f"probe={NEW}", "bilm=fixture", f"paths.data_root={DATA}", f"paths.cache_dir={tmp_path / 'cache'}",
            f"probe.data_dir={data}", "probe.max_epochs=2", "device=cpu", "logger=disabled",
            "progress=false", *more]


@needs_fixtures
def test_a_copied_probe_folder_composes_runs_and_skips(user_probes, tmp_path, capsys, caplog):
    from elmo_bench.commands.compose import job_run
    from elmo_bench.commands.main import main
    from elmo_bench.engine.probe_config import ProbeRunConfig
    from elmo_bench.engine.probe_run import run_probe
    from elmo_bench.probe.registry import registered_probes

    user_probes(NEW, NEW)
    found = registered_probes()
    assert found[NEW].package == f"elmo_bench.probe.{NEW}" and found[SOURCE].package == "elmo_bench.probe.structural"
    overrides = _overrides(tmp_path)
    assert main(["config", "--format", "json", *overrides]) == 0             # `elmo-bench config probe=<new>`
    shown = json.loads(capsys.readouterr().out)
    assert shown["probe"]["name"] == NEW and shown["probe"]["data"] == "ud_ewt"
    assert shown["probe"]["settings"] == {"data_dir": str(tmp_path / "ewt"), "max_train_sentences": None,
                                          "layers": None, "rank": None, "punct": "xpos", "max_epochs": 2,
                                          "batch_size": 20}
    run = job_run(overrides)                                                  # run.py's door, as plan composes it
    assert isinstance(run, ProbeRunConfig) and run.probe.declaration.package == f"elmo_bench.probe.{NEW}"
    assert type(run.probe.settings).__module__ == f"elmo_bench.probe.{NEW}.config"
    with pytest.raises(ConfigError, match=r"probe\.max_epochs"):
        job_run([*overrides, "probe.max_epochs=0"])                           # the copy's ranges hold
    run_dir = tmp_path / "results" / "probes" / NEW
    first = run_probe(run, run_dir)
    saved = json.loads((run_dir / "results.json").read_text())
    assert saved["task"] == "structural_probe" and saved["probe"]["name"] == NEW
    assert saved["main_metric"] == "layer_1_uuas" and saved["encoder"]["kind"] == "bilm"
    assert sorted(saved["printed"]["test"]) == ["layer_0", "layer_1", "layer_2"]     # the test biLM: 3 layers
    for split in ("dev", "test"):
        assert {f"layer_{k}_{m}" for k in range(3) for m in ("uuas", "dspr", "root_acc", "nspr")} \
            | {"linear_chain_uuas"} <= set(saved["metrics"][split])
    identity = json.loads((run_dir / "run.json").read_text())["identity"]
    assert identity["plugin.probe"] == f"{NEW}@1" and identity["probe.max_epochs"] == 2        # issue 54: versions
    assert saved["plugins"] == {"probe": f"{NEW}@1", "encoder": "bilm@1"} and "code.probe" not in identity
    assert saved["compute"]["threads"] == (int(run.runtime.threads) or 1)         # what fixes the last bits,
    assert set(saved["compute"]) == {"torch", "threads", "cpu_capability", "mkl", "cpu"}   # recorded beside them,
    assert not any(k.startswith("compute") for k in identity)                   # not part of the identity
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="elmo_bench.engine.probe_run"):
        again = run_probe(job_run(overrides), run_dir)                        # the same command again: skipped
    assert "nothing to do" in caplog.text
    assert again["metrics"] == first["metrics"] and again["timings"] == first["timings"]
    with pytest.raises(ConfigError, match=r"made by a different configuration \(.*probe\.max_epochs"):
        run_probe(job_run([*overrides, "probe.max_epochs=3"]), run_dir)      # another identity: refused


def test_a_broken_probe_folder_is_skipped_with_a_warning(user_probes, capsys):
    """The one behaviour of every registry (elmo_bench.base.registry, issue 55 item 7): one warning line naming the
    plug-in and its error, the other probes working, and that line when it is asked for by name."""
    from elmo_bench.commands.compose import job_run
    from elmo_bench.commands.main import main
    from elmo_bench.probe.registry import registered_probes

    capsys.readouterr()
    user_probes("user44_broken", "user44_broken", config_text="PROBE = (\n")
    found = registered_probes()
    assert "user44_broken" not in found and {"pos", "pos_controls", "structural", "mdl", "mdl_mlp", "wsd"} <= set(found)
    assert re.search(r"^warning: .*user44_broken/config\.py: the probe plug-in elmo_bench\.probe\.user44_broken does "
                     r"not import \(SyntaxError: .*; skipped$", capsys.readouterr().err, re.M)
    run = job_run(["probe=structural", "probe.max_epochs=3"], files=False)   # the shipped probes keep composing
    assert run.probe.name == "structural" and run.probe.settings.max_epochs == 3
    capsys.readouterr()
    assert main(["config", "probe=user44_broken"]) == 2                    # one line, exit 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "the probe plug-in elmo_bench.probe.user44_broken does not import" in err   # its own reason
    assert "SyntaxError" in err


def test_a_copy_declaring_a_shipped_name_is_one_line_naming_both(user_probes):
    from elmo_bench.probe.registry import probe_declaration

    user_probes("user44_clash", SOURCE)
    with pytest.raises(ConfigError) as raised:
        probe_declaration(SOURCE)
    line = str(raised.value)
    assert "\n" not in line and re.match(rf"probe name '{SOURCE}' is declared by two packages: elmo_bench\.probe\."
                                         rf"{SOURCE} \(.*\) and elmo_bench\.probe\.user44_clash \(.*\); rename one "
                                         rf"\(name= in its config\.py's PROBE\)$", line)


def test_a_copied_folder_brings_its_budget_and_a_folder_declares_its_variants(user_probes, capsys):
    """Issue 55: budgets live in the declaration (Hydra's probe_budget node generated from them), and a probe's
    named settings are more declarations of its folder (VARIANTS), run by its code; a VARIANTS entry that is no
    declaration skips the folder with one warning."""
    from elmo_bench.commands.compose import compose_job
    from elmo_bench.probe.registry import registered_probes

    user_probes(NEW, NEW)
    bounded = compose_job([f"probe={NEW}", "budget=cpu"], check=False).probe
    assert bounded.max_train_sentences == 2000 and bounded.max_epochs == 10      # the copy's budgets["cpu"]
    free = compose_job([f"probe={NEW}"], check=False).probe
    assert free.max_train_sentences is None and free.max_epochs == 40
    found = registered_probes()
    assert found["pos_controls"].package == found["pos"].package == "elmo_bench.probe.pos"
    assert found["pos_controls"].resolved_target() == "elmo_bench.probe.pos.probe:run"
    assert found["mdl_mlp"].package == "elmo_bench.probe.mdl" and "lib" not in found
    config = Path(importlib.util.find_spec(f"{found[SOURCE].package}.config").origin).read_text(encoding="utf-8")
    capsys.readouterr()
    user_probes("user44_variant", "user44_variant",
                config_text=config.replace(f'ProbeDeclaration("{SOURCE}",', 'ProbeDeclaration("user44_variant",')
                + "\nVARIANTS = (1,)\n")
    assert "user44_variant" not in registered_probes()
    assert re.search(r"^warning: .*user44_variant/config\.py: VARIANTS is a int; expected a ProbeDeclaration; "
                     r"skipped$", capsys.readouterr().err, re.M)


RIDGE_COPY, RIDGE_TASK = "user44_ridge", "user44_ridge_probe"


@needs_fixtures
def test_a_copied_ridge_probe_runs_plans_and_is_reported_in_its_own_section(user_probes, tmp_path, capsys):
    """Issue 55 item 1: a copy of probes/ridge (another name and record task) was a Table 1 "Baseline" row. Through
    every door: it runs, ``elmo-bench plan`` prices it from its folder's cost, and the report shows its section."""
    from elmo_bench.commands.compose import job_run
    from elmo_bench.commands.main import main
    from elmo_bench.commands.report import build_report
    from elmo_bench.engine.probe_run import run_probe

    user_probes(RIDGE_COPY, RIDGE_COPY, source="ridge", record_task=RIDGE_TASK)
    data = _data(tmp_path)
    overrides = [f"probe={RIDGE_COPY}", "bilm=fixture", f"paths.data_root={DATA}",
                 f"paths.cache_dir={tmp_path / 'cache'}", f"probe.data_dir={data}", "device=cpu", "logger=disabled",
                 "progress=false"]
    capsys.readouterr()
    assert main(["plan", *overrides, "--format", "json"]) == 0
    planned = json.loads(capsys.readouterr().out)["runs"]
    assert [row["probe"] for row in planned] == [RIDGE_COPY] and planned[0]["sizes"] == "measured"
    assert planned[0]["splits"]["train"]["sentences"] > 0
    run_probe(job_run(overrides), tmp_path / "results" / "probes" / RIDGE_COPY)
    saved = json.loads((tmp_path / "results" / "probes" / RIDGE_COPY / "results.json").read_text())
    assert saved["task"] == RIDGE_TASK and saved["probe"]["name"] == RIDGE_COPY
    path = build_report([str(tmp_path / "results")], tmp_path / "report", "json", significance=False)
    report = json.loads(path.read_text())
    section = report["tables"][RIDGE_COPY]                                  # its own section, named after it
    assert section["title"] == f"Probe {RIDGE_COPY}: test accuracy per layer" and len(section["rows"]) == 1
    assert section["header"][:5] == ["Encoder", "Data", "layer 0", "layer 1", "layer 2"]
    assert section["rows"][0]["layer_0"]["mean"] == saved["metrics"]["test"]["layer_0_accuracy"]
    assert not any(row["task"] == RIDGE_TASK for row in report["tables"]["table1"]["rows"])   # no Table 1 row
    assert "unshown" not in report and f"probe={RIDGE_COPY} runs (own section): 1." in report["summary"]


def test_a_copied_probe_that_keeps_its_record_task_is_one_line_naming_both(user_probes, tmp_path):
    """Two sections claiming one record task would show both probes' records in one table: refused, one line."""
    from elmo_bench.commands.report import build_report

    user_probes(RIDGE_COPY, RIDGE_COPY, source="ridge")                     # only the name changed
    (tmp_path / "results").mkdir()
    with pytest.raises(ConfigError) as raised:
        build_report([str(tmp_path / "results")], tmp_path / "report")
    assert str(raised.value) == (f"record task 'ridge_probe' is claimed by the report sections of probes 'ridge' and "
                                 f"'{RIDGE_COPY}'; give one its own record_task (config.py)")

