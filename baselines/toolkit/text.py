"""Text handling every non-LLM baseline shares: the tokeniser, the 80-word stop list, the query.

App. F: TF-IDF "removes 80 stop words" and "the query is the concatenation of all user turns". Aspect,
Spatial, Hybrid-RRF and the quote selection of the template responses use the same tokeniser, so a term
counts the same way in ranking and in choosing evidence.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

# Lower-cased runs of letters and digits (any script); punctuation, hyphens and apostrophes split words
# ("gluten-free" -> "gluten", "free"; "don't" -> "don", "t").
TOKEN_RE = re.compile(r"[^\W_]+")

# The 80-word English stop list (App. F names the count, not the words): function words only, so that
# content words such as "quiet", "cheap" or "near" keep their weight.
STOP_WORDS: frozenset[str] = frozenset(
    """
    a about after all also am an and any are as at be because been but by can could did do does for from
    had has have he her here him his how i if in into is it its just me my no not of on or our out she so
    only some than that the their them then there these they this those to up was we were what when where which who
    will with would you your
    """.split()
)


def tokenize(text: str) -> list[str]:
    """All lower-cased word tokens of `text`, stop words included (for counting and spans)."""
    return TOKEN_RE.findall(text.lower())


def content_tokens(text: str) -> list[str]:
    """Tokens without stop words and without one-character tokens: what ranking and quote choice use."""
    return [t for t in TOKEN_RE.findall(text.lower()) if len(t) > 1 and t not in STOP_WORDS]


def user_turns(history: Iterable[Mapping[str, Any]]) -> list[str]:
    """Texts of the user's turns in the history, in order."""
    return [t["text"] for t in history if t["role"] == "user"]


def user_query(history: Sequence[Mapping[str, Any]]) -> str:
    """App. F: the query is the concatenation of all user turns so far (one per line)."""
    return "\n".join(user_turns(history))


def query_terms(query: str) -> list[str]:
    """Distinct content tokens of the query in first-occurrence order (deterministic)."""
    return list(dict.fromkeys(content_tokens(query)))
