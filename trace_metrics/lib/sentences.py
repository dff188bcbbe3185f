"""Sentence splitting and sentence categories for sentence-level NLI (App. L "Calibration mini-audit").

The entailment metric treats every sentence of a response as one claim. nltk's punkt model needs a data
download that fails offline, so sentences are cut by the rules below (documented in the entailment metric
card):

1. A line break always ends a sentence (responses often list options one per line); blank lines are dropped.
2. Inside a line, a sentence ends after `.`, `!` or `?` (a run of them, then any closing quotes or brackets,
   then any `[Rn]` citation labels, which stay with the sentence they cite) when whitespace and an upper-case
   letter, a digit, an opening quote or bracket, or `*`/`-` (markdown) follow.
3. No cut before the first letter of a sentence (a list marker such as "1." stays with its item), none
   inside a double-quoted span (straight or curly quotes, as `trace_dataset.quotes`), after a common
   abbreviation (Dr., St., Ave., Mr., e.g., vs., ...), or after a single-letter initial ("J. Smith").

Each sentence gets one category, the first rule that matches, in this order:

- `Quote`: contains double-quoted content.
- `Rating-meta`: structured attributes: star ratings, numeric ratings ("4.5/5", "rated"), price symbols or
  price-range words ("$$", "price range", "priced").
- `Framing`: recommendation meta-commentary: "I'd suggest", "I recommend", "here are two options", "you might
  enjoy", "let me know", "both are great choices", "reviewers mention", ..., and questions to the user.
- `Other-claim`: every other sentence (synthesised claims about the POI).
"""

from __future__ import annotations

import re
from typing import Literal

from trace_dataset.quotes import CITATION_LABEL_RE, QUOTE_RE

Category = Literal["Quote", "Framing", "Rating-meta", "Other-claim"]
CATEGORIES: tuple[str, ...] = ("Quote", "Framing", "Rating-meta", "Other-claim")

ABBREVIATIONS: frozenset[str] = frozenset(
    {
        "dr",
        "mr",
        "mrs",
        "ms",
        "st",
        "ave",
        "blvd",
        "rd",
        "hwy",
        "mt",
        "ft",
        "jr",
        "sr",
        "vs",
        "etc",
        "approx",
        "e.g",
        "i.e",
        "p.m",
        "a.m",
        "u.s",
        "inc",
        "corp",
        "apt",
        "dept",
    }
)

# end punctuation, closing quotes/brackets, citation labels; then the whitespace the cut replaces
_BOUNDARY_RE = re.compile(r"[.!?]+[\"'\u201d\u2019)\]]*(?:\s*\[R\d+\])*(?=\s+[A-Z0-9\"\u201c(\[*\-])")
_WORD_BEFORE_RE = re.compile(r"([A-Za-z][A-Za-z.]*)\.$")
_HAS_WORD_RE = re.compile(r"[A-Za-z0-9]")
_HAS_LETTER_RE = re.compile(r"[A-Za-z]")
_SPACE_BEFORE_PUNCT_RE = re.compile(r"\s+([.,;:!?])")
_SPACE_RE = re.compile(r"\s+")
_MARKDOWN_RE = re.compile(r"\*\*|__|^\s*(?:[-*\u2022]|\d+[.)])\s+")

_RATING_RE = re.compile(
    r"\b\d(?:\.\d)?\s*(?:/\s*5|out of 5|-?stars?)\b|\bstars?\b|\brat(?:ed|ing|ings)\b|\$|"
    r"\bprice(?:d| range| level| point)\b|\bprices? (?:is|are)\b|\breview count\b",
    re.IGNORECASE,
)
_FRAMING_RE = re.compile(
    r"\b(?:i(?:'d| would| will|'ll)? (?:suggest|recommend|propose)|i think you|my (?:top )?(?:pick|suggestion|"
    r"recommendation)s?|here (?:are|is|'s)|you (?:might|may|could|would|will|should|'ll|'d) (?:like|love|enjoy|"
    r"want|prefer|consider|appreciate|find)|(?:great|good|solid|excellent|top|best|nice) (?:option|choice|pick|"
    r"fit|match|bet)s?|let me know|happy to help|hope (?:this|that|you)|enjoy your|(?:both|either) (?:are|is|"
    r"would|could|of)|compared (?:to|with)|on the other hand|another (?:option|choice|pick)|how about|"
    r"consider|check out|(?:a |one |several |many |some )?(?:reviewers?|guests?|visitors?|diners?) (?:mention|"
    r"say|said|note|noted|describe|wrote|write|praise|highlight|report)|(?:according to|based on) (?:the |"
    r"a |one )?reviews?|would you like|do you (?:want|prefer)|if you(?:'re| are)? (?:looking|want))\b",
    re.IGNORECASE,
)


def _in_quote(cut: int, spans: list[tuple[int, int]]) -> bool:
    """True when a cut at offset `cut` would fall strictly between a quote's opening and closing marks."""
    return any(start < cut < end for start, end in spans)


def _is_abbreviation(text: str, end: int) -> bool:
    """True when the '.' ending at `end` closes an abbreviation or an initial, so no sentence ends there."""
    m = _WORD_BEFORE_RE.search(text[:end])
    if m is None:
        return False
    word = m.group(1)
    return word.lower() in ABBREVIATIONS or (len(word) == 1 and word.isupper())


def _split_line(line: str) -> list[str]:
    spans = [(m.start(), m.end()) for m in QUOTE_RE.finditer(line)]  # including the quote marks
    out, start = [], 0
    for m in _BOUNDARY_RE.finditer(line):
        end = m.end()
        first = m.start()
        if _in_quote(end, spans):
            continue
        if line[first] == "." and m.group(0)[:2] != ".." and _is_abbreviation(line, first + 1):
            continue
        if not _HAS_LETTER_RE.search(line[start:first]):  # a list marker such as "1." starts the sentence
            continue
        out.append(line[start:end])
        start = end
    out.append(line[start:])
    return out


def split_sentences(text: str) -> list[str]:
    """The response's sentences, in order, whitespace-trimmed (rules in the module docstring)."""
    sentences = []
    for line in text.splitlines():
        for piece in _split_line(line):
            piece = piece.strip()
            if piece and _HAS_WORD_RE.search(piece):
                sentences.append(piece)
    return sentences


def claim_text(sentence: str) -> str:
    """The hypothesis given to the NLI model: the sentence without `[Rn]` labels and markdown marks."""
    text = CITATION_LABEL_RE.sub(" ", sentence)
    text = _MARKDOWN_RE.sub(" ", text)
    text = _SPACE_BEFORE_PUNCT_RE.sub(r"\1", text)
    return _SPACE_RE.sub(" ", text).strip()


def categorize(sentence: str) -> Category:
    """Quote, Rating-meta, Framing or Other-claim: the first rule that matches (module docstring)."""
    if QUOTE_RE.search(sentence):
        return "Quote"
    if _RATING_RE.search(sentence):
        return "Rating-meta"
    if _FRAMING_RE.search(sentence) or sentence.rstrip().endswith("?"):
        return "Framing"
    return "Other-claim"
