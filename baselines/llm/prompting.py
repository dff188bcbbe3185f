"""The LLM baselines' prompt files and the text blocks every LLM baseline puts into them.

A baseline's prompt is `prompts/<name>.txt` (its name in `baselines.identity`), in the package's one
prompt-file format (`trace_llm.prompts`: `=== section ===` lines, `#` comments before the first,
`$placeholders`); the file's SHA-256 goes into the run metadata.

Blocks (choices documented in docs/llm_baselines.md):
- History: one line per turn, "Traveler: ..." / "Recommender: ...", the texts as the dataset gives them.
- POI cards: "P<k>. name - categories - stars (review count) - price - address", then up to
  `reviews_per_poi` reviews in knowledge-base order, each "[R<n>] (<stars> stars) <text>" with whitespace
  collapsed and the text cut at a word boundary after `review_chars` characters (marked with "…"). Labels
  [R1], [R2], ... run across the whole prompt; `LabelMap` maps them back to review ids.
- Citations of a response: the [Rn] labels it uses that the prompt defined, in order of first use; labels the
  prompt never defined are returned apart (the metrics count them as unresolved).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from trace_dataset.kb.store import KnowledgeBase
from trace_dataset.quotes import CITATION_LABEL_RE
from trace_llm.prompts import Prompt
from trace_llm.prompts import load_prompt as read_prompt

PROMPTS_DIR = Path(__file__).with_name("prompts")
DEFAULT_REVIEWS_PER_POI = 3
DEFAULT_REVIEW_CHARS = 240
SPEAKERS = {"user": "Traveler", "system": "Recommender"}


@cache
def load_prompt(name: str) -> Prompt:
    """The packaged prompt `prompts/<name>.txt`."""
    return read_prompt(PROMPTS_DIR / f"{name}.txt")


# ---------------------------------------------------------------------------------------------------
# Blocks
# ---------------------------------------------------------------------------------------------------
def format_history(history: Iterable[Mapping[str, Any]]) -> str:
    lines = [f"{SPEAKERS.get(t['role'], t['role'])}: {' '.join(str(t['text']).split())}" for t in history]
    return "\n".join(lines) if lines else "(the traveler has not said anything yet)"


def clip(text: str, limit: int) -> str:
    """Whitespace collapsed; cut at the last word boundary within `limit` characters, marked with '…'."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit + 1)
    return text[: cut if cut > 0 else limit].rstrip() + "…"


def price_text(price: int | None) -> str:
    return "$" * price if price else "price unknown"


@dataclass
class LabelMap:
    """[Rn] labels of one prompt -> review ids, numbered in the order they are added."""

    review_ids: dict[str, str] = field(default_factory=dict)

    def add(self, review_id: str) -> str:
        label = f"R{len(self.review_ids) + 1}"
        self.review_ids[label] = review_id
        return label


def poi_header(kb: KnowledgeBase, label: str, pid: str) -> str:
    poi = kb.pois[pid]
    cats = ", ".join(poi.categories) or poi.poi_type
    return (
        f"{label}. {poi.name} - {cats} - {poi.stars:.1f} stars ({poi.review_count} reviews) - "
        f"{price_text(poi.price)} - {poi.address or poi.city}"
    )


class CardIndex:
    """The parts of each POI's card that do not depend on the prompt (header text, clipped reviews), built on
    first use and kept for the pipeline's life: a card is then a join, not a re-cut of its reviews."""

    def __init__(
        self,
        kb: KnowledgeBase,
        reviews_per_poi: int = DEFAULT_REVIEWS_PER_POI,
        review_chars: int = DEFAULT_REVIEW_CHARS,
    ):
        self.kb = kb
        self.reviews_per_poi = reviews_per_poi
        self.review_chars = review_chars
        self._parts: dict[str, tuple[str, tuple[tuple[str, str], ...]]] = {}

    def parts(self, pid: str) -> tuple[str, tuple[tuple[str, str], ...]]:
        """(header after the label, ((review id, "(<stars> stars) <clipped text>"), ...))."""
        found = self._parts.get(pid)
        if found is None:
            header = poi_header(self.kb, "", pid)[2:]  # "P1. " is added per prompt
            reviews = tuple(
                (
                    r.review_id,
                    f"({r.stars:g} stars) {clip(self.kb.review_text(r.review_id), self.review_chars)}",
                )
                for r in self.kb.reviews_of(pid)[: self.reviews_per_poi]
            )
            found = self._parts[pid] = (header, reviews)
        return found

    def render(self, labelled: Sequence[tuple[str, str]], labels: LabelMap) -> str:
        """Cards of (candidate label, business id) pairs, reviews labelled through `labels`."""
        lines = []
        for label, pid in labelled:
            header, reviews = self.parts(pid)
            lines.append(f"{label}. {header}")
            lines.extend(f"  [{labels.add(rid)}] {text}" for rid, text in reviews)
        return "\n".join(lines) if lines else "(no candidates left)"


def poi_cards(
    kb: KnowledgeBase,
    labelled: Sequence[tuple[str, str]],
    labels: LabelMap,
    reviews_per_poi: int = DEFAULT_REVIEWS_PER_POI,
    review_chars: int = DEFAULT_REVIEW_CHARS,
) -> str:
    """Cards of (candidate label, business id) pairs (one-off; pipelines keep a CardIndex)."""
    return CardIndex(kb, reviews_per_poi, review_chars).render(labelled, labels)


def candidate_labels(pids: Sequence[str]) -> list[tuple[str, str]]:
    """P1, P2, ... for the candidates shown, in order."""
    return [(f"P{k}", pid) for k, pid in enumerate(pids, start=1)]


def response_citations(response: str, labels: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """({label: review_id} for the prompt's labels the response uses, [labels it uses that the prompt lacks])."""
    cited: dict[str, str] = {}
    unknown: list[str] = []
    for m in CITATION_LABEL_RE.finditer(response):
        label = f"R{int(m.group(1))}"
        if label in labels:
            cited.setdefault(label, labels[label])
        elif label not in unknown:
            unknown.append(label)
    return cited, unknown
