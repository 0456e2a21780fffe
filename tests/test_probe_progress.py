"""Issue 56 item 11: long probes show progress (elmo_bench/probe/lib/progress.py). A step of many minutes still reports
(a timer line at least every ``EVERY`` seconds: what is done, what is under way, what is left); ``probe=erasure``
and ``probe=conditional`` count their steps through it, with a tqdm bar only when the run's ``progress`` is on."""
from __future__ import annotations

import logging
import re
import time

import pytest

import elmo_bench.probe.lib.progress as progress
from elmo_bench.probe.lib.progress import Steps, duration
from tests.conftest import needs_fixtures

LOGGER = "elmo_bench.probe.lib.progress"


def test_a_long_step_still_reports_what_is_done_and_left(caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    with Steps(3, "probe x", progress=False, every=0.05) as steps:
        steps.now("layer 0: fitting")
        time.sleep(0.3)                       # one slow step: the timer speaks during it
        during = [r.getMessage() for r in caplog.records]
        steps.advance()
        steps.scope = "mlp1"
        steps.now("layer 1")
        time.sleep(0.2)
        steps.advance()
        steps.advance()
    lines = [r.getMessage() for r in caplog.records]
    assert during and all(line.startswith("probe x: 0 of 3 steps done, now layer 0: fitting (") for line in during)
    assert any(re.match(r"probe x: 1 of 3 steps done, now mlp1 layer 1 \(\d+ s elapsed, about \d+ s left\)", line)
               for line in lines), lines
    assert lines[-1].startswith("probe x: all 3 steps done in ")
    assert duration(75) == "1 min 15 s" and duration(42) == "42 s"


def test_no_line_after_the_work_ends_and_none_when_it_fails(caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    with pytest.raises(ValueError):
        with Steps(2, "probe y", progress=False, every=0.05):
            raise ValueError("bad")
    time.sleep(0.15)
    assert not any("all 2 steps done" in r.getMessage() for r in caplog.records)
    count = len(caplog.records)
    time.sleep(0.15)
    assert len(caplog.records) == count                     # the timer stopped with the block


@needs_fixtures
@pytest.mark.parametrize("probe, extra, total", [
    ("erasure", ["probe.stream=false"], 2), ("erasure", ["probe.stream=true"], 3),
    ("conditional", ["probe.baseline='none,layer0'", "probe.bootstrap=20"], 4)])
def test_erasure_and_conditional_report_their_steps(probe, extra, total, tmp_path, caplog, monkeypatch, capsys):
    """Each probe on the tiny EWT-like data and the test biLM, layers 0 and 2: a timer line while it works, and
    the last line counts every step (erasure: a layer each, plus the streamed pass; conditional: a (baseline,
    layer) each); ``progress=true`` draws the bar on stderr, ``progress=false`` none."""
    from elmo_bench.commands.compose import job_run
    from elmo_bench.engine.probe_run import run_probe
    from tests.test_probe_runs import ewt

    monkeypatch.setattr(progress, "EVERY", 0.01)
    caplog.set_level(logging.INFO, logger=LOGGER)
    data = ewt(tmp_path / "ewt", train=60)
    common = ["bilm=fixture", f"paths.cache_dir={tmp_path / 'cache'}", "logger=disabled", f"probe.data_dir={data}",
              "probe.layers=[0,2]", *extra]
    run_probe(job_run([f"probe={probe}", "progress=true", *common]), tmp_path / "a")
    lines = [r.getMessage() for r in caplog.records if r.name == LOGGER]
    assert lines[-1].startswith(f"probe {probe}: all {total} steps done in "), lines
    assert any(re.match(rf"probe {probe}: \d of {total} steps done, now ", line) for line in lines), lines
    assert f"probe {probe}:" in capsys.readouterr().err                      # the bar
    run_probe(job_run([f"probe={probe}", "progress=false", "seed=2", *common]), tmp_path / "b")
    assert f"probe {probe}:" not in capsys.readouterr().err                  # no bar, the lines still logged
