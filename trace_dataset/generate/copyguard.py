"""Stage-4 guard: generated (non-quote) text must never repeat six consecutive words of any review.

Review text may appear in a dialogue only inside double quotes (where the release replaces it with
`[Q:N]`); everything else is authored and released under CC BY 4.0, so it must not copy Yelp prose. Words
are lower-cased `\\w+` tokens; six-word windows are hashed into a sorted numpy array (about 8 bytes per
window of the whole knowledge base) and looked up with searchsorted.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from trace_dataset.constants import COPIED_WORDS_LIMIT as NGRAM
from trace_dataset.ngrams import WORD_RE, ngram_hashes
from trace_dataset.ngrams import words as tokens
from trace_dataset.quotes import QUOTE_RE


def non_quote_segments(text: str) -> list[str]:
    """The parts of a turn text outside double-quoted spans (quotes act as boundaries)."""
    out, pos = [], 0
    for m in QUOTE_RE.finditer(text):
        out.append(text[pos : m.start()])
        pos = m.end()
    out.append(text[pos:])
    return out


class ReviewNgrams:
    """Hashes of every NGRAM-word window of a set of review texts."""

    def __init__(self, texts: Iterable[str], n: int = NGRAM):
        self.n = n
        self.vocab: dict[str, int] = {}
        # one pass over all texts (windows spanning two reviews add a few harmless extra hashes)
        toks = WORD_RE.findall("\n".join(t or "" for t in texts).lower())
        vocab = self.vocab
        ids = np.fromiter(
            (vocab.setdefault(t, len(vocab) + 1) for t in toks), dtype=np.uint64, count=len(toks)
        )
        if len(ids) >= n:
            h = np.sort(self._hashes(ids))  # (np.unique is much slower on this many uint64 values)
            self.hashes = h[np.concatenate(([True], h[1:] != h[:-1]))]
        else:
            self.hashes = np.zeros(0, dtype=np.uint64)

    def _hashes(self, ids: np.ndarray) -> np.ndarray:
        return ngram_hashes(ids, self.n)

    def copied(self, text: str) -> list[str]:
        """The NGRAM-word windows of `text` (outside quotes) that occur in some review."""
        found: list[str] = []
        if not len(self.hashes):
            return found
        for segment in non_quote_segments(text):
            toks = tokens(segment)
            if len(toks) < self.n:
                continue
            ids = [self.vocab.get(t, 0) for t in toks]
            if 0 in ids and all(0 in ids[i : i + self.n] for i in range(len(ids) - self.n + 1)):
                continue  # every window holds a word no review uses
            h = self._hashes(np.asarray(ids, dtype=np.uint64))
            pos = np.searchsorted(self.hashes, h)
            pos[pos >= len(self.hashes)] = 0
            for i in np.nonzero(self.hashes[pos] == h)[0]:
                if 0 not in ids[i : i + self.n]:
                    found.append(" ".join(toks[i : i + self.n]))
        return found
