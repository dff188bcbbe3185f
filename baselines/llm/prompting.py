"""Prompt files and the text blocks every LLM baseline puts into them.

A prompt file (`prompts/<baseline>.txt`) holds named sections, each starting with a line `=== name ===`;
comment lines (`#`) before the first section describe the file and its version. Sections are
`string.Template`s (`$history`, `${cards}`), so JSON braces need no escaping; a placeholder without a value is
an error, never an empty string. The file's SHA-256 goes into the run metadata.

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

import hashlib
import re
import string
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from trace_dataset.kb.store import KnowledgeBase
from trace_dataset.quotes import CITATION_LABEL_RE

PROMPTS_DIR = Path(__file__).with_name("prompts")
_SECTION_RE = re.compile(r"^=== ([\w:.-]+) ===[ \t]*$", re.MULTILINE)
DEFAULT_REVIEWS_PER_POI = 3
DEFAULT_REVIEW_CHARS = 240
SPEAKERS = {"user": "Traveler", "system": "Recommender"}


@dataclass(frozen=True)
class Prompt:
    """The sections of one prompt file, with the file's name and SHA-256."""

    name: str
    sections: dict[str, str]
    sha256: str
    path: str

    def render(self, section: str, **fields: Any) -> str:
        if section not in self.sections:
            raise KeyError(f"prompt {self.path}: no section {section!r}; it has {sorted(self.sections)}")
        try:
            return string.Template(self.sections[section]).substitute(fields)
        except KeyError as e:
            raise KeyError(f"prompt {self.path}, section {section!r}: no value for placeholder {e}") from None

    def describe(self) -> dict[str, str]:
        return {"file": Path(self.path).name, "sha256": self.sha256}


def parse_prompt(text: str, name: str = "", path: str = "") -> Prompt:
    """Sections of a prompt file's text (see the module docstring); the text must define at least one."""
    matches = list(_SECTION_RE.finditer(text))
    if not matches:
        raise ValueError(f"prompt {path or name}: no '=== section ===' line")
    head = text[: matches[0].start()]
    stray = [ln for ln in head.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    if stray:
        raise ValueError(f"prompt {path or name}: text before the first section must be '#' comments: {stray[0]!r}")
    sections: dict[str, str] = {}
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        if m.group(1) in sections:
            raise ValueError(f"prompt {path or name}: section {m.group(1)!r} defined twice")
        sections[m.group(1)] = text[m.end() : end].strip("\n")
    return Prompt(name, sections, hashlib.sha256(text.encode("utf-8")).hexdigest(), path)


@cache
def load_prompt(name: str) -> Prompt:
    """The packaged prompt `prompts/<name>.txt`."""
    path = PROMPTS_DIR / f"{name}.txt"
    return parse_prompt(path.read_text(encoding="utf-8"), name, str(path))


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
    return (f"{label}. {poi.name} - {cats} - {poi.stars:.1f} stars ({poi.review_count} reviews) - "
            f"{price_text(poi.price)} - {poi.address or poi.city}")


class CardIndex:
    """The parts of each POI's card that do not depend on the prompt (header text, clipped reviews), built on
    first use and kept for the pipeline's life: a card is then a join, not a re-cut of its reviews."""

    def __init__(self, kb: KnowledgeBase, reviews_per_poi: int = DEFAULT_REVIEWS_PER_POI,
                 review_chars: int = DEFAULT_REVIEW_CHARS):
        self.kb = kb
        self.reviews_per_poi = reviews_per_poi
        self.review_chars = review_chars
        self._parts: dict[str, tuple[str, tuple[tuple[str, str], ...]]] = {}

    def parts(self, pid: str) -> tuple[str, tuple[tuple[str, str], ...]]:
        """(header after the label, ((review id, "(<stars> stars) <clipped text>"), ...))."""
        found = self._parts.get(pid)
        if found is None:
            header = poi_header(self.kb, "", pid)[2:]  # "P1. " is added per prompt
            reviews = tuple((r.review_id, f"({r.stars:g} stars) {clip(self.kb.review_text(r.review_id), self.review_chars)}")
                            for r in self.kb.reviews_of(pid)[: self.reviews_per_poi])
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


def poi_cards(kb: KnowledgeBase, labelled: Sequence[tuple[str, str]], labels: LabelMap,
              reviews_per_poi: int = DEFAULT_REVIEWS_PER_POI, review_chars: int = DEFAULT_REVIEW_CHARS) -> str:
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
