"""Tiny Hugging Face models for encoder tests, built offline: BERT (WordPiece), RoBERTa (byte-level BPE) and GPT-2
(byte-level BPE), hidden size 32, two blocks, random weights, tokenizers trained with the ``tokenizers`` library on
a short text written here plus the bundled NER sample. Each is saved with ``save_pretrained`` and then loaded by
the encoder through ``from_pretrained(DIR)``, the path a downloaded model takes. Built once per test session."""
from __future__ import annotations

import functools
import tempfile
from pathlib import Path

from tests.conftest import REPO

TEXT = """The quick brown fox jumps over the lazy dog .
A researcher compares contextual representations across frozen encoders .
Peters and colleagues trained a bidirectional language model on a billion words .
Mixing the layers of a deep model helps question answering and entailment .
Paris is the capital of France and Berlin is the capital of Germany .
""".splitlines()
KINDS = ("bert", "roberta", "gpt2")
MAX_LENGTH = 64


def _sample_lines() -> list[str]:
    lines = list(TEXT)
    sample = REPO / "tasks" / "ner" / "samples" / "sample.train"
    sentence: list[str] = []
    for line in sample.read_text().splitlines():
        parts = line.split()
        if not parts or parts[0] == "-DOCSTART-":
            if sentence:
                lines.append(" ".join(sentence))
            sentence = []
        else:
            sentence.append(parts[0])
    return lines


def _bert(directory: Path, lines: list[str], max_length: int = MAX_LENGTH, vocab_size: int = 150) -> None:
    """A BERT of two blocks of width 32 with a WordPiece tokenizer trained on ``lines`` (``vocab_size`` pieces), its
    window ``max_length``."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=False)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok.train_from_iterator(lines, trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=specials))
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]",
                                                       special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    tok.decoder = decoders.WordPiece()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
                                   sep_token="[SEP]", mask_token="[MASK]", model_max_length=max_length)
    fast.save_pretrained(directory)
    config = BertConfig(vocab_size=tok.get_vocab_size(), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=max_length)
    BertModel(config).save_pretrained(directory)


def _byte_level(lines: list[str]):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    tok.train_from_iterator(lines, trainers.BpeTrainer(vocab_size=400, special_tokens=specials,
                                                       initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    return tok


def _roberta(directory: Path, lines: list[str]) -> None:
    from tokenizers import processors
    from transformers import RobertaConfig, RobertaModel, RobertaTokenizerFast

    tok = _byte_level(lines)
    tok.post_processor = processors.RobertaProcessing(("</s>", tok.token_to_id("</s>")),
                                                      ("<s>", tok.token_to_id("<s>")), add_prefix_space=False)
    work = directory / "_raw"
    work.mkdir(parents=True)
    tok.model.save(str(work))
    fast = RobertaTokenizerFast(vocab=str(work / "vocab.json"), merges=str(work / "merges.txt"),
                                model_max_length=MAX_LENGTH)
    fast.save_pretrained(directory)
    config = RobertaConfig(vocab_size=tok.get_vocab_size(), hidden_size=32, num_hidden_layers=2,
                           num_attention_heads=2, intermediate_size=64, max_position_embeddings=MAX_LENGTH + 2,
                           pad_token_id=1, bos_token_id=0, eos_token_id=2)
    RobertaModel(config).save_pretrained(directory)


def _gpt2(directory: Path, lines: list[str]) -> None:
    from transformers import GPT2Config, GPT2Model, GPT2TokenizerFast

    tok = _byte_level(lines)
    work = directory / "_raw"
    work.mkdir(parents=True)
    tok.model.save(str(work))
    fast = GPT2TokenizerFast(vocab=str(work / "vocab.json"), merges=str(work / "merges.txt"),
                             unk_token="<unk>", bos_token="</s>", eos_token="</s>", model_max_length=MAX_LENGTH)
    fast.save_pretrained(directory)
    config = GPT2Config(vocab_size=tok.get_vocab_size(), n_embd=32, n_layer=2, n_head=2, n_positions=MAX_LENGTH)
    GPT2Model(config).save_pretrained(directory)


def _decoder(directory: Path, lines: list[str], kind: str, blocks: int = 3, width: int = 32) -> None:
    """A Llama- or Qwen2-style decoder (pre-norm blocks, rotary positions, a final RMSNorm), three blocks (or
    ``blocks`` of width ``width``), with a byte-level BPE tokenizer."""
    from transformers import GPT2TokenizerFast, LlamaConfig, LlamaModel, Qwen2Config, Qwen2Model

    tok = _byte_level(lines)
    work = directory / "_raw"
    work.mkdir(parents=True)
    tok.model.save(str(work))
    fast = GPT2TokenizerFast(vocab=str(work / "vocab.json"), merges=str(work / "merges.txt"), unk_token="<unk>",
                             bos_token="<s>", eos_token="</s>", pad_token="<pad>", model_max_length=MAX_LENGTH)
    fast.save_pretrained(directory)
    shape = dict(vocab_size=tok.get_vocab_size(), hidden_size=width, num_hidden_layers=blocks, num_attention_heads=2,
                 num_key_value_heads=1, intermediate_size=2 * width, max_position_embeddings=MAX_LENGTH)
    config, model = (LlamaConfig, LlamaModel) if kind == "llama" else (Qwen2Config, Qwen2Model)
    model(config(**shape)).save_pretrained(directory)


@functools.lru_cache(maxsize=None)
def decoder_models() -> dict[str, Path]:
    """{kind: model directory} for tiny llama and qwen2 decoders (built on first call, reused for the session)."""
    import torch

    root = Path(tempfile.mkdtemp(prefix="elmo_bench_hf_dec_"))
    lines = _sample_lines()
    out = {}
    for kind in ("llama", "qwen2"):
        torch.manual_seed(0)
        directory = root / kind
        directory.mkdir()
        _decoder(directory, lines, kind)
        out[kind] = directory
    return out


@functools.lru_cache(maxsize=None)
def deep_model(blocks: int = 32) -> Path:
    """A Llama-style decoder of ``blocks`` tiny blocks (width 16): ``blocks`` + 1 layers, as deep as an 8B model and
    as small as a test needs (deep sweeps: every layer, or every K-th and the last)."""
    import torch

    directory = Path(tempfile.mkdtemp(prefix="elmo_bench_hf_deep_")) / f"llama{blocks}"
    directory.mkdir()
    torch.manual_seed(0)
    _decoder(directory, _sample_lines(), "llama", blocks=blocks, width=16)
    return directory


@functools.lru_cache(maxsize=None)
def tiny_models() -> dict[str, Path]:
    """{kind: model directory} for bert, roberta and gpt2 (built on first call, reused for the session)."""
    import torch

    root = Path(tempfile.mkdtemp(prefix="elmo_bench_hf_"))
    lines = _sample_lines()
    out = {}
    for kind, build in (("bert", _bert), ("roberta", _roberta), ("gpt2", _gpt2)):
        torch.manual_seed(0)
        directory = root / kind
        directory.mkdir()
        build(directory, lines)
        out[kind] = directory
    return out
