"""A Trace turn as a Collab-REC query: the catalogue is the turn's usable pool, the filters are the user's stated
preferences so far, M(c) is checked on Trace's knowledge base (choices in docs/collab_rec.md).

    budget       the latest budget word (baselines.toolkit.state, PRICE_KEYWORDS) -> "at most $$"; met by a known price <= it
    interests    the pool's categories the user names (the Knowledge-Enhanced baseline's CategoryMatcher, the
                 latest turn naming any) -> met by a POI with one of them
    popularity   popularity words (trace_filters.json) -> "low" | "high"; met when the POI's review count falls in
                 that tertile of its city x type cell in the knowledge base
    walkability  a walking word or a named landmark -> met within 2 km (the Spatial Coherence radius) of the
                 landmark, else of the pool's centroid (sustainability proxy for the paper's walkability)
    crowding     quiet / less-crowded words -> "low"; met by a known noise level quiet or average, else by a review
                 count outside the top tertile (proxy for the paper's seasonality / crowd pressure)
    aqi          no data in Trace's knowledge base: never a filter

Catalogue names are the POI names (a duplicate gets its address added); each is shown with its categories,
price, stars and review count, because a POI name alone tells a model nothing (cities are world knowledge).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from baselines.collab_rec.agents import Task
from baselines.collab_rec.catalogue import LEVELS
from baselines.toolkit.constraints import CategoryMatcher, negated
from baselines.toolkit.geo import has_coords, haversine_m
from baselines.toolkit.responses import poi_name, type_noun
from baselines.toolkit.state import find_mentions
from baselines.toolkit.text import user_turns
from trace_dataset.kb.store import KnowledgeBase
from trace_dataset.records import Poi
from trace_metrics.lib.practical import DEFAULT_RADIUS_KM

LEXICON_FILE = Path(__file__).with_name("trace_filters.json")


@cache
def lexicon() -> dict[str, Any]:
    return json.loads(LEXICON_FILE.read_text(encoding="utf-8"))


def _latest(texts: Sequence[str], phrases_by_value: Mapping[str, Sequence[str]]) -> str | None:
    """The value whose phrase the user mentions last (not negated), or None."""
    phrase_value = {p: v for v, ps in phrases_by_value.items() for p in ps}
    for text in reversed(texts):
        found = [(pos, p) for pos, p in find_mentions(text, phrase_value) if not negated(text, pos)]
        if found:
            return phrase_value[max(found)[1]]
    return None


def _mentions(texts: Sequence[str], phrases: Sequence[str]) -> bool:
    return any(not negated(t, pos) for t in texts for pos, _ in find_mentions(t, phrases))


def popularity_levels(kb: KnowledgeBase, city: str, poi_type: str) -> dict[str, str]:
    """business_id -> "low" | "medium" | "high": the review-count tertile within the city x type cell."""
    cell = kb.pois_in(city, poi_type)
    counts = sorted(p.review_count for p in cell)
    n = len(counts)
    out = {}
    for p in cell:
        below = sum(1 for c in counts if c < p.review_count)
        out[p.business_id] = LEVELS[min(2, 3 * below // n)] if n else "medium"
    return out


def labels_for(kb: KnowledgeBase, ids: Sequence[str]) -> dict[str, str]:
    """business_id -> catalogue name (POI name; duplicates get their address, then a number)."""
    base = {pid: poi_name(kb, pid).replace("|", "/").strip() for pid in ids}
    counts: dict[str, int] = {}
    for name in base.values():
        counts[name] = counts.get(name, 0) + 1
    out: dict[str, str] = {}
    used: set[str] = set()
    for pid in ids:
        name = base[pid]
        if counts[name] > 1 and kb.pois[pid].address:
            name = f"{name} ({kb.pois[pid].address.replace('|', '/')})"
        label, i = name, 2
        while label in used:
            label, i = f"{name} #{i}", i + 1
        used.add(label)
        out[pid] = label
    return out


def catalogue_line(poi: Poi, label: str) -> str:
    price = "$" * poi.price if poi.price else "unknown"
    cats = ", ".join(poi.categories[:4]) or "no categories"
    return f"{label} | {cats}; price {price}; {poi.stars:.1f} stars; {poi.review_count} reviews"


@dataclass(frozen=True)
class TurnQuery:
    task: Task
    ids: dict[str, str]  # catalogue name -> business_id


def turn_filters(inp: Mapping[str, Any], categories: CategoryMatcher) -> tuple[dict[str, str], str | None]:
    """(filters of the turn as displayed strings, the walking anchor's name or None)."""
    texts = user_turns(inp["history"])
    state = inp["state"]
    lex = lexicon()
    filters: dict[str, str] = {}
    if state.price_ceiling is not None:
        filters["budget"] = "at most " + "$" * state.price_ceiling
    for text in reversed(texts):
        named = categories.find(text)
        if named:
            filters["interests"] = ", ".join(named)
            break
    level = _latest(texts, lex["popularity"])
    if level:
        filters["popularity"] = level
    if state.anchor or _mentions(texts, lex["walkability"]):
        filters["walkability"] = (
            f"within {DEFAULT_RADIUS_KM:g} km of {state.anchor or 'the centre of the candidates'}"
        )
    if _latest(texts, lex["crowding"]):
        filters["crowding"] = "low"
    return filters, state.anchor


def trace_task(
    kb: KnowledgeBase, inp: Mapping[str, Any], levels: Mapping[str, str], categories: CategoryMatcher
) -> TurnQuery:
    """The Collab-REC task for one recommend/compare turn (candidates: the pool minus rejected POIs)."""
    ids = list(inp["candidates"])
    labels = labels_for(kb, ids)
    filters, _ = turn_filters(inp, categories)
    state = inp["state"]
    pois = [kb.pois[pid] for pid in ids]
    located = [p for p in pois if has_coords(p)]
    if state.anchor_coords is not None:
        centre = state.anchor_coords
    elif located:
        centre = (
            sum(p.latitude for p in located) / len(located),
            sum(p.longitude for p in located) / len(located),
        )
    else:
        centre = None
    by_label = {labels[pid]: kb.pois[pid] for pid in ids}
    quiet = set(lexicon()["quiet_noise_levels"])

    def satisfies(item: str, key: str, value: Any) -> bool:
        poi = by_label.get(item)
        if poi is None:
            return False
        if key == "budget":
            return poi.price is not None and poi.price <= str(value).count("$")
        if key == "interests":
            wanted = {c.strip() for c in str(value).lower().split(",")}
            return any(c.lower() in wanted for c in poi.categories)
        if key == "popularity":
            return levels.get(poi.business_id, "medium") in [o.strip() for o in str(value).split(" or ")]
        if key == "walkability":
            if centre is None or not has_coords(poi):
                return False
            return haversine_m(poi.latitude, poi.longitude, *centre) <= DEFAULT_RADIUS_KM * 1000
        if key == "crowding":
            noise = poi.attributes.get("noise_level")
            return noise in quiet if noise else levels.get(poi.business_id, "medium") != "high"
        return False

    vocab = dict(lexicon()["vocabulary"].get(inp["poi_type"], {}))
    vocab.setdefault("item", type_noun(inp["poi_type"]))
    vocab.setdefault("items_short", type_noun(inp["poi_type"], plural=True))
    vocab.setdefault("item_title", vocab["item"].title())
    vocab.setdefault("items_title", vocab["items_short"].title())
    vocab["items"] = f"{vocab['items_short']} in {inp['city']}"
    task = Task(
        id=f"{inp['dialogue_id']}/{inp['turn_id']}",
        text=inp["query"] or "(no request yet)",
        filters=filters,
        catalogue=tuple(labels[pid] for pid in ids),
        satisfies=satisfies,
        domain="trace",
        vocabulary=vocab,
        catalogue_text="\n".join(catalogue_line(kb.pois[pid], labels[pid]) for pid in ids),
        default_role_filters={k: dict(v) for k, v in lexicon()["default_role_filters"].items()},
    )
    return TurnQuery(task, {label: pid for pid, label in labels.items()})
