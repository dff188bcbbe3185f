"""The retrieval units of SnipRec and its comparison systems, cut from one POI's reviews and attributes.

A unit is a text with its source: a review id and the character span `[start, end)` of that review it came
from, or no review for the attribute templates. Four kinds:

- `rules`: the deterministic snippet extractor for offline runs (our substitute for the LLM of §3.1). A
  review is cut into sentences (at . ! ? followed by white space, and at line breaks), and a sentence into
  clauses at `;`, at `: `, at `but / although / though / whereas` (the conjunction dropped), and at `, and` /
  `, so`, where both sides keep at least `MIN_WORDS` = 3 words. Pieces under 3 words are dropped. The post-check of §3.1 is
  done by rule (`strip_names`): the POI's name (also without a leading "The", also with "'s") becomes "this
  place", and "reviewer" becomes "visitor". The span is the clause's, so the text equals the review's
  characters there except where the post-check rewrote a name.
- `llm`: App. C.1 through the LLM (see llm_snippets.py); each snippet is aligned to the review sentence it
  shares the most content words with (`align`), which is its span.
- `sentence`: the review's sentences as they are (the paper's Sentence baseline; spaCy there, the sentence
  rule above here).
- `document`: each whole review (the Document baseline).

Every kind also gets the attribute templates of App. A.1 (`attribute_units`): "This place is categorized as
{category}." per category and "it has {attribute} as {value}." per known attribute (the Document baseline
joins them into one synthetic document, as the paper's baselines "create synthetic review documents").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from baselines.toolkit.state import phrase_pattern
from baselines.toolkit.text import content_tokens

UNIT_KINDS: tuple[str, ...] = ("rules", "llm", "sentence", "document")
RULES_VERSION = 1  # bump when the rules change what they cut (invalidates cached units)
MIN_WORDS = 3
PLACE = "this place"
# Yelp's price legend (RestaurantsPriceRange2), the wording of the paper's example "price range as under $10".
PRICE_RANGE_TEXT: dict[int, str] = {1: "under $10", 2: "$11-30", 3: "$31-60", 4: "above $61"}

_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+|[\r\n]+")
_CLAUSE_RE = re.compile(
    r"\s*;\s*|:\s+|,?\s+(?:but|although|though|whereas)\s+|,\s+(?:and|so)\s+", re.IGNORECASE
)
_LEAD_STRIP = " \t\r\n\f\v\u00a0,;:-\u2013\u2014)]}"
_TRAIL_STRIP = " \t\r\n\f\v\u00a0,;:-\u2013\u2014([{"
_REVIEWER_RE = re.compile(r"\b(?:the|a|one|this)\s+reviewer\b|\breviewer\b", re.IGNORECASE)


@dataclass(frozen=True)
class Unit:
    """One retrieval unit of a POI; `review_id` None for an attribute template (then no span)."""

    text: str
    review_id: str | None = None
    start: int | None = None
    end: int | None = None

    @property
    def from_review(self) -> bool:
        return self.review_id is not None

    def to_list(self) -> list[Any]:
        return [self.text, self.review_id, self.start, self.end]

    @classmethod
    def from_list(cls, value: Sequence[Any]) -> Unit:
        text, review_id, start, end = value
        return cls(str(text), review_id, start, end)


def _strip(text: str, start: int, end: int) -> tuple[int, int]:
    """Offsets of text[start:end] without surrounding white space and dangling punctuation."""
    piece = text[start:end]
    lead = len(piece) - len(piece.lstrip(_LEAD_STRIP))
    return start + lead, start + max(lead, len(piece.rstrip(_TRAIL_STRIP)))


def _n_words(text: str) -> int:
    return len(text.split())


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each non-empty sentence of `text` (rule in the module docstring)."""
    spans = []
    start = 0
    for m in [*_SENTENCE_RE.finditer(text), None]:
        end = len(text) if m is None else m.start()
        a, b = _strip(text, start, end)
        if b > a:
            spans.append((a, b))
        start = len(text) if m is None else m.end()
    return spans


def clause_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Clauses of the sentence text[start:end]: cut where both sides keep MIN_WORDS words."""
    out = []
    cur = start
    for m in _CLAUSE_RE.finditer(text, start, end):
        left, right = text[cur : m.start()], text[m.end() : end]
        if _n_words(left) >= MIN_WORDS and _n_words(right) >= MIN_WORDS:
            out.append(_strip(text, cur, m.start()))
            cur = m.end()
    out.append(_strip(text, cur, end))
    return [(a, b) for a, b in out if b > a]


def name_variants(name: str) -> list[str]:
    """The POI name as reviews may write it: in full, and without a leading "The"."""
    name = " ".join(name.split())
    variants = [name]
    if name.lower().startswith("the ") and _n_words(name) > 2:
        variants.append(name[4:])
    return [v for v in variants if v]


def mentions_name(text: str, name: str) -> bool:
    return any(phrase_pattern(v).search(text) for v in name_variants(name))


def strip_names(text: str, name: str) -> str:
    """The rules post-check of §3.1: the POI's name -> "this place", "reviewer" -> "visitor"."""
    for variant in name_variants(name):
        text = phrase_pattern(variant).sub(PLACE, text)
    text = _REVIEWER_RE.sub("a visitor", text)
    text = re.sub(r"^this place", "This place", text)
    return re.sub(r"\s+", " ", text).strip()


def rules_units(review_id: str, text: str, name: str) -> list[Unit]:
    """The deterministic snippets of one review (clauses, names stripped)."""
    units = []
    keys = [v.lower() for v in name_variants(name)] + ["reviewer"]
    for a, b in sentence_spans(text):
        for ca, cb in clause_spans(text, a, b):
            clause = text[ca:cb]
            if _n_words(clause) < MIN_WORDS:
                continue
            lowered = clause.lower()
            if any(k in lowered for k in keys):  # the post-check only where it can change something
                clause = strip_names(clause, name)
            units.append(Unit(clause, review_id, ca, cb))
    return units


def sentence_units(review_id: str, text: str) -> list[Unit]:
    return [Unit(text[a:b], review_id, a, b) for a, b in sentence_spans(text)]


def document_unit(review_id: str, text: str) -> list[Unit]:
    a, b = _strip(text, 0, len(text))
    return [Unit(text[a:b], review_id, a, b)] if b > a else []


def align(snippet: str, text: str, spans: Sequence[tuple[int, int]] | None = None) -> tuple[int, int] | None:
    """The span of the review sentence sharing the most content words with `snippet` (ties: the earlier
    sentence); None when no sentence shares one."""
    words = set(content_tokens(snippet))
    best, best_span = 0, None
    for a, b in sentence_spans(text) if spans is None else spans:
        shared = len(words & set(content_tokens(text[a:b])))
        if shared > best:
            best, best_span = shared, (a, b)
    return best_span


def _humanize(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value).replace("_", " ").strip()


def attribute_units(
    categories: Iterable[str], attributes: Mapping[str, Any], price: int | None
) -> list[Unit]:
    """App. A.1: one templated snippet per category and per known attribute value (lists: one per item)."""
    units = [Unit(f"This place is categorized as {c}.") for c in categories if c]
    if price is not None:
        units.append(Unit(f"it has price range as {PRICE_RANGE_TEXT.get(int(price), '$' * int(price))}."))
    for key in sorted(attributes):
        value = attributes[key]
        values = value if isinstance(value, (list, tuple)) else [value]
        for v in values:
            if v is None or v == "":
                continue
            units.append(Unit(f"it has {_humanize(key)} as {_humanize(v)}."))
    return units


def needs_name_check(text: str, name: str) -> bool:
    """Whether an LLM snippet goes through the post-check prompt (`post_check="flagged"`): it mentions the
    POI's name or "reviewer", or has a capitalised word after its first (a possible proper name)."""
    if mentions_name(text, name) or _REVIEWER_RE.search(text):
        return True
    words = text.split()[1:]
    return any(w[:1].isupper() and w not in ("I", "I'm", "I've", "I'd", "I'll") for w in words)
