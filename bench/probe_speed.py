"""The distance probe's training speed against Hewitt & Manning's own code, on the same HDF5 layers, in one run.

Both train a rank-``--rank`` distance probe on layer ``--layer`` of one ELMo-layout HDF5 file per split (keys "0",
"1", ... of shape (layers, words, dim), plus ``sentence_to_index``), batches of ``--batch-size`` sentences, for
``--epochs`` epochs each (early stopping cannot end a run that short: ours is given no patience limit), with a dev
pass per epoch as both regimens do. Timed: the training call alone (their ``ProbeRegimen.train_until_convergence``
with their ``ELMoDataset`` loaders; our ``structural.train_probe``), not the reading or the gold distances.

Data: the first ``--sentences`` training and ``--dev-sentences`` dev sentences of UD English-EWT (multiword ranges and
empty nodes dropped, written again as plain 10-column CoNLL-U, which their reader needs). Layers: random normal
vectors of width ``--dim`` (1024, ELMo's) unless ``--hdf5-dir`` holds ``train.hdf5``/``dev.hdf5`` for those
sentences: the values do not change the arithmetic timed. Prints, last, one JSON line with both rates (training
sentences per second) and their ratio; without ``--reference``, one line saying it was skipped and why.

    python bench/probe_speed.py --reference DIR [--sentences 500] [--threads 1]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
THEIRS = r"""
import json, sys, time, torch
sys.path.insert(0, sys.argv[1])
import data, loss, model, probe, regimen, task
args = json.loads(sys.argv[2])
torch.set_num_threads(args.pop("threads"))
torch.manual_seed(0)
args["device"] = torch.device("cpu")
dataset = data.ELMoDataset(args, task.ParseDistanceTask)
distance = probe.TwoWordPSDProbe(args)
trainer = regimen.ProbeRegimen(args)
train, dev = dataset.get_train_dataloader(), dataset.get_dev_dataloader()
started = time.perf_counter()
trainer.train_until_convergence(distance, model.DiskModel(args), loss.L1DistanceLoss(args), train, dev)
print(json.dumps({"seconds": time.perf_counter() - started}))
"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reference", default=None, help="a checkout of john-hewitt/structural-probes")
    p.add_argument("--data-dir", default=str(REPO.parent / "shared" / "data" / "pos" / "ud_english_ewt"))
    p.add_argument("--sentences", type=int, default=500, help="training sentences")
    p.add_argument("--dev-sentences", type=int, default=100)
    p.add_argument("--dim", type=int, default=1024, help="layer width of the random layers")
    p.add_argument("--layers", type=int, default=3, help="layers in the random HDF5 files")
    p.add_argument("--layer", type=int, default=1, help="the layer both probes read")
    p.add_argument("--rank", type=int, default=None, help="probe rank (default: the width, as the paper)")
    p.add_argument("--hdf5-dir", default=None, help="train.hdf5 and dev.hdf5 for these sentences instead")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=20)
    p.add_argument("--threads", type=int, default=1)
    return p


def _split_path(directory: Path, split: str) -> Path:
    return next(p for p in (directory / f"en_ewt-ud-{split}.conllu", directory / f"en_ewt-ud-{split}.conllu.gz")
                if p.exists())


def write_split(sentences, conllu: Path, hdf5: Path | None, layers: int, dim: int, seed: int) -> None:
    """Plain CoNLL-U (IDs 1..n, 10 columns) and, unless ``hdf5`` is None, random ELMo-layout layers."""
    import h5py

    lines = []
    for s in sentences:
        lines += [f"{i + 1}\t{w}\t_\t{u}\t{x}\t_\t{h}\t_\t_\t_"
                  for i, (w, u, x, h) in enumerate(zip(s.tokens, s.upos, s.xpos, s.heads))] + [""]
    conllu.write_text("\n".join(lines) + "\n")
    if hdf5 is None:
        return
    rng = np.random.default_rng(seed)
    with h5py.File(hdf5, "w") as out:
        for i, s in enumerate(sentences):
            out.create_dataset(str(i), data=rng.standard_normal((layers, len(s.tokens), dim)).astype(np.float32))
        index = out.create_dataset("sentence_to_index", (1,), dtype=h5py.string_dtype())
        index[0] = json.dumps({" ".join(s.tokens): str(i) for i, s in enumerate(sentences)})


def ours(sentences: dict, files: dict[str, Path], args: argparse.Namespace, rank: int) -> float:
    """Seconds our ``train_probe`` takes for ``--epochs`` epochs on the same files."""
    import h5py
    import torch

    from elmo_bench.probe.structural.metrics import tree_distances
    from elmo_bench.probe.structural.probes import DistanceProbe, Regimen, Split, train_probe

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    splits = {}
    for split, path in files.items():
        with h5py.File(path, "r") as layers:
            feats = [np.asarray(layers[str(i)][args.layer], dtype=np.float32) for i in range(len(sentences[split]))]
        splits[split] = Split(feats, [tree_distances(s.heads) for s in sentences[split]])
    dim = splits["train"].features[0].shape[1]
    regimen = Regimen(batch_size=args.batch_size, max_epochs=args.epochs, patience=10 ** 6)
    started = time.perf_counter()
    train_probe(DistanceProbe(dim, rank), splits["train"], splits["dev"], regimen)
    return time.perf_counter() - started


def theirs(reference: Path, tmp: Path, files: dict[str, Path], args: argparse.Namespace, dim: int, rank: int) -> float:
    """Seconds their regimen takes, run in a subprocess on their modules."""
    fields = ["index", "sentence", "lemma_sentence", "upos_sentence", "xpos_sentence", "morph", "head_indices",
              "governance_relations", "secondary_relations", "extra_info", "embeddings"]
    config = {"dataset": {"observation_fieldnames": fields, "batch_size": args.batch_size,
                          "corpus": {"root": str(tmp), "train_path": "train.conllu", "dev_path": "dev.conllu",
                                     "test_path": "dev.conllu"},
                          "embeddings": {"type": "token", "root": "/", "train_path": str(files["train"]),
                                         "dev_path": str(files["dev"]), "test_path": str(files["dev"])}},
              "model": {"hidden_dim": dim, "model_type": "ELMo-disk", "use_disk": True, "model_layer": args.layer},
              "probe": {"task_signature": "word_pair", "task_name": "parse-distance", "maximum_rank": rank,
                        "psd_parameters": True, "diagonal": False, "params_path": "predictor.params"},
              "probe_training": {"epochs": args.epochs, "loss": "L1"},
              "reporting": {"root": str(tmp)}, "threads": args.threads}
    done = subprocess.run([sys.executable, "-c", THEIRS, str(reference / "structural-probes"), json.dumps(config)],
                          cwd=tmp, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"probe_speed: the reference run failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])["seconds"]


def main() -> int:
    args = build_parser().parse_args()
    if not args.reference:
        print(json.dumps({"skipped": "no --reference DIR (a checkout of john-hewitt/structural-probes) given: "
                                     "nothing to compare against"}))
        return 0
    reference = Path(args.reference)
    if not (reference / "structural-probes" / "regimen.py").is_file():
        raise SystemExit(f"probe_speed: {reference}: no structural-probes/regimen.py (expected the authors' checkout)")
    from elmo_bench.probe.lib.conllu_trees import read_trees

    data = Path(args.data_dir)
    sentences = {"train": read_trees(_split_path(data, "train"))[: args.sentences],
                 "dev": read_trees(_split_path(data, "dev"))[: args.dev_sentences]}
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        files = {}
        for k, (split, group) in enumerate(sentences.items()):
            given = Path(args.hdf5_dir) / f"{split}.hdf5" if args.hdf5_dir else None
            files[split] = given or tmp / f"{split}.hdf5"
            write_split(group, tmp / f"{split}.conllu", None if given else files[split], args.layers, args.dim, k)
        import h5py

        with h5py.File(files["train"], "r") as f:
            dim = int(f["0"].shape[2])
        rank = args.rank or dim
        ours_s = ours(sentences, files, args, rank)
        theirs_s = theirs(reference, tmp, files, args, dim, rank)
    done = args.epochs * len(sentences["train"])
    result = {"train_sentences": len(sentences["train"]), "epochs": args.epochs, "batch_size": args.batch_size,
              "dim": dim, "rank": rank, "threads": args.threads, "ours_seconds": round(ours_s, 2),
              "theirs_seconds": round(theirs_s, 2), "ours_sentences_per_second": round(done / ours_s, 1),
              "theirs_sentences_per_second": round(done / theirs_s, 1), "ratio": round(theirs_s / ours_s, 2)}
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
