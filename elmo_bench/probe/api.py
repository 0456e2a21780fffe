"""What the engine hands a probe and what a probe hands back (the Probe plug-in point's interface).

A probe's run function (its declaration's ``target``) takes a :class:`ProbeContext`: its typed settings, the frozen
encoder already built and on its device, the activation cache, the device, the seed and where the data lives; it
reads its data (checked as a run's: elmo_bench.probe.lib.ud_data), fits and scores over the cached layers and returns
a :class:`ProbeOutcome`: the JSON object printed (each probe's documented nesting) and the flat per-split metrics
results.json holds (``metrics.<split>.<name>``: what the report reads). The engine (elmo_bench.engine.probe_run)
does the rest: identity, lock, resume, records.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from elmo_bench.base.errors import ConfigError
from elmo_bench.encoders.random_init import check_random_init, randomise
from elmo_bench.encoders.segments import MAX_SEGMENT


@dataclass
class ProbeContext:
    """Everything a probe needs from the run (see the module docstring)."""

    settings: Any                    # the probe's frozen settings dataclass
    encoder: Any                     # the frozen Encoder (elmo_bench.encoders.protocol), on ``device``
    encoder_record: dict[str, Any]   # hash (cache id), layers, dim, encoder (its identity); the biLM's files
    cache: Any                       # elmo_bench.encoders.cache.ActivationCache, or None (cache=false: live layers)
    device: Any                      # torch.device of the encoder and the gradient-trained probes
    seed: int
    progress: bool
    data_root: Path                  # paths.data_root: where a probe's default data lives
    run_dir: Path                    # the run's directory (a probe may write files there: WSD's answer keys)
    max_segment: int = MAX_SEGMENT
    cache_dir: str | None = None     # the activation cache's directory (None: cache=false)
    vetted: bool = False             # the encoder checked itself on the first sentence asked for

    def layers(self, sentences: Sequence[Sequence[str]], name: str) -> Any:
        """A source of the encoder's layers of ``sentences`` (``get(i)`` → (layers, n_i, dim)): the activation
        cache (each sentence computed once across probes and runs), or live when the run says ``cache=false``.
        The first call vets the encoder on its first sentence (an hdf5 file that lacks it, a model that cannot
        take it: one line before any layer is computed)."""
        from elmo_bench.encoders.cache_read import LiveLayers, check_first_sentence  # lazy: torch

        sequences = [list(s) for s in sentences]
        if not self.vetted and sequences:
            split = name.rsplit("/", 1)[-1]
            what = "training sentence" if split in ("train", "semcor") else f"sentence of {split}"
            check_first_sentence(self.encoder, sequences[:1], f"the first {what} ({name})")
            self.vetted = True
        if self.cache is not None:
            return self.cache.layers(sequences, name=name)
        return LiveLayers(self.encoder, sequences, self.max_segment)

    def random_twin(self, seed: int = 0) -> "ProbeContext":
        """The same probe context on the encoder's ``random_init=all`` twin (weights drawn under ``seed``), with its
        own activation-cache entries; one line for an encoder kind without one (hdf5, manylangs, python)."""
        from elmo_bench.encoders.cache import ActivationCache  # lazy: torch
        from elmo_bench.encoders.cli_options import encoder_info  # lazy: torch
        check_random_init(str(self.encoder_record["encoder"].get("kind")), "all", "probe.baseline=random")
        twin = randomise(self.encoder, "all", seed)
        info = encoder_info(twin)
        record = {"hash": info["hash"], "layers": info["layers"], "dim": info["dim"], "encoder": info["encoder"]}
        cache = None if self.cache_dir is None else ActivationCache(self.cache_dir, twin, max_segment=self.max_segment,
                                                                    progress=self.progress)
        return ProbeContext(self.settings, twin, record, cache, self.device, self.seed, self.progress, self.data_root,
                            self.run_dir, self.max_segment, self.cache_dir)

    def model_indices(self) -> list[int]:
        """The model's index of each layer the encoder gives (``encoder.layers=[0,8,16]``: those; else 0..L)."""
        found = (self.encoder_record.get("encoder") or {}).get("encoder_layer_indices")
        return [int(i) for i in found] if found else list(range(int(self.encoder_record["layers"])))

    def probed_layers(self, chosen: list[int] | None) -> list[tuple[int, int]]:
        """(position in the encoder's output, index in the model) of each layer ``probe.layers`` names by its index
        in the model (null: every layer the encoder gives); one ConfigError line for another index."""
        indices = self.model_indices()
        if chosen is None:
            return list(enumerate(indices))
        if not chosen or len(set(chosen)) != len(chosen) or any(k not in indices for k in chosen):
            raise ConfigError(f"config: probe.layers expected distinct layer indices of this encoder ({indices}), "
                              f"found {list(chosen)}")
        return [(indices.index(k), k) for k in chosen]

    def data_dir(self, configured: str | None, default: str) -> Path:
        """``probe.data_dir`` when set, else ``default`` below ``paths.data_root``."""
        return Path(configured) if configured else self.data_root / default


@dataclass
class ProbeOutcome:
    """A probe's result: ``printed`` (the one JSON object the run prints), ``metrics`` (results.json's flat
    ``metrics.<split>``), ``main_metric``, ``data`` (results.json's ``data`` block: name, sizes), and what the
    report reads beside them (``probes``, ``views``, ``extra`` keys of the record)."""

    printed: dict[str, Any]
    metrics: dict[str, dict[str, Any]]
    main_metric: str
    data: dict[str, Any]
    seed: int | None = None          # the record's seed when the probe's own (None: the run's seed)
    probes: Any = None
    views: Any = None
    extra: dict[str, Any] = field(default_factory=dict)
