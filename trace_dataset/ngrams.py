"""Word n-gram hashing shared by the generator's copy guard and the release's leak check, so both decide
"six consecutive review words" with the same words and the same hash."""

from __future__ import annotations

import re

import numpy as np

WORD_RE = re.compile(r"\w+")
_MULT = np.uint64(0x9E3779B97F4A7C15)


def words(text: str) -> list[str]:
    """Lower-cased `\\w+` runs: the word unit of the copy rules."""
    return WORD_RE.findall(text.lower())


def ngram_hashes(ids: np.ndarray, n: int) -> np.ndarray:
    """64-bit polynomial hash of every n-id window of `ids` (uint64 word ids), computed at once."""
    h = np.zeros(len(ids) - n + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for i in range(n):
            h = h * _MULT + ids[i : len(ids) - n + 1 + i]
    return h
