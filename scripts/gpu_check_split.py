"""scripts/gpu_check.sh's two-device step (issue 58 item 3): a small Llama-style model (random weights, a tokenizer
trained here on the bundled NER sample; scripts/gpu_check_large.py's ``tiny`` shape, 8 blocks) loaded whole on one
GPU and spread over two by ``encoder.device_map=balanced``; the layers of the bundled NER sample's sentences from
both, compared (bit-identical expected: each block runs the same kernels on the same kind of device). With fewer
than two GPUs it writes why it skipped and exits 0; ``--device cpu`` runs the same path split between the CPU and
accelerate's disk offload.

    python scripts/gpu_check_split.py --device cuda --out OUT/split.json
    python scripts/gpu_check_split.py --device cpu --out OUT/split.json      # the path, on the CPU and the disk
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from elmo_bench.base.atomic import atomic_write_text  # noqa: E402

SAMPLE = REPO / "tasks" / "ner" / "samples" / "sample.train"


def sample_sentences() -> list[list[str]]:
    """The bundled NER sample's sentences (words only)."""
    sentences, words = [], []
    for line in SAMPLE.read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if not parts or parts[0] == "-DOCSTART-":
            if words:
                sentences.append(words)
            words = []
        else:
            words.append(parts[0])
    return sentences + ([words] if words else [])


def _split_map(encoder: Any, devices: tuple[Any, Any]) -> dict[str, Any]:
    """The embedding and the first half of the blocks on the first device, the rest on the second."""
    from elmo_bench.encoders.transformers.hf_forward import find_blocks

    blocks = find_blocks(encoder.model)
    prefix = next(name for name, module in encoder.model.named_modules() if module is blocks)
    half = len(blocks) // 2
    placed = {name: devices[0] for name, _ in encoder.model.named_children() if name != prefix}
    placed.update({f"{prefix}.{k}": devices[0] if k < half else devices[1] for k in range(len(blocks))})
    placed["norm"] = devices[1]
    return placed


def split_check(device: str) -> dict[str, Any]:
    """One GPU against two (or, on the CPU, the CPU against CPU + disk): the layers compared, and where the
    blocks went."""
    from gpu_check_large import build_model

    from elmo_bench.encoders.transformers.encoder import TransformersEncoder

    count = torch.cuda.device_count() if device != "cpu" else 0
    if device != "cpu" and count < 2:
        return {"skipped": f"{count} GPU{'s' if count != 1 else ''} here: the two-device split needs two"}
    work = Path(tempfile.mkdtemp(prefix="gpu_check_split_"))
    sentences = sample_sentences()
    build_model(work / "model", "tiny", [" ".join(s) for s in sentences], torch.device("cpu"))
    whole = TransformersEncoder(str(work / "model"), dtype="bfloat16").to("cuda:0" if device != "cpu" else "cpu")
    started = time.perf_counter()
    one = whole.packed_layers(sentences).cpu()
    one_seconds = time.perf_counter() - started
    spread_settings = ({"device_map": "balanced", "max_memory": {0: "1GB", 1: "1GB"}} if device != "cpu" else
                       {"device_map": _split_map(whole, ("cpu", "disk")), "offload_folder": str(work / "offload")})
    spread = TransformersEncoder(str(work / "model"), dtype="bfloat16", **spread_settings)
    used = sorted({str(d) for d in spread.model.hf_device_map.values()})
    if len(used) < 2:   # accelerate put the small model on one GPU: split its blocks in half by hand
        spread = TransformersEncoder(str(work / "model"), dtype="bfloat16",
                                     device_map=_split_map(spread, (0, 1)))
        used = sorted({str(d) for d in spread.model.hf_device_map.values()})
    started = time.perf_counter()
    two = spread.packed_layers(sentences).cpu()
    return {"device": device, "devices_used": used, "device_map": {k: str(v) for k, v in
                                                                   spread.model.hf_device_map.items()},
            "words": int(one.shape[0]), "layers": int(one.shape[1]), "bit_identical": bool(torch.equal(one, two)),
            "max_abs_difference": float((one - two).abs().max()), "one_device_seconds": one_seconds,
            "two_device_seconds": time.perf_counter() - started,
            "same_identity": whole.identity() == spread.identity()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gpu_check_split.py", description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(REPO / "scripts"))
    result = split_check(args.device)
    atomic_write_text(Path(args.out), json.dumps(result, indent=2) + "\n")
    print(result["skipped"] if "skipped" in result else json.dumps(result))
    return 0 if "skipped" in result or (result["bit_identical"] and result["same_identity"]) else 1


if __name__ == "__main__":
    sys.exit(main())
