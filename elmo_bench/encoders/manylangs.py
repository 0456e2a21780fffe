"""``encoder=manylangs encoder.path=DIR``: an ELMoForManyLangs model (HIT-SCIR, the pre-trained ELMo for 40+
languages) read from its own files, without its package, giving the layers its package's ``sents2elmo(...,
output_layer=-2)`` gives: the token layer ``[x ; x]`` then one ``[forward ; backward]`` layer per LSTM layer,
(L+1, words, 2 * projection_dim), the ``<bos>`` / ``<eos>`` positions removed.

The directory holds ``config.json`` (``config_path`` names the model config: ``token_embedder`` {name ``cnn``,
``filters`` [[width, count], ...], ``n_highway``, ``activation``, ``char_dim``, ``word_dim``,
``max_characters_per_token``} and ``encoder`` {name ``elmo``, ``projection_dim``, ``dim``, ``n_layers``,
``cell_clip``, ``proj_clip``}), ``char.dic`` / ``word.dic`` (``symbol<TAB>id`` lines; a line with only an id is the
ideographic space U+3000, which ``strip`` removed) and two PyTorch state dicts, ``token_embedder.pkl`` and
``encoder.pkl``. The model config is looked for where ``config_path`` says, relative to DIR, then by its file name
in DIR; the package also falls back to copies of its sample configs, which are not shipped here: copy the file into
DIR then.

The computation follows the package's modules: characters of each token (cut to ``max_characters_per_token - 2``)
framed by the begin/end-of-word symbols **as the package frames them** (its batching reads the id of ``<eow>``
for the first position and of ``<bow>`` for the last; the released models were trained that way), a char CNN (max
over positions, then the activation), highway layers ``g * x + (1 - g) * relu(A x)``, a projection of
[word vector ; char features]; then per direction a stack of LSTM cells with a projected, clipped state (gates in
the order input, forget, cell, output; bias on the state side only) and residual connections from the second layer
on. One difference by design: the package's encoder is stateful (a batch starts from the previous batch's final
state); this encoder starts every sentence from a zero state, so a sentence's layers never depend on its
neighbours (the first batch of a fresh package model is what it matches).
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Mapping, Sequence

import torch
from torch import nn

from elmo_bench.base.errors import ConfigError, DataError
from elmo_bench.encoders.build import build_encoder
from elmo_bench.encoders.costs import EncoderCost, lstm_bilm_flops
from elmo_bench.encoders.kinds import EncoderKind, need_path

OOV, PAD, BOS, EOS, BOW, EOW = "<oov>", "<pad>", "<bos>", "<eos>", "<bow>", "<eow>"


def read_dictionary(path: Path) -> dict[str, int]:
    """``symbol<TAB>id`` lines (a lone id stands for U+3000) → {symbol: id}."""
    out: dict[str, int] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        parts = line.strip().split("\t")
        if parts == [""]:
            continue
        if len(parts) == 1:
            parts.insert(0, "\u3000")
        if len(parts) != 2 or not parts[1].lstrip("-").isdigit():
            raise DataError(f"{path}: line {number}: expected 'symbol<TAB>id', found {line!r}")
        out[parts[0]] = int(parts[1])
    return out


class _CharCnnEmbedder(nn.Module):
    """Token vectors: projection of [word embedding ; highway(char CNN)], either part optional."""

    def __init__(self, config: dict[str, Any], n_words: int, n_chars: int, projection: int) -> None:
        super().__init__()
        te = config["token_embedder"]
        self.word = nn.Embedding(n_words, te["word_dim"]) if te["word_dim"] > 0 else None
        self.char = nn.Embedding(n_chars, te["char_dim"]) if te["char_dim"] > 0 else None
        width = te["word_dim"] if self.word is not None else 0
        if self.char is not None:
            self.convolutions = nn.ModuleList(nn.Conv1d(te["char_dim"], count, w) for w, count in te["filters"])
            self.n_filters = sum(count for _, count in te["filters"])
            self.highways = nn.ModuleList(nn.Linear(self.n_filters, 2 * self.n_filters)
                                          for _ in range(te["n_highway"]))
            width += self.n_filters
        if te["activation"] not in ("relu", "tanh"):
            raise DataError(f"manylangs: token_embedder.activation expected relu or tanh, found {te['activation']!r}")
        self.activation = torch.relu if te["activation"] == "relu" else torch.tanh
        self.projection = nn.Linear(width, projection)

    def forward(self, words: torch.Tensor | None, chars: torch.Tensor | None) -> torch.Tensor:
        """words (batch, time), chars (batch, time, max_chars) → (batch, time, projection)."""
        parts = []
        if self.word is not None:
            parts.append(self.word(words))
        if self.char is not None:
            batch, time, width = chars.shape
            x = self.char(chars.reshape(batch * time, width)).transpose(1, 2)  # (tokens, char_dim, chars)
            x = torch.cat([self.activation(conv(x).max(dim=-1).values) for conv in self.convolutions], dim=-1)
            for highway in self.highways:
                nonlinear, gate = highway(x).chunk(2, dim=-1)
                gate = torch.sigmoid(gate)
                x = gate * x + (1 - gate) * torch.relu(nonlinear)  # the package's highway is always relu
            parts.append(x.reshape(batch, time, self.n_filters))
        return self.projection(torch.cat(parts, dim=-1))


class _ProjectedLstmCell(nn.Module):
    def __init__(self, inputs: int, hidden: int, cell: int) -> None:
        super().__init__()
        self.input_linearity = nn.Linear(inputs, 4 * cell, bias=False)
        self.state_linearity = nn.Linear(hidden, 4 * cell, bias=True)
        self.state_projection = nn.Linear(cell, hidden, bias=False)


def _run_direction(cell: _ProjectedLstmCell, x: torch.Tensor, lengths: torch.Tensor, forward: bool,
                   cell_clip: float, proj_clip: float) -> torch.Tensor:
    """(batch, time, in) → (batch, time, hidden), each row from a zero state, zero past its length."""
    batch, time, _ = x.shape
    size = cell.state_projection.in_features
    h = x.new_zeros(batch, cell.state_projection.out_features)
    c = x.new_zeros(batch, size)
    out = x.new_zeros(batch, time, h.shape[1])
    projected = cell.input_linearity(x)  # (batch, time, 4 * cell)
    for t in (range(time) if forward else range(time - 1, -1, -1)):
        valid = (t < lengths)[:, None]
        gates = projected[:, t] + cell.state_linearity(h)
        i, f, g, o = gates.split(size, dim=-1)
        c_new = torch.sigmoid(i) * torch.tanh(g) + torch.sigmoid(f) * c
        if cell_clip:
            c_new = c_new.clamp(-cell_clip, cell_clip)
        h_new = cell.state_projection(torch.sigmoid(o) * torch.tanh(c_new))
        if proj_clip:
            h_new = h_new.clamp(-proj_clip, proj_clip)
        h, c = torch.where(valid, h_new, h), torch.where(valid, c_new, c)
        out[:, t] = h_new * valid
    return out


class ManyLangsEncoder:
    """An ELMoForManyLangs model directory as an Encoder (see the module docstring)."""

    whole_sequences = False  # an LSTM like the biLM: the cache may cut very long sequences into segments

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        config = self._config()
        te, enc = config["token_embedder"], config["encoder"]
        if str(te.get("name", "")).lower() != "cnn" or str(enc.get("name", "")).lower() != "elmo":
            raise DataError(f"manylangs: {self.path}: token_embedder {te.get('name')!r} with encoder "
                            f"{enc.get('name')!r}; only the released kind (cnn token embedder, elmo encoder) is read")
        self.config = config
        self.chars = read_dictionary(self.path / "char.dic") if te["char_dim"] > 0 else None
        self.words = read_dictionary(self.path / "word.dic") if te["word_dim"] > 0 else None
        for name, table, needed in (("char.dic", self.chars, (OOV, PAD, BOS, EOS, BOW, EOW)),
                                    ("word.dic", self.words, (OOV, PAD))):
            missing = [s for s in needed if table is not None and s not in table]
            if missing:
                raise DataError(f"manylangs: {self.path / name}: lacks the symbols {missing}")
        projection, self.cell_clip, self.proj_clip = enc["projection_dim"], enc["cell_clip"], enc["proj_clip"]
        self.max_chars = int(te["max_characters_per_token"])
        self.embedder = _CharCnnEmbedder(config, max(self.words.values()) + 1 if self.words else 0,
                                         max(self.chars.values()) + 1 if self.chars else 0, projection)
        self.cells = nn.ModuleDict()
        for k in range(enc["n_layers"]):
            for direction in ("forward", "backward"):
                self.cells[f"{direction}_layer_{k}"] = _ProjectedLstmCell(projection, projection, enc["dim"])
        self._load()
        self.num_layers, self.dim = enc["n_layers"] + 1, 2 * projection

    def _config(self) -> dict[str, Any]:
        outer_path = self.path / "config.json"
        if not outer_path.is_file():
            raise DataError(f"manylangs: {outer_path}: not found (expected an ELMoForManyLangs model directory)")
        outer = json.loads(outer_path.read_text(encoding="utf-8"))
        named = str(outer.get("config_path", ""))
        for candidate in (self.path / named, self.path / Path(named).name):
            if named and candidate.is_file():
                return json.loads(candidate.read_text(encoding="utf-8"))
        raise DataError(f"manylangs: {outer_path}: config_path {named!r} is neither in {self.path} nor found by "
                        f"its file name there (copy the model config, e.g. from the ELMoForManyLangs package's "
                        f"configs/, into the directory)")

    def _load(self) -> None:
        embedder = torch.load(self.path / "token_embedder.pkl", map_location="cpu", weights_only=True)
        renamed = {}
        for key, value in embedder.items():
            key = key.replace("word_emb_layer.embedding.", "word.").replace("char_emb_layer.embedding.", "char.")
            renamed[key.replace("highways._layers.", "highways.")] = value
        self._load_into(self.embedder, renamed, "token_embedder.pkl")
        encoder = torch.load(self.path / "encoder.pkl", map_location="cpu", weights_only=True)
        self._load_into(self.cells, dict(encoder), "encoder.pkl")
        self.cells.eval(), self.embedder.eval()
        digest = hashlib.sha256()
        for name in ("config.json", "char.dic", "word.dic", "token_embedder.pkl", "encoder.pkl"):
            if (self.path / name).is_file():
                digest.update((self.path / name).read_bytes())
        digest.update(json.dumps(self.config, sort_keys=True).encode())
        self.hash = digest.hexdigest()[:16]

    def _load_into(self, module: nn.Module, state: dict[str, torch.Tensor], name: str) -> None:
        result = module.load_state_dict(state, strict=False)
        if result.missing_keys or result.unexpected_keys:
            raise DataError(f"manylangs: {self.path / name}: missing {result.missing_keys[:4]}, unexpected "
                            f"{result.unexpected_keys[:4]} (expected the state dict of the package's model)")

    def identity(self) -> dict[str, Any]:
        return {"kind": "manylangs", "model": self.path.name, "hash": self.hash}

    def to(self, device: torch.device | str) -> "ManyLangsEncoder":
        self.embedder.to(device)
        self.cells.to(device)
        return self

    @property
    def device(self) -> torch.device:
        return self.embedder.projection.weight.device

    def _ids(self, sentences: Sequence[Sequence[str]]) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        """Word ids (batch, time + 2) and char ids (batch, time + 2, max_chars) with <bos> / <eos> around."""
        framed = [[BOS, *(t[: self.max_chars - 2] for t in s), EOS] for s in sentences]
        time = max(len(s) for s in framed)
        words = chars = None
        if self.words is not None:
            words = torch.full((len(framed), time), self.words[PAD], dtype=torch.long)
            for i, s in enumerate(framed):
                words[i, : len(s)] = torch.tensor([self.words.get(t, self.words[OOV]) for t in s])
        if self.chars is not None:
            table = self.chars
            first, last = table[EOW], table[BOW]  # the package's order (see the module docstring)
            chars = torch.full((len(framed), time, self.max_chars), table[PAD], dtype=torch.long)
            for i, s in enumerate(framed):
                for j, token in enumerate(s):
                    inner = [table[token]] if token in (BOS, EOS) else [table.get(ch, table[OOV]) for ch in token]
                    ids = [first, *inner, last]
                    chars[i, j, : len(ids)] = torch.tensor(ids)
        return words, chars

    @torch.no_grad()
    def layers(self, sentences: Sequence[Sequence[str]]) -> tuple[torch.Tensor, torch.Tensor]:
        """(batch, L+1, words, 2 * projection_dim) float32 and the (batch, words) mask."""
        device = self.device
        words, chars = self._ids(sentences)
        lengths = torch.tensor([len(s) + 2 for s in sentences], device=device)
        tokens = self.embedder(None if words is None else words.to(device), None if chars is None else chars.to(device))
        time = tokens.shape[1]
        mask = torch.arange(time, device=device)[None] < lengths[:, None]
        out = [torch.cat([tokens, tokens], dim=-1) * mask[..., None]]
        forward, backward = tokens, tokens
        for k in range(self.num_layers - 1):
            f = _run_direction(self.cells[f"forward_layer_{k}"], forward, lengths, True, self.cell_clip,
                               self.proj_clip)
            b = _run_direction(self.cells[f"backward_layer_{k}"], backward, lengths, False, self.cell_clip,
                               self.proj_clip)
            if k > 0:  # residual connections from the second layer on
                f, b = f + forward, b + backward
            forward, backward = f, b
            out.append(torch.cat([f, b], dim=-1) * mask[..., None])
        layers = torch.stack(out, dim=1)  # (batch, L+1, time + 2, dim)
        longest = max((len(s) for s in sentences), default=0)
        inner = torch.arange(longest, device=device)[None] < (lengths - 2)[:, None]
        return layers[:, :, 1: longest + 1] * inner[:, None, :, None], inner


#: ``encoder=manylangs``: ``encoder.path`` = an ELMoForManyLangs model directory (elmo_bench.encoders.kinds)
def manylangs_cost(encoder: Any) -> EncoderCost:
    """An ELMoForManyLangs model: the biLM formula over its config (the word embedding is a lookup, no FLOPs)."""
    te, enc = encoder.config["token_embedder"], encoder.config["encoder"]
    char_dim = int(te["char_dim"])
    filters = [tuple(f) for f in te["filters"]] if char_dim > 0 else []
    width = (int(te["word_dim"]) if int(te["word_dim"]) > 0 else 0) + sum(n for _, n in filters)
    flops = lstm_bilm_flops(int(te["max_characters_per_token"]), char_dim, filters,
                            int(te["n_highway"]) if filters else 0, width, int(enc["projection_dim"]),
                            int(enc["dim"]), int(enc["n_layers"]))
    return EncoderCost("manylangs", flops, encoder.num_layers, encoder.dim, f"ELMoForManyLangs {encoder.path}",
                       segment_markers=True)


def _check_path(spec: Mapping[str, Any]) -> None:
    path = spec["path"]
    if not Path(str(path)).expanduser().is_dir():
        raise ConfigError(f"encoder=manylangs: encoder.path {path}: no such directory (expected an "
                          f"ELMoForManyLangs model directory)")


def _price(spec: Mapping[str, Any], options: Any, options_source: str, sentences: Any, amp: Any = "off") -> Any:
    return manylangs_cost(build_encoder(spec, amp=amp))


#: ``encoder=manylangs``: an ELMoForManyLangs model directory (config.json, char.dic / word.dic, token_embedder.pkl,
#: encoder.pkl):   python run.py task=ner embedder=glove_elmo encoder=manylangs encoder.path=DIR
ENCODER_KIND = EncoderKind("manylangs", lambda spec, amp="off": ManyLangsEncoder(need_path(spec)),
                           conf={"path": "???", "cache_dtype": "fp16"},
                           label=lambda ident: f"ELMoForManyLangs {ident.get('model')}",
                           path="a model directory", check_path=_check_path, price=_price)
