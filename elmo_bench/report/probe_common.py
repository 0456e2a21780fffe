"""What the probes' own report sections share (elmo_bench.report.sections): a record's encoder seen through its
trained weights (a random-weights twin shares its trained encoder's label), the weights' words, the training size,
and the probe classifiers' names. Names no probe."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from elmo_bench.records.run_record import RunRecord
from elmo_bench.report.collect import Run
from elmo_bench.report.encoder_names import BILM, identity, key_of

RANDOM_KEYS = ("random_init", "random_seed")
#: the probe classifiers' names in headers and labels, in their order
PROBE_NAMES = {"converged": "converged", "linear": "linear", "mlp1": "MLP-1", "mlp2": "MLP-2"}


def trained_hash(record: RunRecord) -> str | None:
    """The trained biLM's hash behind a record: a random twin's hash is ``<trained>-random-<mode>-<seed>``."""
    bilm, encoder = record.bilm or {}, record.encoder or {}
    found = bilm.get("trained_hash") or encoder.get("trained_hash") or bilm.get("hash") or encoder.get("hash")
    return None if found is None else str(found).split("-random-")[0]


def base_identity(record: RunRecord) -> dict[str, Any]:
    """The encoder identity without its random-weights part: a twin shares its trained encoder's label."""
    ident = {k: v for k, v in identity(record).items() if k not in RANDOM_KEYS}
    if ident.get("kind") == BILM:
        ident["hash"] = trained_hash(record)
    return ident


def weights_label(record: RunRecord) -> str:
    """"trained" or "random (<mode>, seed <s>)", from the record's encoder identity or its config."""
    encoder, config = record.encoder or {}, record.config or {}
    mode = encoder.get("random_init") or config.get("random_init")
    seed = encoder.get("random_seed", config.get("random_seed"))
    return "trained" if not mode else f"random ({mode}, seed {seed})"


@dataclass
class Keyed:
    """A record seen through its base identity, for EncoderNames (labels, order, layer counts)."""

    record: RunRecord
    encoder: dict[str, Any]

    @property
    def encoder_key(self) -> str:
        return key_of(self.encoder)


def train_sentences(run: Run) -> int | None:
    found = run.record.data.get("train_sentences")
    return int(found) if found else None
