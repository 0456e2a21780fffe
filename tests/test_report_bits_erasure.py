"""Issue 47 in the report: the "bits beyond a baseline" table and figure and the erasure table, from hand-made records
(the probes' schema: ``metrics.test`` flat keys, ``data.tags``, ``data.num_classes``) of the biLM, its random twin
and MiniLM; each section beside the paper's direction; kept out of the older tables; the figure laid out as every
report figure is (tests/test_report_figure_layout.py)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from elmo_bench.commands.report import build_report
from elmo_bench.records.run_record import RunRecord
from elmo_bench.report import figures
from tests.report_sections import probe_report
from tests.test_report_figure_layout import _overlaps, layout_problems
from tests.test_report_structural_mdl import ENCODERS

BITS_DEPTH = probe_report("conditional").FIGURE

H_Y = 3.663
#: name → {baseline: per-layer gains}: the trained biLM gains most at layer_1 plainly, at layer_2 beyond layer 0
GAINS = {"bilm": {"none": [2.7, 2.95, 2.8], "layer0": [0.0004, 0.15, 0.30]},
         "bilm_random": {"none": [2.7, 1.2, 0.8]},
         "minilm": {"none": [2.5, 2.8, 2.9, 2.95, 2.9, 2.8, 2.7], "layer0": [0.0, 0.3, 0.4, 0.45, 0.4, 0.35, 0.3]}}


def _record(path: Path, name: str, task: str, test: dict[str, float], data: dict[str, Any],
            settings: dict[str, Any] | None = None) -> None:
    encoder, bilm, random, _, _ = ENCODERS[name]
    path.mkdir(parents=True)
    RunRecord(task=task, embedder="elmo", seed=0, config={"probe": {"tags": "upos", **(settings or {})}, **random},
              metrics={"test": test}, data={"name": "ud_ewt", "fraction": 1.0, "train_sentences": 1000,
                                            "tags": "upos", "num_classes": 17, **data},
              main_metric=next(iter(test)), mixes={}, elmo=None, epochs={"run": 0, "best": None, "history": []},
              bilm=bilm, encoder=encoder).write(path / "results.json")


def conditional_metrics(gains: dict[str, list[float]], prefix: str = "") -> dict[str, float]:
    """A conditional record's test metrics: H(Y | b) = H(Y) for none, 0.95 for layer0; interval gain ± 0.05."""
    out: dict[str, float] = {"h_constant": H_Y, "test_unseen": 3}
    for b, values in gains.items():
        for k, gain in enumerate(values):
            base = H_Y if b == "none" else 0.95
            out.update({f"{prefix}{b}/layer_{k}_{key}": v for key, v in (
                ("h_baseline", base), ("h_joint", base - gain), ("gain", gain), ("gain_lo", gain - 0.05),
                ("gain_hi", gain + 0.05), ("accuracy", 80.0 + 2 * k))})
    return out


def erasure_metrics(layers: int, leaky: int | None = None) -> dict[str, float]:
    """An erasure record: rank 16 of 17 classes; layer ``leaky`` keeps 3 points above the majority share."""
    out = {"majority": 16.43, "prior_bits": H_Y, "test_unseen": 3}
    for k in range(layers):
        out.update({f"layer_{k}_rank": 16, f"layer_{k}_accuracy_before": 85.0 + k,
                    f"layer_{k}_accuracy_after": 16.43 + (3.0 if k == leaky else 0.0),
                    f"layer_{k}_bits_before": 0.7, f"layer_{k}_bits_after": H_Y - (0.3 if k == leaky else 0.0)})
    return out


def make_tree(root: Path) -> None:
    """The biLM (linear and MLP-1 in one record), its random twin, MiniLM (none and layer0 in two records of one
    seed, as ``-m probe.baseline=none,layer0`` writes them); erasure on the biLM and MiniLM (MiniLM's layer 3 leaky)."""
    _record(root / "bilm" / "conditional", "bilm", "conditional_probe",
            {**conditional_metrics(GAINS["bilm"]), **conditional_metrics(GAINS["bilm"], "mlp1:")}, {})
    _record(root / "bilm_random" / "conditional", "bilm_random", "conditional_probe",
            conditional_metrics(GAINS["bilm_random"]), {})
    for b in ("none", "layer0"):
        _record(root / "minilm" / f"conditional_{b}", "minilm", "conditional_probe",
                conditional_metrics({b: GAINS["minilm"][b]}), {}, {"baseline": b})   # its setting: another run
    _record(root / "bilm" / "erasure", "bilm", "erasure_probe", erasure_metrics(3), {})
    _record(root / "minilm" / "erasure", "minilm", "erasure_probe", erasure_metrics(7, leaky=3), {})


@pytest.fixture
def report(tmp_path):
    make_tree(tmp_path / "runs")
    path = build_report([str(tmp_path / "runs")], tmp_path / "out", "json", significance=False)
    return json.loads(path.read_text()), tmp_path


def _rows(table: dict[str, Any], **match: Any) -> list[dict[str, Any]]:
    return [r for r in table["rows"] if all(r.get(k) == v for k, v in match.items())]


def test_the_bits_table_has_every_layer_and_baseline_with_its_interval_and_the_papers_direction(report):
    found, _ = report
    table = found["tables"]["bits_beyond_baseline"]
    assert table["header"][:6] == ["Encoder", "Weights", "Labels", "Probe", "Layer", "H(Y)"]
    assert "gain over layer0" in table["header"] and "95% interval (layer0)" in table["header"]
    bilm = _rows(table, encoder="ELMo (biLM abcdef01)", weights="trained", probe="linear", layer=2)
    assert len(bilm) == 1 and bilm[0]["relative_depth"] == 1.0
    assert bilm[0]["test"]["layer0"]["gain"]["mean"] == pytest.approx(0.30)
    assert bilm[0]["test"]["layer0"]["h_joint"]["mean"] == pytest.approx(0.95 - 0.30)
    assert bilm[0]["test"]["h_constant"] == {"mean": H_Y, "std": None, "n": 1}
    assert len(_rows(table, probe="mlp1")) == 3 and len(_rows(table, weights="random (all, seed 0)")) == 3
    minilm = [r for r in table["rows"] if "MiniLM" in r["encoder"]]
    assert len(minilm) == 7 and minilm[3]["relative_depth"] == pytest.approx(0.5)
    assert minilm[3]["test"]["h_constant"] == {"mean": H_Y, "std": None, "n": 2}     # two records, one number
    assert minilm[3]["test"]["none"]["gain"]["n"] == 1 and minilm[3]["test"]["layer0"]["gain"]["n"] == 1
    directions = {(d["encoder"], d["probe"]): d for d in table["directions"]}
    bilm_linear = next(d for (e, p), d in directions.items() if "biLM" in e and p == "linear")
    assert (bilm_linear["plain_best_layer"], bilm_linear["beyond_layer0_best_layer"], bilm_linear["holds"]) == \
        (1, 2, True)
    assert (bilm_linear["plain_tied_layers"], bilm_linear["beyond_layer0_tied_layers"]) == ([], [])   # ± 0.05 apart
    minilm_linear = next(d for (e, _), d in directions.items() if "MiniLM" in e)
    assert (minilm_linear["plain_best_layer"], minilm_linear["beyond_layer0_best_layer"], minilm_linear["holds"]) == \
        (3, 3, None)                                # layers 2 and 4 within layer 3's interval: undecided
    assert minilm_linear["plain_tied_layers"] == [2, 4] and "tied within the intervals with layer_2, layer_4" in \
        minilm_linear["text"] and "neither as nor against" in minilm_linear["text"]
    assert len(directions) == 3                     # the random twin has no layer0 baseline: no direction
    assert table["paper"]["data"] == "OntoNotes 5 (English), UPOS" and "paper: Hewitt" in " ".join(table["notes"])


def test_the_erasure_table_sets_each_layer_beside_the_constant_predictor_and_says_where_the_guard_fails(report):
    found, _ = report
    table = found["tables"]["erasure"]
    assert len(table["rows"]) == 3 + 7
    leaky = [r for r in table["rows"] if r["holds"] is False]
    assert [(("MiniLM" in r["encoder"]), r["layer"]) for r in leaky] == [(True, 3)]
    row = _rows(table, encoder="ELMo (biLM abcdef01)", layer=1)[0]
    assert row["classes"] == [17] and row["test"]["rank"]["mean"] == 16 and row["holds"] is True
    assert row["test"]["majority"]["mean"] == 16.43 and row["test"]["prior_bits"]["mean"] == H_Y
    assert "paper: Belrose" in " ".join(table["notes"])


def test_records_that_differ_in_a_probe_setting_are_blocks_of_their_own_never_seeds(tmp_path):
    """Two MLP-1 epoch caps (and another baseline list, which does not matter) on one encoder: two labelled blocks."""
    for cap, baseline in ((10, "none"), (40, "none,layer0")):
        gains = {b: [g + cap / 1000 for g in values] for b, values in GAINS["bilm"].items()}
        _record(tmp_path / "runs" / f"cap{cap}", "bilm", "conditional_probe", conditional_metrics(gains, "mlp1:"), {},
                {"max_epochs": cap, "baseline": baseline})
    table = json.loads(build_report([str(tmp_path / "runs")], tmp_path / "out", "json", significance=False)
                       .read_text())["tables"]["bits_beyond_baseline"]
    assert [(r["weights"], r["layer"]) for r in table["rows"]] == [
        ("trained, max_epochs=10", k) for k in range(3)] + [("trained, max_epochs=40", k) for k in range(3)]
    assert all(r["test"]["none"]["gain"]["n"] == 1 for r in table["rows"])


def test_the_markdown_report_shows_both_sections_with_the_figure_and_keeps_them_out_of_older_tables(tmp_path):
    make_tree(tmp_path / "runs")
    text = build_report([str(tmp_path / "runs")], tmp_path / "md", "md", significance=False).read_text()
    assert "## Bits beyond a baseline (conditional probing) per encoder, labels and layer" in text
    assert f"![Bits beyond a baseline by relative layer depth]({BITS_DEPTH})" in text
    assert "## Concept erasure (LEACE) per encoder, labels and layer" in text
    assert "| 16 of 16 |" in text and "| no |" in text and "0.250 to 0.350" in text and "(as the paper's" in text
    assert "Conditional-probing and erasure runs (own section): 6." in text
    before = text.split("## Bits beyond a baseline")[0]                       # no older table has them
    assert "abcdef01" not in before and "MiniLM" not in before
    assert (tmp_path / "md" / BITS_DEPTH).is_file()


def test_the_bits_figure_draws_trained_solid_random_dashed_a_line_per_encoder_and_baseline(tmp_path, monkeypatch):
    drawn: dict[str, Any] = {}
    save = figures._save

    def measuring_save(fig, path):
        drawn[Path(path).name] = ({ax.get_title(): {line.get_label(): line.get_linestyle() for line in ax.get_lines()
                                                    if not line.get_label().startswith("_")} for ax in fig.axes
                                   if ax.get_visible() and ax.axison}, _overlaps(fig), layout_problems(fig))
        save(fig, path)

    monkeypatch.setattr(figures, "_save", measuring_save)
    make_tree(tmp_path / "runs")
    build_report([str(tmp_path / "runs")], tmp_path / "out", "json", significance=False)
    lines, overlaps, problems = drawn[BITS_DEPTH]
    assert overlaps == [] and problems == []
    assert set(lines) == {"upos, linear (converged) probe", "upos, MLP-1 probe"}
    linear = lines["upos, linear (converged) probe"]
    assert len(linear) == 2 + 1 + 2                  # biLM none/layer0, its twin none, MiniLM none/layer0
    assert {style for label, style in linear.items() if "trained" in label} == {"-"}
    assert {style for label, style in linear.items() if "random" in label} == {"--"}


def test_each_familys_prior_counts_only_the_records_of_that_family(tmp_path):
    """A linear and an MLP-1 record run separately (as the committed biLM evidence is): both hold H(Y), but each
    family's row counts only its own record (it counted both: n 2, a committed count changed by new evidence)."""
    root = tmp_path / "runs"
    _record(root / "linear", "bilm", "conditional_probe", conditional_metrics(GAINS["bilm"]), {}, {"probe": ["linear"]})
    _record(root / "mlp1", "bilm", "conditional_probe", conditional_metrics(GAINS["bilm"], "mlp1:"), {},
            {"probe": ["mlp1"]})                                  # each record says which family it trained
    table = json.loads(build_report([str(root)], tmp_path / "out", "json", significance=False).read_text())
    rows = table["tables"]["bits_beyond_baseline"]["rows"]
    assert {(r["probe"], r["test"]["h_constant"]["n"], r["test"]["h_constant"]["mean"]) for r in rows} == {
        ("linear", 1, H_Y), ("mlp1", 1, H_Y)} and len(rows) == 6


def test_a_block_whose_first_layer_gains_beyond_itself_is_flagged_by_the_methods_own_check(tmp_path):
    """Layer 0 conditioned on itself must add ≈ 0 (±0.01 bits): the random twin's −0.04 is named in a note and in
    ``self_checks`` (its gains are not to be read at face value), the trained biLM's 0.0004 passes silently."""
    make_tree(tmp_path / "runs")
    _record(tmp_path / "runs" / "bilm_random" / "conditional_layer0", "bilm_random", "conditional_probe",
            conditional_metrics({"layer0": [-0.04, 0.05, 0.06]}), {}, {"baseline": "layer0"})
    table = json.loads(build_report([str(tmp_path / "runs")], tmp_path / "out", "json",
                                    significance=False).read_text())["tables"]["bits_beyond_baseline"]
    checks = {(c["encoder"], c["weights"], c["probe"]): c for c in table["self_checks"]}
    failed = checks[("ELMo (biLM abcdef01)", "random (all, seed 0)", "linear")]
    assert failed["holds"] is False and failed["gain"] == pytest.approx(-0.04) and failed["layer"] == 0
    assert checks[("ELMo (biLM abcdef01)", "trained", "linear")]["holds"] is True
    flagged = [n for n in table["notes"] if n.startswith("check failed")]
    assert len(flagged) == 1 and "random (all, seed 0)" in flagged[0] and "-0.040 bits" in flagged[0]
    assert "-0.090 to 0.010" in flagged[0]                                     # its interval, gain ± 0.05


def test_without_a_failed_check_the_table_has_no_self_checks_key(report):
    found, _ = report
    table = found["tables"]["bits_beyond_baseline"]
    assert "self_checks" not in table and not [n for n in table["notes"] if n.startswith("check failed")]
