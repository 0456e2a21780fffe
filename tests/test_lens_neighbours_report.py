"""The report sections of probe=lens and probe=neighbours (issue 57), on real tiny runs of both probes (the fixtures
of their own tests): every number shown is the record's, nothing read is unshown, no task table gets a row, the lens
figure is drawn, and the paper-style Table 4 rows are the ones the neighbours run printed."""
from __future__ import annotations

import json

import pytest

from tests.conftest import needs_fixtures
from tests.test_lens_probe import _bilm_args, _ewt, lm_fixture  # noqa: F401  (lm_fixture: a fixture used here)
from tests.test_neighbours_probe import _overrides


@pytest.fixture(scope="module")
def reported(lm_fixture, tmp_path_factory):  # noqa: F811  (the imported fixture)
    """Both probes run once into one results directory, and the report over it as JSON and Markdown."""
    from elmo_bench.commands.plan import job_run
    from elmo_bench.commands.report import build_report
    from elmo_bench.engine.probe_run import run_probe

    root = tmp_path_factory.mktemp("sections")
    lens = run_probe(job_run(_bilm_args(lm_fixture, _ewt(root), "probe.max_epochs=1")), root / "results" / "lens")
    neighbours = run_probe(job_run(_overrides(root)), root / "results" / "neighbours")
    data = json.loads(build_report([str(root / "results")], root / "json", fmt="json", significance=False)
                      .read_text())
    markdown = build_report([str(root / "results")], root / "md", fmt="md", significance=False).read_text()
    (root / "none").mkdir()
    empty = json.loads(build_report([str(root / "none")], root / "empty", fmt="json", significance=False).read_text())
    return {"lens": lens, "neighbours": neighbours, "json": data, "md": markdown, "root": root, "empty": empty}


def _numbers(cell: str) -> list[float]:
    return [float(x) for x in cell.replace("[", " ").replace("]", " ").replace(",", " ").split()]


@needs_fixtures
def test_both_records_are_shown_in_their_sections_and_in_no_task_table(reported):
    data = reported["json"]
    assert "unshown" not in data and data["files"] == 2
    assert "probe=lens runs (own section): 1." in data["summary"]
    assert "probe=neighbours runs (own section): 1." in data["summary"]
    assert data["tables"]["table1"]["rows"] == []                 # no Table 1 row
    others = {key: t for key, t in data["tables"].items() if not key.startswith(("lens", "neighbours"))}
    assert others == reported["empty"]["tables"]                  # every other table as over no runs at all
    assert "Read but in no table" not in reported["md"]


@needs_fixtures
def test_the_lens_table_shows_the_records_bits_intervals_and_kl_with_the_twin_below(reported):
    dev = reported["lens"]["metrics"]["dev"]
    lens_keys = [key for key in reported["json"]["tables"] if key.startswith("lens_")]
    assert len(lens_keys) == 1                                   # one encoder: one table
    table = reported["json"]["tables"][lens_keys[0]]
    assert table["header"] == ["Lens", *[h for k in (0, 1, 2) for h in (f"layer {k} bits/token [95% CI]",
                                                                         f"layer {k} KL")], "n"]
    streams = [(p, lens, d) for p in ("", "random/") for lens in ("logit", "tuned") for d in ("forward", "backward")]
    assert [(("random/" if r["weights"] == "random twin" else ""), r["lens"], r["direction"])
            for r in table["rows"]] == streams
    for row, (prefix, lens, direction) in zip(table["rows"], streams):
        for k in (0, 1, 2):
            for m in ("bits", "bits_lo", "bits_hi", "kl", "ppl", "top1"):
                assert row[f"layer_{k}"][m] == dev[f"{prefix}{lens}/layer_{k}_{direction}_{m}"]
    md_rows = [line.split(" | ") for line in reported["md"].splitlines() if line.startswith("| random twin: tuned")]
    bits = _numbers(md_rows[-1][1])                              # the twin's tuned backward row, layer 0
    assert bits == pytest.approx([dev[f"random/tuned/layer_0_backward_{m}"] for m in ("bits", "bits_lo", "bits_hi")],
                                 abs=5e-4)
    assert "lens_bits_by_layer.png" in reported["json"]["figures"]
    assert (reported["root"] / "md" / "lens_bits_by_layer.png").stat().st_size > 0
    assert "![Probe lens: bits per token by layer (intervals shaded)](lens_bits_by_layer.png)" in reported["md"]


@needs_fixtures
def test_the_neighbours_table_is_table_4_measured_and_its_rows_are_the_printed_ones(reported):
    metrics = reported["neighbours"]["metrics"]["all"]
    table = reported["json"]["tables"]["neighbours"]
    assert table["header"] == ["Encoder", "layer 0", "layer 1", "average", "GloVe", "sense prior",
                               "most frequent sense", "k", "queries", "n"]
    (row,) = table["rows"]
    for view in ("layer_0", "layer_1", "average", "glove"):
        assert row[f"{view}_sense_agreement"] == {"mean": metrics[f"{view}_sense_agreement"],
                                                  "lo": metrics[f"{view}_sense_agreement_lo"],
                                                  "hi": metrics[f"{view}_sense_agreement_hi"]}
    assert row["sense_prior"] == metrics["sense_prior"] and row["most_frequent_sense"] == metrics["most_frequent_sense"]
    assert row["k"] == "3" and row["queries"] == 15
    line = next(x for x in reported["md"].splitlines() if x.startswith("| ") and "[1.0000, 1.0000]" in x)
    assert _numbers(line.split(" | ")[2]) == [1.0, 1.0, 1.0]      # layer 1 separates the senses: agreement 1
    printed = reported["neighbours"]["printed"]
    examples = reported["json"]["tables"]["neighbours_examples"]["rows"]
    assert [r for r in examples if r["view"] == "glove_types"] == [
        {"encoder": row["encoder"], "word": "bank", "view": "glove_types",
         "neighbours": ", ".join(n[0] for n in printed["glove_neighbours"]["bank"])}]
    assert [{k: v for k, v in r.items() if k != "encoder"} for r in examples if r["view"] != "glove_types"] \
        == printed["table4"]
    assert "| he the money [bank] . |" in reported["md"]
