"""Itinerary (App. F): a proximity graph and a greedy nearest-neighbour tour around the recommendation.

- Ranking: exactly the TF-IDF ranking (baselines.toolkit.tfidf) of the usable candidates. The paper's Itinerary row
  has TF-IDF's accuracy to the third decimal (Tables 5, 26), so the tour changes what the system says, not
  the order of the pool; and a pool is one city x type cell, where a graph without same-type edges has no
  edges at all.
- Graph (`baselines.toolkit.proximity`): all coordinate-valid POIs of the dialogue's city in the knowledge base
  (every type), an edge between two POIs of different types within 500 m (haversine). Built once per city
  and kept.
- Tour: starts at the first coordinate-valid POI of the ranking; from the current stop it moves to the
  nearest graph neighbour (ties by business_id) whose type the tour has not visited yet, until no such
  neighbour remains or `max_stops` stops are reached (default 3: one per POI type). Rejected POIs are never
  visited. Only the start comes from the pool; the other stops are nearby POIs of other types.
- Responses: recommend turns recommend the start as the shared template does, then walk the tour with
  distance annotations (metres below 1 km, else km) and one quote per stop; compare turns add the distance
  between the two compared POIs. The tour's ids are in the prediction's meta["itinerary_poi_ids"].
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from baselines.base import DEFAULT_BATCH_SIZE, RankingPipeline
from baselines.toolkit.geo import has_coords, poi_distance_m
from baselines.toolkit.output import TurnOutput
from baselines.toolkit.proximity import DEFAULT_RADIUS_M, ProximityGraphs
from baselines.toolkit.responses import (
    Citations,
    Response,
    format_distance,
    poi_name,
    quote,
    recommend_text,
    rejection_ack,
    type_noun,
)
from baselines.toolkit.tfidf import TfidfScorer
from trace_dataset.kb.store import KnowledgeBase


class ItineraryBaseline(RankingPipeline):
    name: ClassVar[str] = "itinerary"
    config_keys: ClassVar[tuple[str, ...]] = ("radius_m", "max_stops")

    def __init__(
        self,
        kb: KnowledgeBase,
        batch_size: int = DEFAULT_BATCH_SIZE,
        radius_m: float = DEFAULT_RADIUS_M,
        max_stops: int = 3,
        **params: Any,
    ):
        super().__init__(kb, batch_size, **params)
        if radius_m <= 0 or max_stops < 1:
            raise ValueError(
                f"need radius_m > 0 and max_stops >= 1, got radius_m={radius_m}, max_stops={max_stops}"
            )
        self.radius_m = float(radius_m)
        self.max_stops = int(max_stops)
        self.tfidf = TfidfScorer(kb)
        self.graphs = ProximityGraphs(kb, self.radius_m)

    def _forward(self, inputs: list[dict[str, Any]]) -> list[TurnOutput]:
        self.tfidf.prefetch(inputs)  # the batch's turns scored together; `score` reads them
        return super()._forward(inputs)

    def score(self, inp: Mapping[str, Any]) -> dict[str, float]:
        return self.tfidf.scores(inp["query"], inp["candidates"])

    def tour(self, ranked: list[str], rejected: tuple[str, ...] = ()) -> list[tuple[str, float]]:
        """[(poi id, metres from the previous stop)] starting at the first coordinate-valid ranked POI."""
        start = next((p for p in ranked if has_coords(self.kb.pois[p])), None)
        if start is None:
            return []
        graph = self.graphs[self.kb.pois[start].city]
        stops = [(start, 0.0)]
        types = {self.kb.pois[start].poi_type}
        banned = set(rejected)
        while len(stops) < self.max_stops:
            current = stops[-1][0]
            nxt = next(
                (
                    (d, pid)
                    for d, pid in graph.neighbours.get(current, ())
                    if pid not in banned and self.kb.pois[pid].poi_type not in types
                ),
                None,
            )
            if nxt is None:
                break
            stops.append((nxt[1], nxt[0]))
            types.add(self.kb.pois[nxt[1]].poi_type)
        return stops

    def respond(self, inp: Mapping[str, Any], ranked: list[str]) -> Response:
        action = inp["action"]
        if action == "compare" and len(ranked) >= 2:
            a, b = self.kb.pois[ranked[0]], self.kb.pois[ranked[1]]
            base = super().respond(inp, ranked)
            if has_coords(a) and has_coords(b):
                gap = format_distance(poi_distance_m(a, b))
                return Response(f"{base.text} They are {gap} apart.", base.citations, base.poi_ids)
            return base
        if action != "recommend" or not ranked:
            return super().respond(inp, ranked)
        stops = self.tour(ranked, inp["state"].rejected_poi_ids)
        first = stops[0][0] if stops else ranked[0]
        citations = Citations()
        text = rejection_ack(self.kb, inp["state"]) + recommend_text(
            self.kb, self.evidence, first, inp["terms"], citations, n_quotes=1
        )
        legs = []
        for pid, metres in stops[1:]:
            ev = self.evidence.best(pid, inp["terms"])
            said = f", where a reviewer says {quote(ev, citations)}" if ev else ""
            kind = type_noun(self.kb.pois[pid].poi_type)
            legs.append(f"{format_distance(metres)} to {poi_name(self.kb, pid)} ({kind}){said}")
        if legs:
            text += (
                f" To make a day of it, from {poi_name(self.kb, first)} walk " + "; then ".join(legs) + "."
            )
        return Response(text, dict(citations.mapping), tuple(p for p, _ in stops) or (first,))

    def meta(self, inp: Mapping[str, Any], ranked: list[str]) -> dict[str, Any]:
        if inp["action"] != "recommend" or not ranked:
            return {}
        return {"itinerary_poi_ids": [p for p, _ in self.tour(ranked, inp["state"].rejected_poi_ids)]}
