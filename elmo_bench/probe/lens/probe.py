"""Probe lens: the logit lens and the tuned lens on an LM with its head (elmo_bench.probe.lens.readout), scored on
the first ``probe.max_eval_sentences`` UD EWT dev sentences (elmo_bench.probe.lens.scoring); the tuned lens's
translators are fitted on the first ``probe.max_train_sentences`` training sentences (elmo_bench.probe.lens.tuned).
With ``probe.baseline=random`` the same is done on the encoder's random twin (``random_init=all``, seed 0), read
through the trained model's head, its KL and agreement taken against its own last layer.

Recorded (task ``lens_probe``): ``metrics.dev.<lens>/layer_<k>_<direction>_<m>`` for lens ``logit|tuned``, each
layer k ``probe.layers`` names (null: every one the encoder gives), direction ``forward|backward`` (a causal LM:
``forward``) and m in ``bits``, ``bits_lo``, ``bits_hi``, ``ppl``, ``kl`` (+ ``_lo``, ``_hi``), ``top1`` (+),
``agree`` (+); the twin's under ``random/<lens>/...``. The printed object holds the same rows nested by lens, the
prediction counts and the tuned lens's training curve (KL in bits per epoch).
"""
from __future__ import annotations

import logging
from typing import Any

from elmo_bench.base.errors import ConfigError
from elmo_bench.probe.api import ProbeContext, ProbeOutcome
from elmo_bench.probe.lib.ud_data import read_tagged
from elmo_bench.probe.settings import UD_EWT

from .config import LensSettings
from .readout import readout_for, trained_head
from .scoring import resample_weights, rows, score
from .tuned import train

log = logging.getLogger(__name__)
WHAT = "probe lens"


def model_layers(context: ProbeContext, readout: Any) -> list[int]:
    """The model's layer indices read (``probe.layers`` of those the encoder gives), in order."""
    chosen = [k for _, k in context.probed_layers(context.settings.layers)]
    outside = [k for k in chosen if not 0 <= k <= readout.top]
    if outside:
        raise ConfigError(f"config: probe.layers {outside} are outside the model's layers 0 .. {readout.top}")
    return sorted(chosen)


def lens_rows(readout: Any, layers: list[int], train_text: list[list[str]], dev: list[list[str]],
              settings: LensSettings, seed: int, prefix: str = "") -> dict[str, Any]:
    """Every asked lens scored on ``dev`` through ``readout`` (the tuned one fitted on ``train_text`` first):
    ``rows`` (``<prefix><lens>/layer_<k>_<direction>`` → numbers), ``history``, ``predictions`` per direction."""
    lenses: dict[str, Any] = {}
    history: list[float] = []
    for name in settings.lenses:
        if name == "logit":
            lenses[name] = None
        else:
            lenses[name], history = train(readout, layers, train_text, settings, seed)
    scored, _ = score(readout, lenses, dev, layers, settings.batch_size)
    weights = resample_weights(len(dev), settings.bootstrap, seed)
    found = rows(scored, weights)
    any_lens = settings.lenses[0]
    predictions = {d: int(scored[(any_lens, layers[0], d)][:, -1].sum()) for d in readout.directions}
    return {"rows": {f"{prefix}{key}": row for key, row in found.items()}, "history": history,
            "predictions": predictions}


def twin_rows(context: ProbeContext, readout: Any, layers: list[int], train_text: list[list[str]],
              dev: list[list[str]]) -> dict[str, Any] | None:
    """The random twin's rows under ``random/`` (None: no baseline asked, or the encoder is random itself)."""
    settings: LensSettings = context.settings
    if settings.baseline != "random" or "random_init" in context.encoder.identity():
        return None
    head = trained_head(readout)
    twin = context.random_twin(0)
    twin_readout = readout_for(twin.encoder.to(context.device), context.device, trained=head)
    return lens_rows(twin_readout, layers, train_text, dev, settings, context.seed, prefix="random/")


def flat_metrics(found: dict[str, dict[str, float]]) -> dict[str, float]:
    """``<lens>/layer_<k>_<direction>_<m>`` → value."""
    return {f"{key}_{m}": value for key, row in found.items() for m, value in row.items()}


def run(context: ProbeContext) -> ProbeOutcome:
    """Probe lens on ``context``'s encoder (see the module docstring)."""
    settings: LensSettings = context.settings
    readout = readout_for(context.encoder, context.device)
    layers = model_layers(context, readout)
    read_ = read_tagged(context.data_dir(settings.data_dir, UD_EWT), "upos", settings.max_train_sentences,
                        settings.max_eval_sentences)
    train_text = [list(ex["tokens"]) for ex in read_.splits["train"]] if "tuned" in settings.lenses else []
    dev = [list(ex["tokens"]) for ex in read_.splits["dev"]]
    trained = lens_rows(readout, layers, train_text, dev, settings, context.seed)
    log.info("lens: %d layers x %s scored on %d dev sentences", len(layers), "+".join(settings.lenses), len(dev))
    twin = twin_rows(context, readout, layers, train_text, dev)
    found = {**trained["rows"], **(twin["rows"] if twin else {})}
    metrics = {"dev": flat_metrics(found)}
    nested: dict[str, Any] = {}
    for key, row in found.items():
        lens, _, stream = key.rpartition("/")
        nested.setdefault(lens, {})[stream] = row
    printed = {"data": "ud_ewt", "model": readout.kind, "vocabulary": readout.vocab, "layers": layers,
               "directions": list(readout.directions), "train_sentences": len(train_text),
               "dev_sentences": len(dev), "predictions": trained["predictions"], "bootstrap": settings.bootstrap,
               "baseline": "random" if twin else "none", "dev": nested,
               "tuned_training_kl_bits": {"trained": trained["history"], **({"random": twin["history"]} if twin
                                                                             else {})}}
    block = {"name": "ud_ewt", "fraction": 1.0, "train_sentences": len(train_text), "dev_sentences": len(dev),
             "split_overlap": read_.overlap}
    main = f"{settings.lenses[-1]}/layer_{layers[0]}_forward_bits"
    return ProbeOutcome(printed, metrics, main, block)
