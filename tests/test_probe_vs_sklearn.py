"""bench/probe_vs_sklearn.py runs for real on a tiny offline BERT (tests/hf_tiny.py) and a few UD EWT sentences:
the plain transformers + scikit-learn script it writes probes every layer, probe=pos runs on the same data, and
the last line is one JSON object with the contract keys (issue 58)."""
from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import REPO, needs_data
from tests.hf_tiny import _bert
from tests.ud_slice import ewt_slice

KEYS = ("ratio", "accuracy_ours", "accuracy_plain", "peak_mb_ours", "peak_mb_plain")


@needs_data
def test_the_bench_runs_both_probes_and_prints_the_contract_keys(tmp_path):
    import torch

    data = ewt_slice(tmp_path, {"train": 30, "dev": 12, "test": 12})
    lines = [" ".join(line.split("\t")[1] for line in block.splitlines() if line[:1].isdigit())
             for path in sorted(data.iterdir()) for block in path.read_text(encoding="utf-8").split("\n\n")]
    torch.manual_seed(0)
    model = tmp_path / "bert"
    model.mkdir()
    _bert(model, [line for line in lines if line], max_length=512, vocab_size=600)
    done = subprocess.run([sys.executable, "bench/probe_vs_sklearn.py", "--model", str(model), "--data", str(data),
                           "--train", "30", "--grid", "0.1,0.01", "--threads", "1"], cwd=REPO, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    printed = [json.loads(line) for line in done.stdout.splitlines()]
    summary = printed[-1]
    assert list(summary)[:len(KEYS)] == list(KEYS)
    assert summary["layers"] == 3 and summary["train_sentences"] == 30       # the embeddings and two blocks
    assert summary["ratio"] > 0 and summary["peak_mb_ours"] > 0 and summary["peak_mb_plain"] > 0
    assert 0 <= summary["accuracy_plain"] <= 100 and 0 <= summary["accuracy_ours"] <= 100
    paths = [p["path"] for p in printed if "path" in p]
    rows = [p for p in printed if "row" in p]
    assert paths == ["plain", "ours"] and [r["row"] for r in rows] == ["layer_0", "layer_1", "layer_2"]
    assert all(set(r["plain"]) == set(r["ours"]) == {"l2", "dev", "test"} for r in rows)
