"""``elmo-bench plan``'s memory per device for a model spread by ``encoder.device_map`` (issue 58): where
accelerate would put each block, from the config alone (the model built on torch's meta device: shapes, no memory,
no weight read), and whether each device holds its weights and the activations of one forward pass.

Placement is transformers' own for ``from_pretrained(device_map=...)``: ``get_balanced_memory`` (``auto``,
``balanced``, ``balanced_low_0``) or the budgets as given (``sequential``), then ``infer_auto_device_map`` with the
model's no-split blocks; a JSON map is taken as given. ``encoder.max_memory`` is the device set priced (each
device's size; without it, this machine's devices). Weights: each module's parameters and buffers in
``encoder.dtype`` on its device; what the given devices cannot hold goes to ``cpu``/``disk`` (offloaded: the set
does not fit).

Activations of one forward pass of P padded tokens (P = ``encoder.max_tokens``, else ``batch_size`` windows of the
sample's longest, at most the window), in the weights' dtype (``amp``'s when set), per device:
- a block's working set, on every device that runs blocks: 2 P d (its input and residual) + P (2 d + 2 d_kv) (q,
  k, v and attention output) + 3 P d_ff (the gated MLP's two projections and their product) values, plus the
  padding mask of batch x T x T (sdpa attention keeps no per-head score matrix);
- the kept hidden states, each P d values on the device that made it: layer k (k >= 1) where block k - 1 ran,
  layer 0 where the embedding is, the last layer (after the final norm) on the main device;
- the pooled vectors of the pass (P words at most, every kept layer, float32) where the deepest kept layer is.
CUDA's own context (about 0.5 GB a device) and the allocator's fragmentation are not counted: leave headroom.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from elmo_bench.encoders.transformers.meta import meta_model
from elmo_bench.encoders.transformers.placement import device_map, max_memory

#: bytes a value in each ``encoder.dtype`` / ``amp``
DTYPE_BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}
AMP_BYTES = {"bf16": 2, "fp16": 2}


_BUILT: dict[tuple[str, str], Any] = {}


def _meta_model(architecture: Any, dtype: str) -> Any:
    """The model ``config`` describes, on the meta device, in ``dtype`` (its encoder of an encoder-decoder); the
    last one kept (plan prices one model over several device sets; a meta model holds no memory)."""
    key = (architecture.to_json_string(), dtype)
    if key not in _BUILT:
        _BUILT.clear()
        _BUILT[key] = _build_meta(architecture, dtype)
    return _BUILT[key]


def _build_meta(architecture: Any, dtype: str) -> Any:
    from elmo_bench.encoders.transformers.loading import TORCH_DTYPES, dtype_keyword  # lazy: torch

    return meta_model(architecture, **{dtype_keyword(): TORCH_DTYPES[dtype]})


def _placed(model: Any, mapped: Any, budget: Mapping[Any, int] | None) -> dict[str, Any]:
    """Module name → device, as ``from_pretrained(device_map=mapped, max_memory=budget)`` would place them."""
    if isinstance(mapped, dict):
        return dict(mapped)
    from transformers.integrations.accelerate import (  # lazy: transformers
        get_balanced_memory,
        get_max_memory,
        infer_auto_device_map,
    )

    blocks = model._no_split_modules
    given = dict(budget) if budget else None
    limits = (get_max_memory(given) if mapped == "sequential" else
              get_balanced_memory(model, max_memory=given, no_split_module_classes=blocks,
                                  low_zero=mapped == "balanced_low_0"))
    return infer_auto_device_map(model, max_memory=limits, no_split_module_classes=blocks)


def _device_at(placed: Mapping[str, Any], name: str) -> Any:
    """The device of module ``name`` under a map of module prefixes (the longest prefix that holds it)."""
    found = [k for k in placed if k == "" or name == k or name.startswith(k + ".")]
    return placed[max(found, key=len)] if found else "cpu"


def _weights(model: Any, placed: Mapping[str, Any]) -> dict[Any, int]:
    """Bytes of parameters and buffers on each device of the map."""
    out: dict[Any, int] = {}
    for name, tensor in [*model.named_parameters(), *model.named_buffers()]:
        device = _device_at(placed, name.rsplit(".", 1)[0] if "." in name else "")
        out[device] = out.get(device, 0) + tensor.numel() * tensor.element_size()
    return out


def _state_devices(model: Any, placed: Mapping[str, Any], main: Any) -> tuple[list[Any], list[Any]]:
    """Where each hidden state is made (0: where the embedding runs, k: where block k - 1 ran, the last: the main
    device) and where each block runs (a block offloaded to cpu or disk runs on the main device)."""
    from elmo_bench.encoders.transformers.hf_forward import find_blocks  # lazy: torch

    def runs(device: Any) -> Any:
        return main if device in ("cpu", "disk") else device

    blocks = find_blocks(model)
    if blocks is None:  # no list of blocks found: every state counted on the main device
        return [main] * (int(model.config.num_hidden_layers) + 1), [main]
    prefix = next(name for name, module in model.named_modules() if module is blocks)
    embedding = next(name for name, _ in model.named_parameters() if not name.startswith(prefix + "."))
    ran = [runs(_device_at(placed, f"{prefix}.{k}")) for k in range(len(blocks))]
    return [runs(_device_at(placed, embedding.rsplit(".", 1)[0]))] + ran[:-1] + [main], ran


def _activations(architecture: Any, value: int, tokens: int, longest: int, kept: Sequence[int],
                 states: Sequence[Any], running: set[Any], deepest: Any) -> dict[Any, int]:
    """Bytes of one pass's activations on each device (the module docstring's terms)."""
    d = int(architecture.hidden_size)
    d_ff = int(getattr(architecture, "intermediate_size", None) or 4 * d)
    heads = int(getattr(architecture, "num_attention_heads", 1))
    d_kv = d // heads * int(getattr(architecture, "num_key_value_heads", None) or heads)
    windows = max(1, tokens // max(1, longest))
    block = value * (tokens * (4 * d + 2 * d_kv + 3 * d_ff) + windows * longest * longest)
    out = {device: block for device in running}
    for k in kept:
        out[states[k]] = out.get(states[k], 0) + value * tokens * d
    out[deepest] = out.get(deepest, 0) + 4 * tokens * len(kept) * d
    return out


def _spread(model: Any, architecture: Any, mapped: Any, budget: Mapping[Any, int] | None,
            pass_: Mapping[str, Any]) -> tuple[dict[Any, int], dict[Any, int]]:
    """Weights and one pass's activations on each device, placed as a run would place them."""
    placed = _placed(model, mapped, budget)
    weights = _weights(model, placed)
    devices = [*(budget or {}), *weights]
    main = next((device for device in devices if device not in ("cpu", "disk")), "cpu")
    states, ran = _state_devices(model, placed, main)
    kept = pass_["kept"]
    active = _activations(architecture, pass_["value"], pass_["tokens"], pass_["longest"], kept, states,
                          set(ran) | {states[0]}, states[max(kept)])
    return weights, active


def _quiet() -> Any:
    """accelerate's warning that a device of the set priced is not on this machine, silenced (plan prices other
    machines)."""
    import logging

    class Quiet:
        def __enter__(self) -> None:
            self.logger = logging.getLogger("accelerate")
            self.level = self.logger.level
            self.logger.setLevel(logging.ERROR)

        def __exit__(self, *_: Any) -> None:
            self.logger.setLevel(self.level)

    return Quiet()


def device_rows(architecture: Any, spec: Mapping[str, Any], tokens: int, longest: int,
                kept: Sequence[int]) -> dict[str, Any] | None:
    """Plan's memory per device for ``spec``'s ``device_map`` (None without one). With ``max_memory`` (the
    devices' sizes) and a strategy, the blocks are placed a second time with each device's size less its
    activations (the ``max_memory`` a run should give, ``run_max_memory``): each device's weights, activations
    and size, whether it fits, what is offloaded beyond the set, and whether the whole set fits."""
    mapped = device_map(spec)
    if mapped is None:
        return None
    dtype = str(spec.get("dtype") or "float32")
    sizes = max_memory(spec)
    pass_ = {"value": AMP_BYTES.get(str(spec.get("amp")), DTYPE_BYTES[dtype]), "tokens": tokens,
             "longest": longest, "kept": list(kept)}
    model = _meta_model(architecture, dtype)
    with _quiet():
        weights, active = _spread(model, architecture, mapped, sizes, pass_)
        room = None
        if sizes and isinstance(mapped, str):
            room = {d: max(0, size - active.get(d, 0)) if d != "cpu" else size for d, size in sizes.items()}
            weights, active = _spread(model, architecture, mapped, room, pass_)
    rows = []
    for device in dict.fromkeys([*(sizes or {}), *weights]):
        size = None if sizes is None or device not in sizes else sizes[device]
        act = active.get(device, 0) if device != "disk" else 0
        rows.append({"device": str(device), "weight_bytes": weights.get(device, 0), "activation_bytes": act,
                     "size_bytes": size, "fits": None if size is None else weights.get(device, 0) + act <= size})
    offloaded = sum(weights.get(d, 0) for d in ("cpu", "disk") if sizes is not None and d not in sizes)
    fits = None if sizes is None else offloaded == 0 and all(r["fits"] for r in rows if r["size_bytes"])
    return {"device_map": mapped if isinstance(mapped, str) else "map", "tokens_per_pass": tokens,
            "devices": rows, "offloaded_bytes": offloaded, "fits": fits,
            "run_max_memory": None if room is None else {str(d): int(v) for d, v in room.items()}}
