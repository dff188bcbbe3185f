"""What the user has stated so far, read from one turn row's history (no state crosses dialogues).

Every baseline excludes rejected POIs; Spatial and Itinerary need the location anchor; Knowledge-Enhanced
and Persona-Grounded read price words and aspect words; the template responses acknowledge a rejection.
One reading of the history, so they all agree on what the user said.

Choices (documented in docs/baselines.md):
- Rejected POIs: the row's `rejected_poi_ids` (the referenced POIs of earlier reject_and_refine turns), plus
  any pool POI whose name a reject_and_refine turn mentions; a rejection turn that names nothing and
  references nothing rejects what the system turn before it recommended (its first referenced POI, both of
  a compare turn's: `trace_metrics.lib.conventions.recommended_by_turn`).
- Price: the budget words of `constants.PRICE_KEYWORDS` and the latest one sets the ceiling, read by
  `trace_metrics.lib.conventions` (the same reading as the price-alignment metric).
- Location anchor: a landmark of the dialogue's city (`constants.CITY_LANDMARKS`) named by the user, matched
  case-insensitively without a leading "the"; the latest mention wins.
- Aspects: the 41 `constants.ASPECT_TERMS` the user mentions, whole-word, in first-mention order.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from trace_dataset.constants import ASPECT_TERMS, CITY_LANDMARKS, REJECTION_ACTION
from trace_metrics.lib import conventions


@dataclass(frozen=True)
class DialogueState:
    rejected_poi_ids: tuple[str, ...] = ()
    price_words: tuple[str, ...] = ()  # budget words in order of mention
    price_ceiling: int | None = None  # ceiling of the latest budget word
    anchor: str | None = None  # landmark name as spelled in constants.CITY_LANDMARKS
    anchor_coords: tuple[float, float] | None = None
    aspects: tuple[str, ...] = ()
    after_rejection: bool = False  # the user's last turn was reject_and_refine

    def to_dict(self) -> dict[str, Any]:
        return {
            "rejected_poi_ids": list(self.rejected_poi_ids),
            "price_words": list(self.price_words),
            "price_ceiling": self.price_ceiling,
            "anchor": self.anchor,
            "aspects": list(self.aspects),
            "after_rejection": self.after_rejection,
        }


@lru_cache(maxsize=4096)
def phrase_pattern(phrase: str) -> re.Pattern[str]:
    """Whole-phrase, case-insensitive pattern; hyphens and letters around it break the match."""
    body = r"\s+".join(re.escape(w) for w in phrase.split())
    return re.compile(rf"(?<![\w-]){body}(?![\w-])", re.IGNORECASE)


def _key(phrase: str) -> str:
    return " ".join(phrase.lower().split())


@lru_cache(maxsize=64)
def _alternation(phrases: tuple[str, ...]) -> tuple[re.Pattern[str], dict[str, str]]:
    """One pattern for a fixed phrase list (longest first), and normalised match -> phrase."""
    ordered = sorted(phrases, key=lambda p: (-len(p), p))
    body = "|".join(r"\s+".join(re.escape(w) for w in p.split()) for p in ordered)
    return re.compile(rf"(?<![\w-])(?:{body})(?![\w-])", re.IGNORECASE), {_key(p): p for p in phrases}


def _landmark_key(name: str) -> str:
    return name[4:] if name.lower().startswith("the ") else name


def find_mentions(text: str, phrases: Iterable[str]) -> list[tuple[int, str]]:
    """(offset, phrase) of the whole-phrase mentions in `text` (non-overlapping, longest phrase first at
    any position), in text order."""
    return list(_mentions(text, tuple(phrases)))


@lru_cache(maxsize=16384)
def _mentions(text: str, phrases: tuple[str, ...]) -> tuple[tuple[int, str], ...]:
    """Cached: every later system turn of a dialogue reads the same user turns again."""
    pattern, by_key = _alternation(phrases)
    return tuple((m.start(), by_key[_key(m.group())]) for m in pattern.finditer(text))


def price_mentions(texts: Sequence[str]) -> list[str]:
    """The budget words of `texts`, in order of mention (`conventions.budget_words`)."""
    return conventions.budget_words(texts)


def anchor_of(texts: Sequence[str], city: str) -> str | None:
    """The latest landmark of `city` the texts name, or None."""
    landmarks = CITY_LANDMARKS.get(city, {})
    keys = {_landmark_key(name): name for name in landmarks}
    for text in reversed(texts):
        found = find_mentions(text, keys)
        if found:
            return keys[found[-1][1]]
    return None


def aspect_mentions(texts: Sequence[str]) -> list[str]:
    seen: dict[str, None] = {}
    for text in texts:
        for _, term in find_mentions(text, ASPECT_TERMS):
            seen.setdefault(term, None)
    return list(seen)


def rejected_pois(row: Mapping[str, Any], names: Mapping[str, str]) -> list[str]:
    """Rejected POI ids in order: the row's list, then names in rejection turns, then the fallback.

    `names` maps business_id -> name for the POIs a mention may refer to (the row's pool).
    """
    out: list[str] = list(dict.fromkeys(row["rejected_poi_ids"]))
    history = row["history"]
    for i, turn in enumerate(history):
        if turn["role"] != "user" or turn["action"] != REJECTION_ACTION:
            continue
        text = turn["text"]
        lowered = text.lower()
        named = [
            pid
            for _, pid in sorted(
                (m.start(), pid)
                for pid, name in names.items()
                if name and name.lower() in lowered
                for m in phrase_pattern(name).finditer(text)
            )
        ]
        for pid in named:
            if pid not in out:
                out.append(pid)
        if not named and not turn["referenced_poi_ids"]:
            previous = next((t for t in reversed(history[:i]) if t["role"] == "system"), None)
            if previous is not None:
                for pid in conventions.recommended_by_turn(
                    previous["action"], previous["referenced_poi_ids"]
                ):
                    if pid not in out:
                        out.append(pid)
    return out


def dialogue_state(row: Mapping[str, Any], names: Mapping[str, str]) -> DialogueState:
    """Everything the user stated before this system turn (see the module docstring for the rules)."""
    history = row["history"]
    texts = [t["text"] for t in history if t["role"] == "user"]
    city = row["scenario"]["city"]
    prices = price_mentions(texts)
    anchor = anchor_of(texts, city)
    last_user = next((t for t in reversed(history) if t["role"] == "user"), None)
    return DialogueState(
        rejected_poi_ids=tuple(rejected_pois(row, names)),
        price_words=tuple(prices),
        price_ceiling=conventions.price_ceiling(texts),
        anchor=anchor,
        anchor_coords=CITY_LANDMARKS[city][anchor] if anchor else None,
        aspects=tuple(aspect_mentions(texts)),
        after_rejection=last_user is not None and last_user["action"] == REJECTION_ACTION,
    )
