"""Finish the shipped biLM: export the run (or its latest checkpoint), copy it into elmo_bench/resources/bilm/,
measure held-out perplexities and write TRAINING.json + TRAINING.md next to the weights.

Usage: python scripts/finish_shipped_bilm.py [RUN_DIR] [WORK_DIR] [PRETRAIN_CONFIG] [MAX_SENTENCES] [TARGET_DIR]
       (defaults: /work/lm_work/run_v2 /work/lm_work default, as made by scripts/prepare_lm_corpus.py and
       `elmo-bench pretrain` with conf/pretrain/default.yaml; scripts/lm_curve.py adds the held-out curve)
"""
from __future__ import annotations

import datetime as dt
import json
import os
import platform
import shutil
import sys
from pathlib import Path

import h5py
import torch

from elmo_bench.base import checkpoints
from elmo_bench.bilm.checksums import write_checksums
from elmo_bench.commands.pretrain import SHIPPED, compose_pretrain
from elmo_bench.pretrain.export import export_checkpoint, write_activation_check
from elmo_bench.pretrain.language_model import LanguageModel, make_options, training_extra
from elmo_bench.pretrain.perplexity import evaluate, load_lm
from elmo_bench.pretrain.train import heldout_sentences


def _utc(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


HELDOUT = {"litbank_fold0_devtest": "litbank_fold0_devtest.txt", "ptb_test": "ptb.test.txt",
           "ptb_valid": "ptb.valid.txt", "novels_heldout": "novels.heldout.txt"}


def main(run_dir: str = "/work/lm_work/run_v2", work_dir: str = "/work/lm_work", config: str = "default",
         max_sentences: str | None = None, target_dir: str | None = None) -> None:
    """``target_dir`` (default: the package's resources/bilm) receives the model, TRAINING.{json,md}, the plot."""
    torch.set_num_threads(os.cpu_count() or 1)  # run it while the training run is stopped
    run, work = Path(run_dir), Path(work_dir)
    target = Path(target_dir) if target_dir else SHIPPED
    cfg = compose_pretrain([f"pretrain={config}"])
    finished = (run / "summary.json").exists() and (run / "export" / "weights.hdf5").exists()
    source = run / "export"
    if not finished:
        source = run / "export_from_checkpoint"
        export_checkpoint(run / "checkpoint.pt", cfg, source)
    target.mkdir(parents=True, exist_ok=True)
    for name in ("options.json", "weights.hdf5", "vocab.txt"):
        shutil.copyfile(source / name, target / name)
    write_checksums(target)  # weights.sha256 of the new files: load_bilm checks it on every load
    checkpoint = checkpoints.load(run / "checkpoint.pt", "cpu")
    trained = LanguageModel(make_options(cfg.model, training_extra(cfg, len(checkpoint["vocab"]))),
                            len(checkpoint["vocab"]), cfg.num_sampled)
    trained.load_state_dict(checkpoint["model"])
    write_activation_check(trained, target / "activation_check.json")  # the training graph's own numbers
    bilm, weight, bias, vocab, counts = load_lm(target / "options.json", target / "weights.hdf5",
                                                target / "vocab.txt")
    heldout = {}
    for label, name in HELDOUT.items():
        file = work / name
        heldout[label] = evaluate(bilm, weight, bias, vocab, counts, heldout_sentences([str(file)], int(max_sentences) if max_sentences else None))
        print(label, json.dumps(heldout[label]), flush=True)
    curve = run / "heldout_curve.jsonl"  # this checkpoint's point of the held-out curve (scripts/lm_curve.py format)
    steps_done = {json.loads(line)["step"] for line in curve.read_text().splitlines()} if curve.exists() else set()
    if checkpoint["step"] not in steps_done:
        point = {"step": checkpoint["step"], "tokens": checkpoint["tokens_seen"], "train_seconds": checkpoint["train_seconds"],
                 **{k: {m: round(v, 2) if isinstance(v, float) else v for m, v in heldout[k].items()}
                    for k in ("litbank_fold0_devtest", "ptb_test")}}
        with open(curve, "a") as handle:
            handle.write(json.dumps(point) + "\n")
    core = sum(p.numel() for p in bilm.parameters())
    with h5py.File(target / "weights.hdf5", "r") as handle:
        softmax = int(handle["softmax/W"].size + handle["softmax/b"].size)
    history = checkpoint.get("history", [])  # the surviving run's own log (train_log.jsonl may hold duplicates)
    started = (run / "pid").stat().st_mtime if (run / "pid").exists() else None
    ended = (run / "checkpoint.pt").stat().st_mtime
    prep = json.loads((work / "prepare_stats.json").read_text())
    corpus_tokens = json.loads((run / "summary.json").read_text())["corpus_tokens"] if finished else None
    info = {
        "options": json.loads((target / "options.json").read_text()),
        "parameters": {"bilm": core, "softmax": softmax, "total": core + softmax},
        "weights_hdf5_bytes": (target / "weights.hdf5").stat().st_size,
        "vocab_size": len(vocab),
        "corpus": {
            "train_files": list(cfg.train_files), "novels": prep["books"], "excluded_litbank_fold0_dev_test":
                prep["excluded_books"], "novel_train_tokens": prep["train_tokens"],
            "novel_train_sentences": prep["train_sentences"], "heldout_novel_sentences": prep["heldout_sentences"],
            "stream_tokens_with_boundaries": corpus_tokens,
        },
        "training": {
            "finished_budget": finished,
            "stop_reason": ("token budget reached" if checkpoint["tokens_seen"] >= cfg.max_tokens else
                            "stopped by a max_tokens or max_train_seconds cap given on the command line (NOTES below say which)" if finished else
                            "exported from the latest checkpoint while the run was still going"), "steps": checkpoint["step"], "tokens_seen": checkpoint["tokens_seen"],
            "train_seconds": round(checkpoint["train_seconds"], 1),
            "wall_start": _utc(started) if started else None, "wall_end": _utc(ended),
            "epochs_of_corpus": round(checkpoint["tokens_seen"] / corpus_tokens, 3) if corpus_tokens else None,
            "config": {k: getattr(cfg, k) for k in ("batch_size", "unroll_steps", "num_sampled", "dropout", "optimizer", "lr",
                                          "initial_accumulator", "grad_clip", "max_tokens", "max_train_seconds",
                                          "min_count", "max_vocab", "seed")},
            "machine": {"cpu": _cpu_model(), "cores_visible": os.cpu_count(), "torch_threads": cfg.threads,
                        "torch": torch.__version__, "python": platform.python_version(),
                        "note": "2 cores shared with other jobs during training"},
            "notes": (run / "NOTES.txt").read_text().strip().splitlines() if (run / "NOTES.txt").exists() else [],
            "loss_curve_sampled": [{"tokens": h["tokens"], "loss": round(h["loss_ema"], 3)}
                                   for h in [h for h in history if "loss_ema" in h][::5]],
            "events": [h for h in history if "event" in h],
            "heldout_curve": _heldout_curve(run),
        },
        "heldout_perplexity": heldout,
        "commands": {
            "prepare": "python scripts/prepare_lm_corpus.py ../shared/data /work/lm_work",
            "train": f"elmo-bench pretrain pretrain={config}",
            "curve": f"python scripts/lm_curve.py {run} {config} {work}",
            "finish": f"python scripts/finish_shipped_bilm.py {run} {work} {config}",
            "perplexity_litbank": "elmo-bench perplexity --input /work/lm_work/litbank_fold0_devtest.txt",
            "perplexity_ptb_test": "elmo-bench perplexity --input /work/lm_work/ptb.test.txt",
            "perplexity_ptb": "elmo-bench perplexity --input /work/lm_work/ptb.valid.txt",
            "perplexity_novels": "elmo-bench perplexity --input /work/lm_work/novels.heldout.txt",
            "speed": "python bench/pretrain_speed.py --compare-baseline --corpus /work/lm_work/novels.heldout.txt",
        },
    }
    plot_curves(info, target / "training_curve.png")
    (target / "TRAINING.json").write_text(json.dumps(info, indent=2) + "\n")
    (target / "TRAINING.md").write_text(render(info))
    print(json.dumps({"parameters": info["parameters"], "training": {k: info["training"][k] for k in
                      ("steps", "tokens_seen", "train_seconds")}, "heldout": heldout}))


def _heldout_curve(run: Path) -> list[dict]:
    path = run / "heldout_curve.jsonl"
    if not path.exists():
        return []
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [{"tokens": r["tokens"], **{k: r[k]["average"] for k in r if isinstance(r[k], dict)},
             "ptb_test_unigram": r.get("ptb_test", {}).get("unigram")} for r in rows]


def plot_curves(info: dict, target: Path) -> None:
    """Training loss (sampled softmax, EMA) and held-out perplexity against tokens seen."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = info["training"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6))
    loss = t["loss_curve_sampled"]
    left.plot([r["tokens"] / 1e6 for r in loss], [r["loss"] for r in loss])
    left.set(xlabel="tokens seen (M)", ylabel="training loss (sampled softmax, EMA)", title="training loss")
    curve = t["heldout_curve"]
    for key, label in (("litbank_fold0_devtest", "LitBank fold-0 dev+test"), ("ptb_test", "PTB test")):
        points = [(r["tokens"] / 1e6, r[key]) for r in curve if key in r]
        if points:
            right.plot(*zip(*points), marker="o", label=label)
    right.set(xlabel="tokens seen (M)", ylabel="average perplexity", yscale="log", title="held-out perplexity")
    if curve:
        right.legend()
    fig.tight_layout()
    fig.savefig(target, dpi=110)
    plt.close(fig)


def render(info: dict) -> str:
    o, t, c = info["options"], info["training"], info["corpus"]
    lstm, cnn = o["lstm"], o["char_cnn"]
    rows = "\n".join(
        f"| {label} | {r['tokens']:,} | {r['forward']:.1f} | {r['backward']:.1f} | {r['average']:.1f} | {r['unigram']:.1f} |"
        for label, r in info["heldout_perplexity"].items())
    return f"""# The shipped biLM (`elmo_bench/resources/bilm/`)

Trained from scratch with this repository's `elmo-bench pretrain` (bilm-tf's recipe, scaled down to a 2-core CPU).
The first shipped biLM (v1) stays reachable as `bilm=shipped_v1` (`elmo_bench/resources/bilm_v1/`).

## Architecture
* Char CNN: {cnn['embedding']['dim']}-d char embeddings, filters {cnn['filters']} ({sum(n for _, n in cnn['filters'])} total), {cnn['n_highway']} highway layer, {cnn['activation']}, projection to {lstm['projection_dim']}.
* {lstm['n_layers']} biLSTM layers, {lstm['dim']} cells projected to {lstm['projection_dim']} (cell clip {lstm['cell_clip']}, proj clip {lstm['proj_clip']}), residual connection between layers; ELMo output dim {2 * lstm['projection_dim']}.
* Softmax shared by both directions over a {info['vocab_size']:,}-word vocabulary (min count {t['config']['min_count']}), trained with sampled softmax ({t['config']['num_sampled']} log-uniform negatives); stored as `softmax/W`, `softmax/b` in `weights.hdf5`.
* Parameters: biLM {info['parameters']['bilm']:,} + softmax {info['parameters']['softmax']:,} = {info['parameters']['total']:,}; `weights.hdf5` is {info['weights_hdf5_bytes'] / 2**20:.1f} MiB.

## Corpus
* {c['novels']} Project Gutenberg novels from `../shared/data/lm_corpus/gutenberg_litbank_originals` (sentence split + Moses tokenised by `scripts/prepare_lm_corpus.py`; last 1% of each novel's sentences held out) + PTB train (`ptb_mikolov/ptb.train.txt.gz`, as is).
* Left out: the {len(c['excluded_litbank_fold0_dev_test'])} novels of LitBank fold 0's dev and test documents (the coref evaluation split): {', '.join(c['excluded_litbank_fold0_dev_test'])}.
* Training text: {c['novel_train_tokens']:,} novel tokens ({c['novel_train_sentences']:,} sentences) + PTB train.

## Training
* {t['steps']:,} steps × batch {t['config']['batch_size']} × unroll {t['config']['unroll_steps']} = **{t['tokens_seen']:,} tokens seen** (each trains both directions); {t['config']['optimizer']} lr {t['config']['lr']} (initial accumulator {t['config']['initial_accumulator']}), dropout {t['config']['dropout']}, global grad-norm clip {t['config']['grad_clip']}, seed {t['config']['seed']}.
* {t['train_seconds'] / 60:.0f} minutes of training ({t['wall_start']} → {t['wall_end']}), {t['stop_reason']}; {t['tokens_seen'] / t['train_seconds']:.0f} tokens/s on average; machine: {t['machine']['cpu']}, {t['machine']['torch_threads']} torch thread(s) ({t['machine']['note']}), torch {t['machine']['torch']}.
{''.join(chr(10) + '* ' + n for n in t['notes'])}{''.join(chr(10) + '* step ' + format(e['step'], ',') + ' (' + format(e['tokens'], ',') + ' tokens): ' + e['event'] for e in t.get('events', []))}

![training curve](training_curve.png)

## Held-out perplexity (full softmax, every sentence from a zero state, OOV scored as `<UNK>`)

| held-out text | tokens | forward | backward | average | unigram |
|---|---|---|---|---|---|
{rows}

`average` = mean of forward and backward perplexity; `unigram` = add-one unigram model from the training counts,
same vocabulary, same tokens (the reference a model that learned nothing beyond word frequencies would reach).

## Commands
```
{info['commands']['prepare']}
{info['commands']['train']}
{info['commands']['finish']}
{info['commands']['perplexity_ptb']}
{info['commands']['perplexity_novels']}
{info['commands']['speed']}
```
"""


if __name__ == "__main__":
    main(*sys.argv[1:6])
