"""Load and save biLM weights in the bilm-tf hdf5 layout (the public ELMo ``weights.hdf5`` files).

Dataset names and shapes (F = total char filters, P = projection_dim, H = lstm dim, d = direction 0/1):

    char_embed                                   (n_chars - 1, char_dim)   row 0 of our table (padding) not stored
    CNN/W_cnn_i, CNN/b_cnn_i                     (1, width, char_dim, count), (count,)
    CNN_high_k/{W,b}_{carry,transform}           (F, F), (F,)
    CNN_proj/W_proj, CNN_proj/b_proj             (F, P), (P,)
    RNN_d/RNN/MultiRNNCell/Cellk/LSTMCell/W_0    (input_dim + P, 4H)   gates i, j, f, o (TF order)
    RNN_d/RNN/MultiRNNCell/Cellk/LSTMCell/B      (4H,)
    RNN_d/RNN/MultiRNNCell/Cellk/LSTMCell/W_P_0  (H, P)

Every problem (missing dataset, wrong shape, a NaN or infinite value, a biLM dataset the options do not use, a
sha256 that differs from the ``weights.sha256`` beside the file) is reported in one line naming the dataset or
file, the expected and the found value. Saving writes to a temporary file and renames it, so a crash never leaves
half a weights file.
"""
from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Callable, Iterator

import h5py
import numpy as np
import torch

from elmo_bench.base.atomic import atomic_path
from elmo_bench.base.errors import DataError
from elmo_bench.bilm.checksums import verify_checksums
from elmo_bench.bilm.model import BiLM
from elmo_bench.bilm.options import BiLMOptions

# (dataset name, expected shape, torch tensor getter, numpy → torch converter, torch → numpy converter)
Binding = tuple[str, tuple[int, ...], Callable[[], torch.Tensor], Callable[[np.ndarray], np.ndarray],
                Callable[[np.ndarray], np.ndarray]]


def _same(a: np.ndarray) -> np.ndarray:
    return a


def _t(a: np.ndarray) -> np.ndarray:
    return a.T


def _bindings(model: BiLM) -> Iterator[Binding]:
    """Every stored dataset with how it maps onto a parameter of ``model``."""
    o = model.options
    enc = model.token_encoder
    emb = enc.char_embedding.weight
    yield ("char_embed", (emb.shape[0] - 1, o.char_dim), lambda: emb.data[1:], _same, _same)
    for i, ((width, count), conv) in enumerate(zip(o.filters, enc.convolutions)):
        yield (f"CNN/W_cnn_{i}", (1, width, o.char_dim, count), lambda c=conv: c.weight.data,
               lambda a: a[0].transpose(2, 1, 0), lambda a: a.transpose(2, 1, 0)[None])
        yield (f"CNN/b_cnn_{i}", (count,), lambda c=conv: c.bias.data, _same, _same)
    f = o.n_filters
    for k, hw in enumerate(enc.highways):
        for part, linear in (("carry", hw.carry), ("transform", hw.transform)):
            yield (f"CNN_high_{k}/W_{part}", (f, f), lambda l=linear: l.weight.data, _t, _t)
            yield (f"CNN_high_{k}/b_{part}", (f,), lambda l=linear: l.bias.data, _same, _same)
    yield ("CNN_proj/W_proj", (f, o.projection_dim), lambda: enc.projection.weight.data, _t, _t)
    yield ("CNN_proj/b_proj", (o.projection_dim,), lambda: enc.projection.bias.data, _same, _same)
    h, p = o.lstm_dim, o.projection_dim
    for k, layer in enumerate(model.lstm.layers):
        n_in = layer.input_weight.shape[1]
        for d in (0, 1):
            prefix = f"RNN_{d}/RNN/MultiRNNCell/Cell{k}/LSTMCell"
            yield (f"{prefix}/W_0", (n_in + p, 4 * h), lambda l=layer, d=d: _StackedWeight(l, d),
                   _same, _same)
            yield (f"{prefix}/B", (4 * h,), lambda l=layer, d=d: l.bias.data[d], _same, _same)
            yield (f"{prefix}/W_P_0", (h, p), lambda l=layer, d=d: l.projection.data[d], _same, _same)


class _StackedWeight:
    """W_0 is [input rows ; hidden rows] in one matrix; we keep the two parts apart for speed."""

    def __init__(self, layer, direction: int) -> None:
        self.layer, self.direction = layer, direction

    def copy_(self, value: torch.Tensor) -> None:
        n_in = self.layer.input_weight.shape[1]
        self.layer.input_weight.data[self.direction].copy_(value[:n_in])
        self.layer.hidden_weight.data[self.direction].copy_(value[n_in:])

    def numpy(self) -> np.ndarray:
        d = self.direction
        return torch.cat([self.layer.input_weight.data[d], self.layer.hidden_weight.data[d]]).cpu().numpy()


#: top-level names of the datasets that make the biLM itself (others, e.g. ``softmax/``, are training extras)
_BILM_GROUPS = re.compile(r"^(char_embed|CNN|CNN_proj|CNN_high_\d+|RNN_\d+)(/|$)")


def load_bilm(options_path: str | Path, weights_path: str | Path, stateful: bool = False) -> BiLM:
    """Build a :class:`BiLM` from ``options.json`` and a bilm-tf ``weights.hdf5``; frozen and in eval mode.

    When the weights' directory holds a ``weights.sha256`` (elmo_bench.bilm.checksums), the files it lists are
    checked first: a corrupt or replaced file is refused before it can give NaN or silently wrong embeddings.
    """
    verify_checksums(Path(weights_path).parent, [Path(options_path), Path(weights_path)])
    options = BiLMOptions.load(options_path)
    if options.n_characters not in (261, 262):
        raise DataError(f"{options_path}: key 'char_cnn.n_characters' expected 261 or 262, found {options.n_characters}")
    model = BiLM(options, stateful=stateful)
    load_weights(model, weights_path)
    model.eval()
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    return model


def load_weights(model: BiLM, weights_path: str | Path) -> None:
    weights_path = Path(weights_path)
    if not weights_path.exists():
        raise DataError(f"{weights_path}: weights file not found")
    try:
        handle = h5py.File(weights_path, "r")
    except OSError as exc:
        raise DataError(f"{weights_path}: not a readable hdf5 file ({exc})") from None
    with handle, torch.no_grad():
        bound = set()
        for name, shape, target, to_torch, _ in _bindings(model):
            if name not in handle or not isinstance(handle[name], h5py.Dataset):
                raise DataError(f"{weights_path}: missing dataset '{name}' (expected shape {shape})")
            found = handle[name].shape
            if tuple(found) != shape:
                raise DataError(f"{weights_path}: dataset '{name}' expected shape {shape}, found {tuple(found)}")
            try:
                value = handle[name][...]
            except OSError as exc:
                raise DataError(f"{weights_path}: dataset '{name}' cannot be read ({exc}); the file is corrupt") from None
            if not np.isfinite(value).all():
                bad = int((~np.isfinite(value)).sum())
                raise DataError(f"{weights_path}: dataset '{name}' holds {bad} NaN or infinite values; "
                                f"expected finite weights (the file is corrupt or training diverged)")
            target().copy_(torch.from_numpy(np.ascontiguousarray(to_torch(value))))
            bound.add(name)
        unused = sorted(name for name in _datasets(handle) if _BILM_GROUPS.match(name) and name not in bound)
        if unused:
            o = model.options
            raise DataError(f"{weights_path}: {len(unused)} biLM datasets are not used by the options "
                            f"(n_layers={o.n_layers}, n_highway={o.n_highway}, {len(o.filters)} filter widths), "
                            f"e.g. '{unused[0]}'; expected the options.json written with these weights")
    model.token_encoder.clear_cache()


def _datasets(handle: h5py.File) -> list[str]:
    names: list[str] = []
    handle.visititems(lambda name, item: names.append(name) if isinstance(item, h5py.Dataset) else None)
    return names


def save_bilm(model: BiLM, options_path: str | Path, weights_path: str | Path,
              extra_datasets: dict[str, np.ndarray] | None = None) -> None:
    """Write ``options.json`` and ``weights.hdf5`` in the bilm-tf layout (each file atomically)."""
    model.options.save(options_path)
    with atomic_path(weights_path, suffix=".hdf5") as tmp, h5py.File(tmp, "w") as handle:
        for name, _, source, _, to_tf in _bindings(model):
            value = source()
            array = value.numpy() if isinstance(value, _StackedWeight) else value.detach().cpu().numpy()
            handle.create_dataset(name, data=np.ascontiguousarray(to_tf(array)).astype(np.float32))
        for name, array in (extra_datasets or {}).items():
            handle.create_dataset(name, data=array)


def bilm_identity(options_path: str | Path, weights_path: str | Path) -> str:
    """A short content hash of the two files: the key under which activations are cached."""
    digest = hashlib.sha256()
    for path in (options_path, weights_path):
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:16]
