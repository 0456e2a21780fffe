"""Issue 34 item 6: what the report and ``export-results`` do with records they must not trust or files they must
not replace. Tiny hand-written results trees (tests.test_report_golden.result), the real commands."""
from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from elmo_bench.commands.main import main
from elmo_bench.report.export_manifest import MANIFEST, sha256
from tests.conftest import REPO
from tests.test_report_golden import result, write


def _ner_tree(root: Path, elmo_test_seed2: float) -> Path:
    """Two seeds of NER baseline and +ELMo; the +ELMo seed 2 test F1 is ``elmo_test_seed2``."""
    for seed, base, elmo in [(1, 90.0, 92.0), (2, 91.0, elmo_test_seed2)]:
        write(root, f"ner/glove-seed{seed}", result("ner", "glove", seed, data="conll2003", test=base, dev=base))
        write(root, f"ner/glove_elmo-seed{seed}", result("ner", "glove_elmo", seed, data="conll2003", test=elmo,
                                                         dev=92.0))
    return root


def _one_error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: "), err
    return err[0]


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_a_non_finite_metric_is_shown_and_counted_as_skipped(tmp_path, capsys, value):
    """Before: the run vanished from Table 1 (n 2/1) while the summary said "0 skipped"."""
    root = _ner_tree(tmp_path / "runs", value)
    bad = root / "ner" / "glove_elmo-seed2" / "results.json"
    assert ("NaN" if value != value else "Infinity") in bad.read_text()
    assert main(["report", str(root), "--out", str(tmp_path / "r"), "--no-bootstrap"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"warning: skipping {bad}: metric test.f1 is {value} (not finite: the run diverged?)"]
    text = (tmp_path / "r" / "report.md").read_text()
    assert "4 results.json files read, 3 runs used (0 duplicate run(s) of one experiment kept once, 1 skipped)." in text
    assert "| ner | conll2003 | f1 | 90.50 ± 0.71 | 92.00 |" in text and "| 2/1 |" in text
    assert "## Runs skipped: a metric is not finite" in text
    assert f"| ner | conll2003 | glove_elmo | 2 | test.f1 | {value} | {bad} |" in text
    assert main(["report", str(root), "--out", str(tmp_path / "j"), "--format", "json", "--no-bootstrap"]) == 0
    rows = json.loads((tmp_path / "j" / "report.json").read_text())["tables"]["non_finite"]["rows"]
    assert rows == [{"task": "ner", "data": "conll2003", "embedder": "glove_elmo", "seed": 2, "metric": "test.f1",
                     "value": str(value), "file": str(bad)}]


def test_records_without_a_non_finite_metric_get_no_new_section(tmp_path):
    root = _ner_tree(tmp_path / "runs", 92.5)
    assert main(["report", str(root), "--out", str(tmp_path / "j"), "--format", "json", "--no-bootstrap"]) == 0
    assert "non_finite" not in json.loads((tmp_path / "j" / "report.json").read_text())["tables"]


@pytest.mark.parametrize("schema", [2, "1", 0])
def test_a_record_of_an_unknown_schema_is_skipped_with_a_warning(tmp_path, capsys, schema):
    root = _ner_tree(tmp_path / "runs", 92.5)
    newer = root / "ner" / "glove_elmo-seed2" / "results.json"
    record = json.loads(newer.read_text())
    newer.write_text(json.dumps({**record, "schema": schema, "metrics": {"test": {"f1": {"mean": 99.0}}}}))
    assert main(["report", str(root), "--out", str(tmp_path / "r"), "--no-bootstrap"]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"warning: skipping {newer}: unknown results.json schema {schema!r} (this version reads schemas "
                   f"1 to 1; written by a newer elmo-bench?)"]
    text = (tmp_path / "r" / "report.md").read_text()
    assert "3 runs used (0 duplicate run(s) of one experiment kept once, 1 skipped)" in text


def test_report_out_an_existing_file_is_one_line(tmp_path, capsys):
    root = _ner_tree(tmp_path / "runs", 92.5)
    out = tmp_path / "report.md"
    out.write_text("mine\n")
    assert main(["report", str(root), "--out", str(out), "--no-bootstrap"]) == 2
    assert _one_error(capsys) == (f"error: {out}: --out is an existing file; expected a directory (it gets "
                                  f"report.md or report.json and the figures' PNGs)")
    assert out.read_text() == "mine\n"


def _as_unprivileged() -> list[str]:
    """A command prefix under which a directory's mode is obeyed: root only without CAP_DAC_OVERRIDE."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: a read-only directory cannot be made")
    return ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--inh-caps=-dac_override,-dac_read_search"]


def test_report_into_a_read_only_directory_is_one_line(tmp_path):
    root = _ner_tree(tmp_path / "runs", 92.5)
    out = tmp_path / "readonly"
    out.mkdir()
    out.chmod(stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
    try:
        done = subprocess.run([*_as_unprivileged(), sys.executable, "-m", "elmo_bench", "report", str(root), "--out",
                               str(out), "--no-bootstrap"], cwd=REPO, capture_output=True, text=True, timeout=300,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
    finally:
        out.chmod(0o755)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr[-2000:]
    assert lines[0] == (f"error: {out}: cannot write the report there (Permission denied: a read-only directory? "
                        f"choose another with --out)")
    assert list(out.iterdir()) == []


def _export(capsys, src: Path, dst: Path, *extra: str) -> tuple[int, str]:
    code = main(["export-results", str(src), str(dst), *extra])
    return code, capsys.readouterr().err


def test_export_keeps_a_manifest_and_never_replaces_a_file_it_did_not_write(tmp_path, capsys):
    src, dst = _ner_tree(tmp_path / "runs", 92.5), tmp_path / "compact"
    assert _export(capsys, src, dst) == (0, "")
    manifest = json.loads((dst / MANIFEST).read_text())
    target = dst / "ner" / "glove-seed1" / "results.json"
    assert manifest["files"]["ner/glove-seed1/results.json"] == sha256(target.read_bytes())
    written = sorted(p.relative_to(dst).as_posix() for p in dst.rglob("*") if p.is_file() and p.name != MANIFEST)
    assert sorted(manifest["files"]) == written              # every file it wrote (results, task declarations)
    assert "task_declarations.json" in written
    assert _export(capsys, src, dst) == (0, "")                  # its own files, unchanged: replaced
    # a file it did not write: a hand-made results.json at a path the export writes
    record = json.loads((src / "ner" / "glove-seed1" / "results.json").read_text())
    (src / "ner" / "glove-seed1" / "results.json").write_text(json.dumps({**record, "seed": 7}))
    other = tmp_path / "other"
    (other / "ner" / "glove-seed1").mkdir(parents=True)
    (other / "ner" / "glove-seed1" / "results.json").write_text("{\"hand\": \"made\"}\n")
    before = {p: p.read_bytes() for p in other.rglob("*") if p.is_file()}
    assert main(["export-results", str(src), str(other)]) == 2
    assert _one_error(capsys) == (f"error: {other / 'ner' / 'glove-seed1' / 'results.json'}: exists and was not "
                                  f"written by export-results (see {other / MANIFEST}); not replaced (--overwrite to "
                                  f"replace it)")
    assert {p: p.read_bytes() for p in other.rglob("*") if p.is_file()} == before   # nothing written at all
    # a file it wrote, edited since: refused; --overwrite replaces it and records the new sha256
    target.write_text(target.read_text().replace('"seed": 1', '"seed": 1, "note": "edited"'))
    assert main(["export-results", str(src), str(dst)]) == 2
    assert "exists and changed since export-results wrote it" in _one_error(capsys)
    assert _export(capsys, src, dst, "--overwrite") == (0, "")
    assert json.loads(target.read_text())["seed"] == 7
    assert json.loads((dst / MANIFEST).read_text())["files"]["ner/glove-seed1/results.json"] == sha256(
        target.read_bytes())


def test_export_into_a_tree_of_identical_files_it_did_not_record_goes_through(tmp_path, capsys):
    """A tree exported before the manifest existed: the same bytes again lose nothing, so they are not refused."""
    src, dst = _ner_tree(tmp_path / "runs", 92.5), tmp_path / "compact"
    assert _export(capsys, src, dst) == (0, "")
    (dst / MANIFEST).unlink()
    assert _export(capsys, src, dst) == (0, "")
    assert (dst / MANIFEST).exists()


def test_the_split_overlap_runs_recorded_is_a_report_table(tmp_path):
    root = _ner_tree(tmp_path / "runs", 92.5)
    shares = {"dev_in_train": 0.0594, "test_in_train": 0.0365, "test_in_dev": 0.0145}
    for path in root.rglob("results.json"):
        record = json.loads(path.read_text())
        record["data"]["split_overlap"] = shares
        path.write_text(json.dumps(record))
    for fmt in ("md", "json"):
        assert main(["report", str(root), "--out", str(tmp_path / fmt), "--format", fmt, "--no-bootstrap"]) == 0
    text = (tmp_path / "md" / "report.md").read_text()
    assert "| Task | Data | dev in train | test in train | test in dev |" in text
    assert "| ner | conll2003 | 5.9% | 3.6% | 1.5% |" in text          # one row: the same data in every run
    table = json.loads((tmp_path / "json" / "report.json").read_text())["tables"]["split_overlap"]
    assert table["rows"] == [{"task": "ner", "data": "conll2003", **shares}]
    plain = _ner_tree(tmp_path / "plain", 92.5)                     # records from before: no table
    assert main(["report", str(plain), "--out", str(tmp_path / "p"), "--format", "json", "--no-bootstrap"]) == 0
    assert "split_overlap" not in json.loads((tmp_path / "p" / "report.json").read_text())["tables"]
