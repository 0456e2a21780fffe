"""``elmo-bench evaluate RUN_DIR [--split S] [--device D]``: re-evaluate a finished run from its saved best model.

Everything comes from the run directory: the resolved configuration from ``run.json`` (no Hydra process needed),
the weights, the task's state (label sets, genre lists) and the GloVe vocabulary from ``best.pt``. The data are read
again from the configured files (or hub / disk copy), the biLM layers come from the activation cache (or the biLM,
checked to be the one the run used), and the metrics are computed exactly as at the end of training, so the
numbers equal those in ``results.json``. Prints one JSON object: ``{"run", "epoch", "device", "metrics": {split:
{metric: value}}}``. A probe run (``python run.py probe=...`` or an ``elmo-bench probe-*`` ``--out``) saves no model:
its results.json holds its scores, and it is refused in one line saying so.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

import torch
from omegaconf import OmegaConf

from elmo_bench.base import checkpoints
from elmo_bench.base.arguments import ArgumentParser
from elmo_bench.base.device import resolve_device
from elmo_bench.base.errors import ConfigError
from elmo_bench.encoders.protocol import cache_id
from elmo_bench.engine.config_door import is_probe_job, resolve_run_config
from elmo_bench.engine.experiment import assemble, load_task, trainer_config
from elmo_bench.engine.loop import evaluate
from elmo_bench.engine.prepare import load_encoder_info, read_data
from elmo_bench.engine.run_config import RunConfig
from elmo_bench.engine.run_identity import check_data_identity
from elmo_bench.engine.run_records import RUN_FILE, StoredRun, read_run
from elmo_bench.modules.token_embedders import WordVocabulary
from elmo_bench.probe.registry import registered_probes
from elmo_bench.records.run_record import RESULTS_FILE, RunRecord

BEST = "best.pt"


def _load_run(run_dir: Path) -> tuple[RunConfig, Mapping[str, Any], dict[str, Any]]:
    """(its RunConfig, identity, best.pt state) of a run directory; ConfigError naming what is missing; the data files
    checked to be the ones the run was trained on (run_identity.check_data_identity, as resume and skip do)."""
    record, best = run_dir / RUN_FILE, run_dir / BEST
    if not run_dir.is_dir():
        raise ConfigError(f"{run_dir}: no such run directory")
    saved = read_run(record) if record.exists() else None
    probe = _probe_of(run_dir, saved)
    if probe is not None:  # its results.json holds its scores: no best.pt to re-evaluate, and never an untrained one
        raise ConfigError(f"{run_dir}: a probe run ({probe}), not a task run: its {RESULTS_FILE} already holds its "
                          f"scores; evaluate re-evaluates a task run (python run.py task=...) from its {BEST}")
    if saved is None:
        raise ConfigError(f"{run_dir}: no {RUN_FILE} (expected a run directory written by run.py)")
    if saved.config is None:  # before best.pt: another program's directory is not "a run that has not trained"
        raise ConfigError(f"{record}: holds no 'config' object; expected a run.json written by run.py")
    if not best.exists():
        raise ConfigError(_no_best(run_dir))
    run = resolve_run_config(OmegaConf.create(dict(saved.config)))  # run.py's door: ranges, data files (no FIFO hangs)
    check_data_identity(run_dir, saved, run.data)
    state = checkpoints.load(best, "cpu", advice="train the run again to evaluate it")
    if "task" not in state:
        raise ConfigError(f"{best}: written before checkpoints held the task's state (labels, vocabulary); "
                          f"train the run again to evaluate it")
    return run, saved.identity, state


def _probe_of(run_dir: Path, saved: StoredRun | None) -> str | None:
    """Which probe made ``run_dir`` (``probe=NAME`` from a ``python run.py probe=NAME`` run's run.json; ``task NAME``
    from the results.json an ``elmo-bench probe-*`` alias writes without run.json), or None: a task run's."""
    if saved is not None:
        config = saved.config
        return f"probe={config['probe'].get('name')}" if config is not None and is_probe_job(config) else None
    try:
        task = RunRecord.read(run_dir / RESULTS_FILE).task if (run_dir / RESULTS_FILE).is_file() else None
    except ValueError:  # an unreadable results.json: no probe's record either
        return None
    probes = {declared.record_task for declared in registered_probes().values()}
    return f"results.json's task {task}" if task in probes else None


def _no_best(run_dir: Path) -> str:
    """Why a run directory has no best.pt: a run that trained no epoch (its results.json says so: it never wrote
    one), a file deleted or moved, or a run that has not finished an epoch."""
    found = [name for name in (RESULTS_FILE, "checkpoint.pt") if (run_dir / name).exists()]
    try:
        epochs = RunRecord.read(run_dir / RESULTS_FILE).epochs if RESULTS_FILE in found else {}
    except ValueError:  # an unreadable results.json: the file-based answer below
        epochs = {}
    if epochs.get("run") == 0:
        return (f"{run_dir}: no {BEST}: the run trained no epoch ({RESULTS_FILE}: epochs.run 0, stopped by "
                f"{epochs.get('stopped_by')}), so it never saved a model and its scores are an untrained head's; "
                f"train it again with settings that train")
    if found:
        return (f"{run_dir}: no {BEST} (the saved best model) although {' and '.join(found)} "
                f"{'is' if len(found) == 1 else 'are'} there: it was deleted or moved; restore it or train the run "
                f"again")
    return f"{run_dir}: no {BEST} (the run has not finished an epoch of training)"


def evaluate_run_dir(run_dir: str | Path, split: str | None = None, device: str | None = None,
                     with_predictions: bool = False) -> dict[str, Any]:
    """Metrics of ``split`` (default: every split but train, as in results.json) from the run's ``best.pt``;
    ``with_predictions`` adds ``predictions`` by split, in the layout of the run's ``predictions_<split>.json``."""
    run_dir = Path(run_dir)
    run, identity, state = _load_run(run_dir)
    target = resolve_device(device if device is not None else run.runtime.device,
                            "--device" if device is not None else "device")
    torch.set_num_threads(int(run.runtime.threads) or 1)
    task = load_task(run.task.name)
    prepared = read_data(run.data, task, int(run.runtime.seed))
    available = list(prepared.splits)
    if split is not None and split not in available:
        raise ConfigError(f"--split {split!r}: the run's data has the splits {available}")
    chosen = [split] if split is not None else [s for s in available if s != "train"]
    prepared.splits = {s: prepared.splits[s] for s in chosen}
    task.load_state_dict(state["task"])  # the label sets the model was trained with, not refitted ones
    bilm, bilm_info = (load_encoder_info(run.encoder, run.runtime.amp) if run.embedder.elmo  # the biLM or encoder=
                       else (None, None))
    if bilm_info is not None and identity.get("bilm.hash") not in (None, bilm_info["hash"]):
        raise ConfigError(f"{run_dir}: the biLM files {run.encoder.bilm.weights} changed since the run (hash "
                          f"{identity['bilm.hash']} then, {bilm_info['hash']} now)")
    if bilm is not None and bilm_info is None and identity.get("encoder.hash") not in (None, cache_id(bilm)):
        raise ConfigError(f"{run_dir}: the encoder changed since the run (identity {identity['encoder.hash']} "
                          f"then, {cache_id(bilm)} now)")
    glove_table = None
    if run.embedder.glove:
        words = (state.get("extra") or {}).get("vocab")
        if not words:
            raise ConfigError(f"{run_dir / BEST}: holds no GloVe vocabulary; train the run again to evaluate it")
        glove_table = (WordVocabulary(list(words[2:])), state["model"]["embedder.glove.weight"])
    model, collators, _ = assemble(run, task, prepared, bilm, bilm_info, target, int(run.runtime.seed), glove_table)
    model.load_state_dict(state["model"])
    batch_size = trainer_config(run, prepared.fraction).eval_batch_size
    out: dict[str, Any] = {"run": str(run_dir), "epoch": int(state["epoch"]), "device": str(target), "metrics": {}}
    for s in chosen:
        examples = prepared.splits[s]
        out["metrics"][s], predictions = evaluate(model, task, examples, collators[s], batch_size)
        if with_predictions:
            out.setdefault("predictions", {})[s] = [{"id": e.get("id", i), "prediction": p}
                                                    for i, (e, p) in enumerate(zip(examples, predictions))]
    return out


def build_parser() -> ArgumentParser:
    """``elmo-bench evaluate``'s arguments."""
    parser = ArgumentParser(prog="elmo-bench evaluate",
                                     description="Re-evaluate a finished run from its best model (best.pt).")
    parser.add_argument("run_dir", help="a run directory written by run.py (holds run.json and best.pt)")
    parser.add_argument("--split", default=None, help="dev, test, train, ... (default: every split but train)")
    parser.add_argument("--device", default=None, help="auto | cpu | cuda | cuda:N (default: the run's device key)")
    return parser


def evaluate_main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(list(argv) if argv is not None else None)
    print(json.dumps(evaluate_run_dir(args.run_dir, args.split, args.device)))
    return 0
