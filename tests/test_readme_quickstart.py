"""The README's quickstart table is the quickstart's own output (scripts/update_readme_quickstart.py pastes it from
a run): here, cheaply, that the block has exactly the shape the quickstart's table printer produces and the rows
the quickstart runs. Rebuilding each README row through the printer from the values it shows must give the README
text back character for character."""
from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from elmo_bench.commands.hydra_callbacks import results_table
from elmo_bench.engine.run_config import Runtime
from tests.conftest import REPO

spec = importlib.util.spec_from_file_location("update_readme_quickstart", REPO / "scripts" / "update_readme_quickstart.py")
script = importlib.util.module_from_spec(spec)
spec.loader.exec_module(script)

MIX = re.compile(r"^(\w+): s=(\[[^\]]*\]), γ=(-?[\d.]+)$")


def _record(row: str) -> dict:
    """The results.json values a printed row shows (what the printer reads)."""
    task, embedder, seed, metric, dev, test, time, mixes = [c.strip() for c in row.strip("|").split("|")]
    record = {"task": task, "embedder": embedder, "seed": int(seed), "main_metric": metric,
              "metrics": {split: {metric: float(value)} for split, value in (("dev", dev), ("test", test))
                          if value != "—"},
              "timings": {"total_seconds": float(time.removesuffix(" s"))}, "mixes": {}}
    for part in ([] if mixes == "—" else mixes.split("; ")):
        name, weights, gamma = MIX.match(part).groups()
        record["mixes"][name] = {"weights": json.loads(weights), "gamma": float(gamma)}
    return record


def _printed(records: list[dict], tmp_path: Path) -> str:
    dirs = []
    for i, record in enumerate(records):
        (tmp_path / str(i)).mkdir()
        (tmp_path / str(i) / "results.json").write_text(json.dumps(record))
        dirs.append(tmp_path / str(i))
    return results_table(tmp_path, dirs)


def test_the_readme_block_is_what_the_printer_prints(tmp_path) -> None:
    block = script.readme_block((REPO / "README.md").read_text(encoding="utf-8"))
    header = results_table(tmp_path, [])
    assert block.splitlines()[:2] == header.splitlines() and header.splitlines()[0] == script.HEADER
    records = [_record(row) for row in block.splitlines()[2:]]
    assert _printed(records, tmp_path) == block


def test_the_readme_rows_are_the_quickstarts_runs() -> None:
    """One row per job of the quickstart's sweep, at the default seed, with the +ELMo row's mix over every biLM
    layer (the shipped biLM: 3)."""
    block = script.readme_block((REPO / "README.md").read_text(encoding="utf-8"))
    quickstart = OmegaConf.load(REPO / "conf" / "experiment" / "quickstart.yaml")
    seed = Runtime.seed  # the default seed: Runtime's (issue 35 item 2; conf/config.yaml no longer writes it)
    records = [_record(row) for row in block.splitlines()[2:]]
    assert [r["embedder"] for r in records] == quickstart.hydra.sweeper.params.embedder.split(",")
    assert {(r["task"], r["seed"], r["main_metric"]) for r in records} == {("ner", seed, "f1")}
    elmo = [r for r in records if r["embedder"] == "glove_elmo"][0]
    assert len(elmo["mixes"]["input"]["weights"]) == 3 and sum(elmo["mixes"]["input"]["weights"]) == pytest.approx(1, abs=1e-5)


def test_the_script_takes_the_last_table_of_the_output_and_rewrites_only_the_block() -> None:
    table = f"{script.HEADER}\n|---|---|---|---|---|---|---|---|\n| ner | glove | 1 | f1 | 1.00 | 2.00 | 3 s | — |"
    output = f"[log] {script.HEADER} in a log line\nepoch 0: loss 1\n\n{table}\n\n"
    assert script.printed_table(output) == table
    text = f"intro\n{script.BEGIN}\n```\nold\n```\n{script.END}\nafter\n"
    new = script.with_block(text, table)
    assert new == f"intro\n{script.BEGIN}\n```\n{table}\n```\n{script.END}\nafter\n"
    assert script.readme_block(new) == table
    with pytest.raises(SystemExit):
        script.printed_table("no table here")
