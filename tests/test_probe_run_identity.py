"""Issue 54, the probe runs' part: a probe run directory holding another run's results.json is never "finished"
(refused in one line, as a task run refuses), and a field added to a probe's settings with a default leaves that
probe's finished runs "nothing to do" (added defaults, as task runs have them), while a changed value does not."""
from __future__ import annotations

import json
import shutil

from tests.conftest import needs_fixtures
from tests.test_probe_runs import ewt, one_line, run_py, structural_args

pytestmark = needs_fixtures


def test_a_directory_holding_another_runs_results_is_refused_and_an_added_setting_keeps_a_run_done(tmp_path):
    data = ewt(tmp_path / "ewt", train=20)
    first, second = tmp_path / "first", tmp_path / "second"
    assert run_py(*structural_args(tmp_path, data, first, epochs=1)).returncode == 0
    assert run_py(*structural_args(tmp_path, data, second, epochs=1), "seed=2").returncode == 0
    mine = (second / "results.json").read_text()
    from elmo_bench.engine.plugin_code import probe_code_hash  # the code hash beside the version: a diagnostic
    from elmo_bench.probe.registry import probe_declaration
    declared = probe_declaration("structural")
    assert json.loads(mine)["code"] == {"probe": probe_code_hash(declared.package, declared.resolved_target())}
    assert json.loads(mine)["plugins"]["probe"] == "structural@1"
    assert "code.probe" not in json.loads((second / "run.json").read_text())["identity"]
    # another run's record copied over this directory's own: refused, never printed as this run's result
    shutil.copy(first / "results.json", second / "results.json")
    done = run_py(*structural_args(tmp_path, data, second, epochs=1), "seed=2")
    assert done.returncode == 2 and "holds another run's record (seed 1, this run's 2)" in one_line(done)
    assert (second / "results.json").read_bytes() == (first / "results.json").read_bytes()   # left as it was
    # records written before the settings fields rank and punct existed (the run used what are now their
    # defaults): the defaults stand in for them, so the run is done
    stored = json.loads((second / "run.json").read_text())
    assert stored["identity"].pop("probe.rank") == 4 and stored["identity"].pop("probe.punct") == "xpos"
    (second / "run.json").write_text(json.dumps(stored))
    record = json.loads(mine)
    del record["probe"]["settings"]["rank"], record["probe"]["settings"]["punct"]
    mine = json.dumps(record)
    (second / "results.json").write_text(mine)
    again = run_py(*structural_args(tmp_path, data, second, epochs=1), "seed=2", "++probe.rank=null")
    assert again.returncode == 0 and "nothing to do" in again.stderr + again.stdout
    assert (second / "results.json").read_text() == mine
    changed = run_py(*structural_args(tmp_path, data, second, epochs=1), "seed=2", "++probe.punct=upos",
                     "++probe.rank=null")
    assert changed.returncode == 2 and "probe.punct" in one_line(changed)       # a changed value: not this run


def test_a_probes_own_dataset_setting_is_fingerprinted_with_no_engine_edit():
    """A probe declares which of its settings name a dataset (elmo_bench.probe.settings.dataset): the run's
    identity then holds that directory's content fingerprint, read from its settings, not from a list in the
    engine."""
    from dataclasses import dataclass

    from elmo_bench.probe.settings import UdSettings, dataset, dataset_settings

    @dataclass(frozen=True)
    class NewDataSettings(UdSettings):
        treebank: str | None = dataset("new/treebank")
        hidden: int = 8

    assert dataset_settings(NewDataSettings) == {"data_dir": "pos/ud_english_ewt", "treebank": "new/treebank"}
    from elmo_bench.probe.registry import registered_probes
    wsd = registered_probes()["wsd"].settings
    assert dataset_settings(wsd) == {"semcor": "wsd/semcor3.0_google_original_format",
                                     "eval_root": "wsd/WSD_Evaluation_Framework/Evaluation_Datasets"}
