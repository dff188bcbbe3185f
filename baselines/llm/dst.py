"""DST (App. F "DSTBaseline"): LLM state tracking, attribute filters, TF-IDF ranking, LLM response.

1. Extraction: for every user turn of the history the LLM returns a delta (`DELTA_SCHEMA`: price ceiling,
   cuisine likes/avoids, ambience, noise, features, location, rejected/accepted place names) from that turn
   and the recommender's turn before it (`prompts/dst.txt`, extract_*). A turn's request depends on those two
   texts only, so every row of a dialogue shares it (sent once, then served by the response cache) and a row
   needs nothing from another row: the pipeline stays session-isolated. A delta that stays invalid after the
   layer's repairs counts as empty (`meta.dst_delta_error`, `counts.dst_extraction_failed` on the turn where
   it is the latest message).
2. Merge (`merge`): the latest price ceiling, noise and location replace earlier ones; likes, avoids, ambience,
   features, rejected and accepted accumulate (lower-cased, whitespace collapsed, first-mention order); a
   cuisine moves between likes and avoids, a place between rejected and accepted, with the latest mention.
3. Filters (`filter_candidates`), in order, on the usable candidates (the pool minus rejected POIs; the full
   pool on the open set, App. Q): rejected names (a pool POI whose name contains the stated name or is
   contained in it, case-insensitive, at least 3 characters); price (`price <= ceiling`); cuisine avoids and
   likes (the stated words matched to the cell's categories with the Knowledge-Enhanced baseline's
   `CategoryMatcher`; likes that match no category filter nothing and are listed in `unmatched`); noise
   compatibility (`NOISE_COMPATIBLE`); features (read with Knowledge-Enhanced's `text_mentions` and checked
   with its `check_constraint`). Missing attributes: a POI the knowledge base says nothing about passes that
   filter (unknown is not a violation). A filter that would remove every remaining candidate is skipped and
   listed in `relaxed`.
4. Ranking: the survivors by TF-IDF (the TF-IDF baseline's scorer, query = all user turns), then the filtered
   ones by TF-IDF, so the ranking still covers the pool.
5. Response: the LLM writes it from the state, the cards of the top candidate (two on compare turns) and the
   history (respond_*); free text, citations from the [Rn] labels of those cards.
`meta.dst_state` is the merged state after the turn, `meta.dst_delta` the latest message's delta,
`meta.dst_filter` what the filters did.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any, ClassVar

from baselines.base import add_count, rank_by_score
from baselines.llm.common import DEFAULT_PREFILTER_K, LLMPipeline, failure_text, messages
from baselines.llm.prompting import LabelMap, candidate_labels, format_history, price_text
from baselines.toolkit.constraints import (
    AttributeConstraint,
    CategoryMatcher,
    check_constraint,
    text_mentions,
)
from baselines.toolkit.output import TurnOutput
from trace_dataset.constants import NOISE_LEVELS, RECOMMENDATION_ACTIONS
from trace_llm import LLMOutputError

if TYPE_CHECKING:
    from trace_dataset.kb.store import KnowledgeBase
    from trace_dataset.records import Poi

LIST_SLOTS: tuple[str, ...] = (
    "cuisine_likes",
    "cuisine_avoids",
    "ambience",
    "features",
    "rejected",
    "accepted",
)
# bounded lists of short strings: a constrained model cannot ramble past max_new_tokens inside one slot
_STRINGS = {"type": "array", "items": {"type": "string", "maxLength": 80}, "maxItems": 10}
DELTA_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        # anyOf and enums rather than a type list and bounds: llama-cpp-python's grammar converter drops both
        "price_max": {"anyOf": [{"type": "integer", "enum": [1, 2, 3, 4]}, {"type": "null"}]},
        "cuisine_likes": _STRINGS,
        "cuisine_avoids": _STRINGS,
        "ambience": _STRINGS,
        "noise": {"anyOf": [{"type": "string", "enum": list(NOISE_LEVELS)}, {"type": "null"}]},
        "features": _STRINGS,
        "location": {"anyOf": [{"type": "string", "maxLength": 80}, {"type": "null"}]},
        "rejected": _STRINGS,
        "accepted": _STRINGS,
    },
    "additionalProperties": False,  # a key of its own means the model did not follow the slots: repaired, not ignored
}
# Every slot required (an empty list or null when the turn says nothing of it): a constrained model writes the
# whole delta, and a reply missing a slot is repaired rather than read as "no change".
DELTA_SCHEMA["required"] = list(DELTA_SCHEMA["properties"])
# Noise the traveler asks for -> noise levels of a compatible POI.
NOISE_COMPATIBLE: dict[str, frozenset[str]] = {
    "quiet": frozenset({"quiet", "average"}),
    "average": frozenset({"quiet", "average", "loud"}),
    "loud": frozenset({"average", "loud", "very_loud"}),
    "very_loud": frozenset({"loud", "very_loud"}),
}
FILTERS: tuple[str, ...] = ("rejected", "price", "cuisine_avoids", "cuisine_likes", "noise", "features")
MIN_NAME_CHARS = 3


def _norm(text: Any) -> str:
    return " ".join(str(text).lower().split())


@dataclass(frozen=True)
class DSTState:
    """The cumulative TourismDialogueState (App. F)."""

    price_max: int | None = None
    cuisine_likes: tuple[str, ...] = ()
    cuisine_avoids: tuple[str, ...] = ()
    ambience: tuple[str, ...] = ()
    noise: str | None = None
    features: tuple[str, ...] = ()
    location: str | None = None
    rejected: tuple[str, ...] = ()
    accepted: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            f.name: (list(v) if isinstance(v := getattr(self, f.name), tuple) else v) for f in fields(self)
        }

    def describe(self) -> str:
        """The state as prompt lines (stated slots only)."""
        parts = []
        if self.price_max is not None:
            parts.append(f"price: at most {price_text(self.price_max)}")
        for key, label in (
            ("cuisine_likes", "wants"),
            ("cuisine_avoids", "avoids"),
            ("ambience", "ambience"),
            ("features", "needs"),
            ("rejected", "rejected"),
            ("accepted", "liked"),
        ):
            if getattr(self, key):
                parts.append(f"{label}: {', '.join(getattr(self, key))}")
        if self.noise:
            parts.append(f"noise: {self.noise.replace('_', ' ')}")
        if self.location:
            parts.append(f"location: {self.location}")
        return "\n".join(parts) if parts else "(nothing stated yet)"


def _add(items: tuple[str, ...], new: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys([*items, *new]))


def _drop(items: tuple[str, ...], gone: Iterable[str]) -> tuple[str, ...]:
    gone = set(gone)
    return tuple(x for x in items if x not in gone)


def merge(state: DSTState, delta: Mapping[str, Any]) -> DSTState:
    """The state after one delta (see the module docstring for the rules)."""
    lists = {k: [s for s in map(_norm, delta.get(k) or ()) if s] for k in LIST_SLOTS}
    changes: dict[str, Any] = {}
    if delta.get("price_max") is not None:
        changes["price_max"] = int(delta["price_max"])
    if delta.get("noise") is not None:
        changes["noise"] = str(delta["noise"])
    if delta.get("location") and _norm(delta["location"]):
        changes["location"] = " ".join(str(delta["location"]).split())
    for key, other in (("cuisine_likes", "cuisine_avoids"), ("rejected", "accepted")):
        for mine, theirs in ((key, other), (other, key)):
            changes[theirs] = _drop(changes.get(theirs, getattr(state, theirs)), lists[mine])
        for mine in (key, other):
            changes[mine] = _add(changes[mine], lists[mine])
    for key in ("ambience", "features"):
        changes[key] = _add(getattr(state, key), lists[key])
    return replace(state, **changes)


def names_matching(names: Iterable[str], candidates: Sequence[str], kb: KnowledgeBase) -> list[str]:
    """Candidates whose name contains a stated name or is contained in it (case-insensitive)."""
    wanted = [n for n in names if len(n) >= MIN_NAME_CHARS]
    out = []
    for pid in candidates:
        name = _norm(kb.pois[pid].name)
        if any(n in name or (len(name) >= MIN_NAME_CHARS and name in n) for n in wanted):
            out.append(pid)
    return out


def _feature_constraints(features: Iterable[str]) -> list[AttributeConstraint]:
    found: dict[str, AttributeConstraint] = {}
    for feature in features:
        for _, constraint in text_mentions(feature):
            found[constraint.key] = constraint
    return list(found.values())


def filter_candidates(
    kb: KnowledgeBase, candidates: Sequence[str], state: DSTState, categories: CategoryMatcher
) -> tuple[list[str], dict[str, Any]]:
    """(survivors in candidate order, {"relaxed": [...], "unmatched": [...]}); see the module docstring."""
    avoid = {c for text in state.cuisine_avoids for c in categories.find(text)}
    like = {c for text in state.cuisine_likes for c in categories.find(text)}
    unmatched = [t for t in state.cuisine_likes if not categories.find(t)]
    features = _feature_constraints(state.features)
    rejected = set(names_matching(state.rejected, candidates, kb))

    def cats(poi: Poi) -> set[str]:
        return {c.lower() for c in poi.categories}

    def keep(step: str, poi: Poi) -> bool:
        if step == "rejected":
            return poi.business_id not in rejected
        if step == "price":
            return state.price_max is None or poi.price is None or poi.price <= state.price_max
        if step == "cuisine_avoids":
            return not (avoid & cats(poi))
        if step == "cuisine_likes":
            return not like or bool(like & cats(poi))
        if step == "noise":
            level = (poi.attributes or {}).get("noise_level")
            return (
                state.noise is None
                or level is None
                or level in NOISE_COMPATIBLE.get(state.noise, NOISE_LEVELS)
            )
        return all(check_constraint(c, poi) is not False for c in features)

    current = list(candidates)
    relaxed = []
    for step in FILTERS:
        survivors = [pid for pid in current if keep(step, kb.pois[pid])]
        if survivors or not current:
            current = survivors
        else:
            relaxed.append(step)
    return current, {"kept": len(current), "relaxed": relaxed, "unmatched": unmatched}


class DSTBaseline(LLMPipeline):
    name: ClassVar[str] = "dst"
    uses_prefilter: ClassVar[bool] = False

    @classmethod
    def budget_schemas(cls, prefilter_k: int = DEFAULT_PREFILTER_K) -> dict[str, dict[str, Any]]:
        """DST asks for one thing under a constraint: a user turn's state delta (its responses are free text)."""
        return {"state delta": DELTA_SCHEMA}

    def categories(self, city: str, poi_type: str) -> CategoryMatcher:
        """The category names of a knowledge-base cell, built on first use and kept (KB-derived only)."""
        cache = self.__dict__.setdefault("_categories", {})
        key = (city, poi_type)
        if key not in cache:
            cache[key] = CategoryMatcher({c for p in self.kb.pois_in(city, poi_type) for c in p.categories})
        return cache[key]

    def extraction(self, history: Sequence[Mapping[str, Any]], i: int) -> list[dict[str, str]]:
        """The request for user turn `history[i]`: that turn and the recommender's turn before it."""
        previous = next((t["text"] for t in reversed(history[:i]) if t["role"] == "system"), "(nothing yet)")
        user = self.prompt.render(
            "extract_user",
            previous=" ".join(str(previous).split()),
            message=" ".join(str(history[i]["text"]).split()),
        )
        return messages(self.prompt.render("extract_system"), user)

    def _forward(self, inputs: list[dict[str, Any]]) -> list[TurnOutput]:
        per_input, deltas = self._deltas(inputs)  # 1. every user turn's delta, each distinct request once
        convs, prepared = [], []
        for inp, keys in zip(inputs, per_input, strict=True):  # 2-4. state, filters, ranking
            state, meta = self._state([deltas[key] for key in keys])
            conv, ranked, labels, tie_scores = self._request(inp, state, meta)
            convs.append(conv)
            prepared.append((ranked, labels, meta, tie_scores))
        texts = self.llm.generate_batch(convs, self.settings)  # 5. the responses in one batch
        outputs = []
        for inp, text, (ranked, labels, meta, tie_scores) in zip(inputs, texts, prepared, strict=True):
            if not text.strip():
                add_count(meta, "empty_response")
            outputs.append(self.output(inp, ranked, text.strip(), labels, meta, tie_scores))
        return outputs

    def _deltas(self, inputs: Sequence[Mapping[str, Any]]) -> tuple[list[list[str]], dict[str, Any]]:
        """Each input's request keys (one per user turn, in order) and every distinct request's delta (a dict,
        or the LLMOutputError it ended with)."""
        requests: dict[str, list[dict[str, str]]] = {}
        per_input: list[list[str]] = []
        for inp in inputs:
            keys = []
            for i, turn in enumerate(inp["history"]):
                if turn["role"] == "user":
                    conv = self.extraction(inp["history"], i)
                    key = repr(conv)
                    requests.setdefault(key, conv)
                    keys.append(key)
            per_input.append(keys)
        order = list(requests)
        answers = self.llm.generate_json_batch(
            [requests[k] for k in order], DELTA_SCHEMA, self.settings, max_repairs=self.json_repairs
        )
        return per_input, dict(zip(order, answers, strict=True))

    def _state(self, deltas: Sequence[Any]) -> tuple[DSTState, dict[str, Any]]:
        """The state merged from a turn's deltas in order, and its meta (the latest delta, or why it failed)."""
        meta: dict[str, Any] = {}
        state = DSTState()
        for j, delta in enumerate(deltas):
            latest = j == len(deltas) - 1
            if isinstance(delta, LLMOutputError):
                if latest:
                    meta["dst_delta"] = None
                    meta["dst_delta_error"] = failure_text(delta)
                    add_count(meta, "dst_extraction_failed")
                continue
            state = merge(state, delta)
            if latest:
                meta["dst_delta"] = delta
        return state, meta

    def _request(
        self, inp: Mapping[str, Any], state: DSTState, meta: dict[str, Any]
    ) -> tuple[list[dict[str, str]], list[str], LabelMap, dict[str, Any]]:
        """The filtered ranking (with what it sorts by) and the response request for one turn; the filter's
        notes go to `meta`."""
        cands = inp["candidates"]
        survivors, notes = filter_candidates(
            self.kb, cands, state, self.categories(inp["city"], inp["poi_type"])
        )
        scores = self.tfidf.scores(inp["query"], cands)
        gone = [p for p in cands if p not in set(survivors)]
        order_ids = rank_by_score(survivors, scores) + rank_by_score(gone, scores)
        kept = set(survivors)
        tie_scores = {p: (p in kept, scores[p]) for p in cands}  # what order_ids sorts by
        meta.update(dst_state=state.to_dict(), dst_filter=notes)
        action = inp["action"]
        ranked_turn = action in RECOMMENDATION_ACTIONS
        shown = order_ids[: 2 if action == "compare" else 1] if ranked_turn else []
        labels = LabelMap()
        cards = self.cards.render(candidate_labels(shown), labels)
        instruction = (
            "no_candidates"
            if ranked_turn and not shown
            else "recommend"
            if action == "compare" and len(shown) < 2
            else action
        )
        fields_ = {
            "city": inp["city"],
            "poi_type": inp["poi_type"],
            "state": state.describe(),
            "cards": cards,
            "history": format_history(inp["history"]),
            "instruction": self.prompt.render(instruction),
        }
        conv = messages(
            self.prompt.render("respond_system", **fields_), self.prompt.render("respond_user", **fields_)
        )
        return conv, (order_ids if ranked_turn else []), labels, tie_scores
