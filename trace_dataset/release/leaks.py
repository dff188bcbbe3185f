"""The redistribution guard: does any file of a release contain six consecutive words of a review?

Words are `\\w+` runs of the lower-cased text. JSON files are read record by record and the string values
of one record are joined in order, so a span split across two fields is still caught. The check hashes
every review's word 6-grams once (a sorted int64 array), then looks up the 6-grams of every release file;
hits are confirmed against the words themselves, so a hash collision can never report a false leak.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from trace_dataset.constants import COPIED_WORDS_LIMIT as LEAK_NGRAM
from trace_dataset.io import TraceDataError, open_text
from trace_dataset.ngrams import ngram_hashes, words


@dataclass(frozen=True)
class Leak:
    path: str  # relative to the checked folder
    line: int | None  # JSON-lines record number; None for plain text files
    review_id: str
    words: str  # the shared words (only ever shown to the person running the check, never written)

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"{where}: {LEAK_NGRAM} words of review {self.review_id!r} ({self.words!r})"


def _ngrams(tokens: list[str], n: int) -> Iterator[tuple[str, ...]]:
    for i in range(len(tokens) - n + 1):
        yield tuple(tokens[i : i + n])


# In valid JSON a quoted run followed by a colon is always a key (inside a value every quote is escaped).
_JSON_KEY_RE = re.compile(r'"[^"\\]*"\s*:')
_JSON_ESCAPE_RE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|.)")


def _json_text(line: str) -> str:
    """The text of one JSON document for word tokenising: keys dropped (so a run of review words split
    across two fields still reads as one run), escapes decoded (`\\n` and friends become spaces)."""
    text = _JSON_KEY_RE.sub(" ", line)
    if "\\" in text:
        text = _JSON_ESCAPE_RE.sub(lambda m: chr(int(m.group(1), 16)) if m.group(1) else " ", text)
    return text


def _units(path: Path) -> Iterator[tuple[int | None, str]]:
    """(record number or None, text) units of one file, in file order."""
    name = path.name
    if name.endswith((".jsonl", ".jsonl.gz", ".json", ".json.gz")):
        with open_text(path) as f:
            if name.endswith((".json", ".json.gz")):
                yield None, _json_text(f.read())
                return
            for lineno, line in enumerate(f, start=1):
                if line.strip():
                    yield lineno, _json_text(line)
    else:
        with open(path, encoding="utf-8", errors="replace") as f:
            yield None, f.read()


class ReviewNgrams:
    """Hashed word n-grams of a set of reviews, for fast membership tests.

    Words map to integer ids (0 for a word no review uses); an n-gram hashes to a 64-bit polynomial of its
    ids, computed for a whole text at once with numpy. Hash hits are confirmed word by word.
    """

    def __init__(self, texts: Mapping[str, str], n: int = LEAK_NGRAM):
        self.texts = texts
        self.n = n
        self.vocab: dict[str, int] = {}
        chunks = []
        for text in texts.values():
            ids = [self.vocab.setdefault(t, len(self.vocab) + 1) for t in words(text)]
            if len(ids) >= n:
                chunks.append(self._hashes(np.asarray(ids, dtype=np.uint64)))
        self._sorted = np.unique(np.concatenate(chunks)) if chunks else np.zeros(0, dtype=np.uint64)

    def _hashes(self, ids: np.ndarray) -> np.ndarray:
        return ngram_hashes(ids, self.n)

    def __len__(self) -> int:
        return int(self._sorted.size)

    def hits(self, tokens: list[str]) -> list[int]:
        """Start positions in `tokens` whose n-gram hash is a review n-gram hash."""
        if len(tokens) < self.n or not self._sorted.size:
            return []
        vocab = self.vocab
        ids = np.fromiter((vocab.get(t, 0) for t in tokens), dtype=np.uint64, count=len(tokens))
        h = self._hashes(ids)
        pos = np.searchsorted(self._sorted, h)  # the review array is sorted once, in __init__
        pos[pos == self._sorted.size] = 0
        return np.flatnonzero(self._sorted[pos] == h).tolist()

    def source(self, gram: tuple[str, ...]) -> str | None:
        """The first review holding this exact n-gram (slow path: only called on a hash hit)."""
        for review_id, text in self.texts.items():
            if gram in set(_ngrams(words(text), self.n)):
                return review_id
        return None


def find_leaks(
    root: str | os.PathLike,
    texts: Mapping[str, str] | ReviewNgrams,
    *,
    files: Iterable[Path] | None = None,
    limit: int = 10,
) -> list[Leak]:
    """Every file under `root` (or just `files`), checked against the review texts; up to `limit` leaks."""
    root = Path(root)
    index = texts if isinstance(texts, ReviewNgrams) else ReviewNgrams(texts)
    paths = sorted(p for p in root.rglob("*") if p.is_file()) if files is None else list(files)
    leaks: list[Leak] = []
    for path in paths:
        try:
            units = list(_units(path))
        except (OSError, EOFError, UnicodeDecodeError) as e:
            raise TraceDataError(f"cannot read file for the review-text check ({e})", path=path) from None
        for line, text in units:
            tokens = words(text)
            for i in index.hits(tokens):
                gram = tuple(tokens[i : i + index.n])
                review_id = index.source(gram)
                if review_id is None:  # hash collision, not a leak
                    continue
                leaks.append(Leak(str(path.relative_to(root)), line, review_id, " ".join(gram)))
                if len(leaks) >= limit:
                    return leaks
                break  # one report per record is enough
    return leaks
