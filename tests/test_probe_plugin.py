"""Issue 44 item 7: adding a probe is one new folder and no edit anywhere else (docs/adding-a-probe.md).

The structural probe's folder is copied into a temporary folder on ``elmo_bench.probes``' package path (as if under
elmo_bench/probes/), its declared name changed; nothing else is written. The registry finds it, ``probe=<name>``
composes through run.py's door (``elmo-bench config`` and ``plan``'s job_run) with the copy's settings, and it runs
end to end on tiny UD data with the test biLM (elmo_bench.engine.probe_run.run_probe): results.json, then a second
run that skips. A copy with a syntax error in its config.py is skipped with a warning while the shipped probes keep
composing; a copy declaring a shipped name is one ConfigError line naming both packages.
"""
from __future__ import annotations

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
    """A folder on elmo_bench.probes' path; ``add(folder, declared_name, config_text=None)`` copies the structural
    probe there as ``folder`` (its PROBE renamed to ``declared_name``, or config.py replaced by ``config_text``).
    The registry, the ConfigStore's probe options and the imported copies are cleared afterwards."""
    import elmo_bench.probes as probes_package
    from elmo_bench.probe import registry

    root = tmp_path / "user_probes"
    root.mkdir()
    monkeypatch.setattr(probes_package, "__path__", [*probes_package.__path__, str(root)])
    registry.registered_probes.cache_clear()

    def add(folder: str, declared: str, config_text: str | None = None) -> None:
        shutil.copytree(Path(probes_package.__path__[0]) / SOURCE, root / folder, ignore=IGNORE)
        config = root / folder / "config.py"
        text = config.read_text(encoding="utf-8")
        renamed = text.replace(f'ProbeDeclaration("{SOURCE}",', f'ProbeDeclaration("{declared}",')
        assert (renamed != text) == (declared != SOURCE)                # the one change: the declared name
        config.write_text(config_text if config_text is not None else renamed, encoding="utf-8")
        registry.registered_probes.cache_clear()

    yield add
    registry.registered_probes.cache_clear()
    _forget_options()
    for name in [m for m in sys.modules if m.startswith("elmo_bench.probes.user44_")]:
        del sys.modules[name]


def _forget_options() -> None:
    """The ConfigStore options register_schemas stored for the copies (so no later test composes them)."""
    from hydra.core.config_store import ConfigStore

    options = ConfigStore.instance().repo.get("probe", {})
    for name in [n for n in options if n.startswith("user44_")]:
        del options[name]


def _overrides(tmp_path, *more: str) -> list[str]:
    data = tmp_path / "ewt" if (tmp_path / "ewt").is_dir() else _data(tmp_path)     # tiny UD EWT, made once
    return [f"probe={NEW}", "bilm=fixture", f"paths.data_root={DATA}", f"paths.cache_dir={tmp_path / 'cache'}",
            f"probe.data_dir={data}", "probe.max_epochs=2", "device=cpu", "logger=disabled",
            "progress=false", *more]


@needs_fixtures
def test_a_copied_probe_folder_composes_runs_and_skips(user_probes, tmp_path, capsys, caplog):
    from elmo_bench.commands.main import main
    from elmo_bench.commands.plan import job_run
    from elmo_bench.engine.probe_config import ProbeRunConfig
    from elmo_bench.engine.probe_run import run_probe
    from elmo_bench.probe.registry import registered_probes

    user_probes(NEW, NEW)
    found = registered_probes()
    assert found[NEW].package == f"elmo_bench.probes.{NEW}" and found[SOURCE].package == "elmo_bench.probes.structural"
    overrides = _overrides(tmp_path)
    assert main(["config", "--format", "json", *overrides]) == 0             # `elmo-bench config probe=<new>`
    shown = json.loads(capsys.readouterr().out)
    assert shown["probe"]["name"] == NEW and shown["probe"]["data"] == "ud_ewt"
    assert shown["probe"]["settings"] == {"data_dir": str(tmp_path / "ewt"), "max_train_sentences": None,
                                          "layers": None, "rank": None, "punct": "xpos", "max_epochs": 2,
                                          "batch_size": 20}
    run = job_run(overrides)                                                  # run.py's door, as plan composes it
    assert isinstance(run, ProbeRunConfig) and run.probe.declaration.package == f"elmo_bench.probes.{NEW}"
    assert type(run.probe.settings).__module__ == f"elmo_bench.probes.{NEW}.config"
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
    from elmo_bench.commands.main import main
    from elmo_bench.commands.plan import job_run
    from elmo_bench.probe.registry import registered_probes

    capsys.readouterr()
    user_probes("user44_broken", "user44_broken", config_text="PROBE = (\n")
    found = registered_probes()
    assert "user44_broken" not in found and {"pos", "pos_controls", "structural", "mdl", "mdl_mlp", "wsd"} <= set(found)
    assert re.search(r"^warning: .*user44_broken/config\.py: the probe plug-in elmo_bench\.probes\.user44_broken does "
                     r"not import \(SyntaxError: .*; skipped$", capsys.readouterr().err, re.M)
    run = job_run(["probe=structural", "probe.max_epochs=3"], files=False)   # the shipped probes keep composing
    assert run.probe.name == "structural" and run.probe.settings.max_epochs == 3
    capsys.readouterr()
    assert main(["config", "probe=user44_broken"]) == 2                    # one line, exit 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "the probe plug-in elmo_bench.probes.user44_broken does not import" in err   # its own reason
    assert "SyntaxError" in err


def test_a_copy_declaring_a_shipped_name_is_one_line_naming_both(user_probes):
    from elmo_bench.probe.registry import probe_declaration

    user_probes("user44_clash", SOURCE)
    with pytest.raises(ConfigError) as raised:
        probe_declaration(SOURCE)
    line = str(raised.value)
    assert "\n" not in line and re.match(rf"probe name '{SOURCE}' is declared by two packages: elmo_bench\.probes\."
                                         rf"{SOURCE} \(.*\) and elmo_bench\.probes\.user44_clash \(.*\); rename one "
                                         rf"\(name= in its config\.py's PROBE\)$", line)
