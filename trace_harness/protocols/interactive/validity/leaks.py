"""Leaks: traveller utterances that name or quote a target (iEvaLM-style simulators state the target and so
inflate recall; SimpleUserSim's fix keeps it out of what the simulator says).

A target is a POI of the traveller's open pool that satisfies every held preference (`World.targets`, the
acceptance check). An utterance leaks when it names a target (its name, lower-cased, as a whole-word
substring; names shorter than `MIN_NAME_CHARS` are not checked, as the LLM traveller's filter) or quotes one
(QUOTE_WORDS consecutive words of one of its reviews) that the system had not put forward: POIs the system
referenced in an earlier turn, and the one the utterance answers (accepts or rejects), are the system's
finds, which the traveller may name. Both travellers are counted the same way, from the run's logs.

The count is independent of the LLM traveller's own filter (llm.remove_names: fuzzy partial ratio against
the names only), so it also measures what that filter lets through.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from trace_harness.protocols.interactive.simulator.goal import TravelerGoal, World
from trace_harness.protocols.interactive.simulator.llm import MIN_NAME_CHARS

QUOTE_WORDS = 8  # consecutive review words that make an utterance a quote
_WORD_RE = re.compile(r"[a-z0-9']+")


def words(text: str) -> list[str]:
    return _WORD_RE.findall(text.lower())


def _grams(tokens: Sequence[str], n: int = QUOTE_WORDS) -> set[tuple[str, ...]]:
    return {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


class TargetIndex:
    """One traveller's targets: their names (as word sequences) and their reviews' word n-grams."""

    def __init__(
        self, world: World, goal: TravelerGoal, cache: dict[str, set[tuple[str, ...]]] | None = None
    ):
        kb = world.kb
        cache = {} if cache is None else cache  # business_id -> its reviews' n-grams, shared by dialogues
        self.targets = world.targets(goal, goal.pool("open"))
        self.names: dict[str, tuple[str, ...]] = {}
        self.grams: dict[str, set[tuple[str, ...]]] = {}
        for pid in self.targets:
            name = kb.pois[pid].name
            if len(name.strip()) >= MIN_NAME_CHARS:
                self.names[pid] = tuple(words(name))
            if pid not in cache:
                cache[pid] = set().union(*(_grams(words(r.text or "")) for r in kb.reviews_of(pid)))
            self.grams[pid] = cache[pid]

    def leaked(self, text: str, shown: Iterable[str]) -> list[str]:
        """The targets not in `shown` that `text` names or quotes."""
        tokens = words(text)
        joined = f" {' '.join(tokens)} "
        grams = _grams(tokens)
        hidden = [p for p in self.targets if p not in set(shown)]
        return [
            p
            for p in hidden
            if (p in self.names and self.names[p] and f" {' '.join(self.names[p])} " in joined)
            or not grams.isdisjoint(self.grams[p])
        ]


def dialogue_leaks(
    item: Mapping[str, Any], world: World, cache: dict[str, set[tuple[str, ...]]] | None = None
) -> list[dict[str, Any]]:
    """One entry per traveller utterance of a finished dialogue (record + traveller): its turn id and the
    targets it leaked."""
    goal = TravelerGoal.from_dict(item["traveler"]["goal"])
    index = TargetIndex(world, goal, cache)
    shown: set[str] = set()
    out = []
    for turn in item["record"]["turns"]:
        if turn["role"] == "system":
            shown.update(turn["referenced_poi_ids"])
            continue
        leaked = index.leaked(turn["text"], shown | set(turn["referenced_poi_ids"]))
        out.append({"turn_id": turn["turn_id"], "leaked": leaked})
    return out
