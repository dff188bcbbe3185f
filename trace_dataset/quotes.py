"""Quotes, citation labels and `[Q:N]` placeholders: the text conventions every stage shares.

The generator writes quotes and labels, the release replaces quotes by placeholders, hydration puts
them back, and the grounding metrics read them; all of them use these patterns.
"""

from __future__ import annotations

import hashlib
import re
from typing import NamedTuple

from rapidfuzz import fuzz

# A quote is a span between matching double quotes: straight "..." or curly “...”.
QUOTE_RE = re.compile(r'"([^"\n]+?)"|\u201c([^\u201c\u201d\n]+?)\u201d')
# A citation label: [R1], [R2], ...
CITATION_LABEL_RE = re.compile(r"\[R(\d+)\]")
# A release placeholder: [Q:1], [Q:2], ...
PLACEHOLDER_RE = re.compile(r"\[Q:(\d+)\]")

CHECKSUM_CHARS = 16


class Quote(NamedTuple):
    text: str  # the quoted content, without the quote marks
    start: int  # offset of the content in the response (after the opening mark)
    end: int


def extract_quotes(text: str) -> list[Quote]:
    """Double-quoted spans of a response, in order (straight and curly quotes)."""
    out = []
    for m in QUOTE_RE.finditer(text):
        group = 1 if m.group(1) is not None else 2
        out.append(Quote(m.group(group), m.start(group), m.end(group)))
    return out


def span_checksum(span: str) -> str:
    """Checksum stored with each quote span; hydration recomputes it to detect another Yelp version."""
    return hashlib.sha256(span.encode("utf-8")).hexdigest()[:CHECKSUM_CHARS]


def placeholder(quote_id: int) -> str:
    return f"[Q:{quote_id}]"


def quote_support(quote: str, sources: list[str]) -> float:
    """Best rapidfuzz partial_ratio of the quote against any source text, as a fraction in [0, 1]."""
    best = 0.0
    for source in sources:
        if not source:
            continue
        if quote in source:
            return 1.0
        best = max(best, fuzz.partial_ratio(quote, source) / 100.0)
    return best
