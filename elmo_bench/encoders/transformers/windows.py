"""Long sentences in ``encoder=transformers``: overlapping windows of whole words, the window each word is taken
from (the one where it has the most context), and every word's subword span of the sentences that fit one window
(elmo_bench.encoders.transformers.encoder's module docstring states the rule).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from elmo_bench.base.errors import DataError

#: at most this many sentences' forced-unknown counts are kept between plan() and forced_unknown()
FORCED_MEMO = 200_000

def word_windows(cum: Sequence[int], content: int) -> list[tuple[int, int]]:
    """Windows [first word, end word) over a sentence whose word k has subwords [cum[k], cum[k+1]): each at most
    ``content`` subwords, each starting at the first word at least ``content // 2`` subwords after the previous
    start, the last one ending at the last word. One window when everything fits. Words must be at most
    ``content // 2`` subwords long: then every word lies whole inside some window."""
    n = len(cum) - 1
    stride = max(1, content // 2)
    windows: list[tuple[int, int]] = []
    start = 0
    while True:
        end = start
        while end < n and cum[end + 1] - cum[start] <= content:
            end += 1
        if end == n:
            # the last window ends at the last word and reaches back as far as it fits
            first = start
            while first > 0 and cum[n] - cum[first - 1] <= content:
                first -= 1
            while windows and windows[-1][0] >= first:  # a window inside the last one adds nothing
                windows.pop()
            windows.append((first, n))
            return windows
        windows.append((start, end))
        target = cum[start] + stride
        following = start + 1
        while following < n and cum[following] < target:
            following += 1
        start = following


def best_window(windows: Sequence[tuple[int, int]], cum: Sequence[int], word: int) -> int:
    """The window in which ``word`` has the most context: the largest min(subwords before it, subwords after it)
    inside the window, among the windows that hold it; ties go to the earlier window."""
    best, score = -1, -1
    for index, (a, b) in enumerate(windows):
        if a <= word < b:
            context = min(cum[word] - cum[a], cum[b] - cum[word + 1])
            if context > score:
                best, score = index, context
    return best


def fit_picks(rows: Sequence[int], word_ids: Sequence[Sequence[int | None]]) -> np.ndarray:
    """(sentence, word, window, first, last position) of every word of sentences that each fit one window (window
    k is ``rows[k]``'s, its word ids ``word_ids[k]``), in order of window then word: a word's first and last
    subword positions found for all windows at once (what :meth:`TransformersEncoder._spans` gives per window)."""
    lengths = np.array([len(ids) for ids in word_ids], dtype=np.int64)
    flat = np.array([-1 if w is None else w for ids in word_ids for w in ids], dtype=np.int64)
    window = np.repeat(np.arange(len(word_ids), dtype=np.int64), lengths)
    position = np.arange(len(flat), dtype=np.int64) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    words = flat >= 0
    flat, window, position = flat[words], window[words], position[words]
    if not len(flat):
        return np.zeros((0, 5), dtype=np.int64)
    key = window * (int(flat.max()) + 1) + flat  # ascending (window, word)
    _, first = np.unique(key, return_index=True)
    _, from_end = np.unique(key[::-1], return_index=True)
    last = len(key) - 1 - from_end
    sentence = np.asarray(rows, dtype=np.int64)[window[first]]
    return np.stack([sentence, flat[first], window[first], position[first], position[last]], axis=1)


class WindowPlanner:
    """The windows of a transformers encoder (the part of :class:`~elmo_bench.encoders.transformers.encoder.
    TransformersEncoder` that plans them): its ``tokenizer``, ``window`` and ``content`` set, and ``_forced_seen``
    the forced-unknown counts :meth:`plan` found, so that :meth:`forced_unknown` need not tokenise them again."""

    tokenizer: Any
    window: int
    content: int
    _forced_seen: dict[tuple[Any, ...], int]

    def _tokenize(self, sentences: Sequence[Sequence[str]]) -> list[tuple[list[int], list[int | None]]]:
        """(input ids with the model's special tokens, word index per position) of each word list, in one call."""
        encoded = self.tokenizer([list(s) for s in sentences], is_split_into_words=True, add_special_tokens=True)
        return [(list(encoded["input_ids"][i]), list(encoded.word_ids(i))) for i in range(len(sentences))]

    def _replacements(self, words: list[str], ids: list[int], word_ids: list[int | None]) -> tuple[set[int], int]:
        """(words to give the unknown token, how many of them only because the sentence is too long). A word of no
        subword (a lone control character) always; a word of more than ``content // 2`` subwords only when the
        sentence does not fit one window (so that each word fits whole in some window): a sentence that fits is
        never altered."""
        counts = [0] * len(words)
        for w in word_ids:
            if w is not None:
                counts[w] += 1
        empty = {i for i, c in enumerate(counts) if c == 0}
        if len(ids) + len(empty) <= self.window:
            return empty, 0
        limit = max(1, self.content // 2)
        long = {i for i, c in enumerate(counts) if c > limit}
        return empty | long, len(long)

    def _words_fit(self, words: list[str], word_ids: list[int | None], ids: list[int]) -> list[str] | None:
        """``words`` with the unknown token standing for each word :meth:`_replacements` names; None when none."""
        bad, forced = self._replacements(words, ids, word_ids)
        if words and len(self._forced_seen) < FORCED_MEMO:
            self._forced_seen[(self.window, self.content, *words)] = forced
        if not bad:
            return None
        unk = self.tokenizer.unk_token
        if unk is None:
            first = min(bad)
            raise DataError(f"encoder=transformers: word {words[first]!r} cannot be encoded whole in a window of "
                            f"{self.window} tokens and the tokenizer has no unknown token to stand for it")
        return [unk if i in bad else w for i, w in enumerate(words)]

    def forced_unknown(self, sentences: Sequence[Sequence[str]]) -> list[int]:
        """Per sentence, how many of its words become the unknown token because the sentence does not fit one
        window (words longer than half a window); recorded per split in results.json and the cache entry."""
        out = [0] * len(sentences)
        rows = []
        for i, words in enumerate(sentences):  # counted already by plan(): taken from there (and forgotten)
            seen = self._forced_seen.pop((self.window, self.content, *words), None) if len(words) else 0
            if seen is None:
                rows.append(i)
            else:
                out[i] = seen
        for start in range(0, len(rows), 1024):
            chunk = [list(sentences[i]) for i in rows[start: start + 1024]]
            for i, words, (ids, word_ids) in zip(rows[start: start + 1024], chunk, self._tokenize(chunk)):
                out[i] = self._replacements(words, ids, word_ids)[1]
        return out

    @staticmethod
    def _spans(word_ids: list[int | None], words: int, offset: int = 0) -> dict[int, tuple[int, int]]:
        """{word index + offset: (first position, last position)} from a window's word ids."""
        spans: dict[int, tuple[int, int]] = {}
        for position, w in enumerate(word_ids):
            if w is not None and w < words:
                first, _ = spans.get(w + offset, (position, position))
                spans[w + offset] = (first, position)
        return spans

    def plan(self, sentences: Sequence[Sequence[str]]) -> tuple[list[list[int]], list[tuple[int, int, int, int, int]]]:
        """Windows (token ids with special tokens) and, per word, (sentence, word, window, first, last position)."""
        windows, picks = self._plan(sentences)
        return windows, [tuple(p) for p in picks.tolist()]

    def _plan(self, sentences: Sequence[Sequence[str]]) -> tuple[list[list[int]], np.ndarray]:
        """:meth:`plan` with the picks as one (words, 5) int64 array: those of the sentences that fit one window
        found for all of them at once (:func:`fit_picks`), then those of the long ones."""
        sentences = [list(s) for s in sentences]
        tokenized = self._tokenize(sentences)
        for row, (words, (ids, word_ids)) in enumerate(zip(sentences, tokenized)):
            replaced = self._words_fit(words, word_ids, ids)
            if replaced is not None:
                sentences[row] = replaced
                tokenized[row] = self._tokenize([replaced])[0]
        fit = [row for row, (words, (ids, _)) in enumerate(zip(sentences, tokenized)) if words and
               len(ids) <= self.window]  # the whole sentence in one window
        windows = [tokenized[row][0] for row in fit]
        picks = [fit_picks(fit, [tokenized[row][1] for row in fit])]
        long_rows: list[tuple[int, list[tuple[int, int]], list[int]]] = []
        for row, (words, (ids, word_ids)) in enumerate(zip(sentences, tokenized)):
            if not words or len(ids) <= self.window:
                continue
            counts = [0] * len(words)
            for w in word_ids:
                if w is not None:
                    counts[w] += 1
            cum = [0]
            for c in counts:
                cum.append(cum[-1] + c)
            long_rows.append((row, word_windows(cum, self.content), cum))
        if long_rows:  # every window of every long sentence, tokenised in one call
            picks.append(self._long_picks(sentences, long_rows, windows))
        return windows, np.concatenate(picks).reshape(-1, 5)

    def _long_picks(self, sentences: list[list[str]], long_rows: list[tuple[int, list[tuple[int, int]], list[int]]],
                    windows: list[list[int]]) -> np.ndarray:
        """The picks of sentences longer than a window, their windows appended to ``windows``."""
        pieces = [sentences[row][a:b] for row, plan, _ in long_rows for a, b in plan]
        encoded = self._tokenize(pieces)
        picks: list[tuple[int, int, int, int, int]] = []
        k = 0
        for row, plan, cum in long_rows:
            base = len(windows)
            spans_by_window = []
            for a, b in plan:
                ids, word_ids = encoded[k]
                k += 1
                windows.append(ids)
                spans_by_window.append(self._spans(word_ids, b - a, offset=a))
            for word in range(len(sentences[row])):
                w = best_window(plan, cum, word)
                first, last = spans_by_window[w][word]
                picks.append((row, word, base + w, first, last))
        return np.array(picks, dtype=np.int64).reshape(-1, 5)
