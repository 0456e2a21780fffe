"""bilm-tf character ids, shifted by one so that 0 is padding (the AllenNLP convention).

bilm-tf encodes a token as ``[begin-of-word] + utf8 bytes + [end-of-word]`` padded with a padding-character id to
``max_characters_per_token`` (50); the words ``<S>`` and ``</S>`` are encoded with the begin/end-of-sentence ids.
Every id is then shifted by +1 so that an all-zero row marks a padded (absent) token.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Sequence

import numpy as np
import torch

MAX_CHARS = 50
BEGIN_OF_SENTENCE = 256
END_OF_SENTENCE = 257
BEGIN_OF_WORD = 258
END_OF_WORD = 259
PADDING_CHAR = 260
BOS_TOKEN = "<S>"
EOS_TOKEN = "</S>"


def _special(char_id: int, max_chars: int) -> list[int]:
    ids = [PADDING_CHAR] * max_chars
    ids[0], ids[1], ids[2] = BEGIN_OF_WORD, char_id, END_OF_WORD
    return [i + 1 for i in ids]


def word_to_ids(word: str, max_chars: int = MAX_CHARS) -> list[int]:
    """Character ids (already shifted by +1) of one token, length ``max_chars``."""
    if word == BOS_TOKEN:
        return _special(BEGIN_OF_SENTENCE, max_chars)
    if word == EOS_TOKEN:
        return _special(END_OF_SENTENCE, max_chars)
    body = list(word.encode("utf-8", "ignore"))[: max_chars - 2]
    ids = [BEGIN_OF_WORD, *body, END_OF_WORD]
    ids += [PADDING_CHAR] * (max_chars - len(ids))
    return [i + 1 for i in ids]


BOS_IDS = word_to_ids(BOS_TOKEN)
EOS_IDS = word_to_ids(EOS_TOKEN)


@lru_cache(maxsize=1 << 18)
def _word_array(word: str, max_chars: int) -> np.ndarray:
    """word_to_ids as a read-only int64 array, cached: a task sees the same words every epoch."""
    ids = np.asarray(word_to_ids(word, max_chars), dtype=np.int64)
    ids.flags.writeable = False
    return ids


def batch_to_ids(sentences: Sequence[Sequence[str]], max_chars: int = MAX_CHARS) -> torch.Tensor:
    """Character ids of a batch of tokenised sentences, without sentence boundaries.

    Returns a LongTensor (batch, max_sentence_length, max_chars); padded token positions are all zeros.
    """
    longest = max((len(s) for s in sentences), default=0)
    out = np.zeros((len(sentences), longest, max_chars), dtype=np.int64)
    for row, sentence in enumerate(sentences):
        if sentence:
            out[row, : len(sentence)] = np.stack([_word_array(w, max_chars) for w in sentence])
    return torch.from_numpy(out)
