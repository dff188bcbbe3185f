"""Spatial (App. F): 0.7 x TF-IDF + 0.3 x (1 - d / d_max), d the haversine distance to a location anchor.

- TF-IDF: the scores of `baselines.toolkit.tfidf` (cosine), divided by the best score among the usable candidates,
  so both terms lie in [0, 1] (all zero when nothing matches). The paper blends raw scores without saying
  how they are scaled; scaling by the maximum keeps "no match" at zero.
- Anchor: the latest landmark of the dialogue's city the user named (`constants.CITY_LANDMARKS`, see
  baselines.toolkit.state), else the city centre (`constants.CITIES`); for a city outside the table, the centroid
  of the candidates.
- d_max: the largest distance from the anchor among the usable candidates; if it is 0, every candidate gets
  spatial score 1. A candidate without valid coordinates gets spatial score 0.
- Responses name each recommended POI's distance to the anchor ("850 m from Old City").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from baselines.base import DEFAULT_BATCH_SIZE, RankingPipeline
from baselines.toolkit.geo import has_coords, haversine_m
from baselines.toolkit.output import TurnOutput
from baselines.toolkit.responses import format_distance
from baselines.toolkit.tfidf import TfidfScorer
from trace_dataset.constants import CITIES
from trace_dataset.kb.store import KnowledgeBase

CITY_CENTRE = "city_centre"


class SpatialBaseline(RankingPipeline):
    name: ClassVar[str] = "spatial"
    config_keys: ClassVar[tuple[str, ...]] = ("text_weight", "spatial_weight")

    def __init__(
        self,
        kb: KnowledgeBase,
        batch_size: int = DEFAULT_BATCH_SIZE,
        text_weight: float = 0.7,
        spatial_weight: float = 0.3,
        **params: Any,
    ):
        super().__init__(kb, batch_size, **params)
        self.text_weight = float(text_weight)
        self.spatial_weight = float(spatial_weight)
        self.tfidf = TfidfScorer(kb)

    def anchor(self, inp: Mapping[str, Any]) -> tuple[str, tuple[float, float] | None]:
        """(label, (lat, lon)) of the anchor: a named landmark, the city centre, or the candidates' centroid."""
        state = inp["state"]
        if state.anchor_coords is not None:
            return state.anchor, state.anchor_coords
        city = CITIES.get(inp["city"])
        if city is not None:
            return CITY_CENTRE, (city.latitude, city.longitude)
        located = [self.kb.pois[p] for p in inp["candidates"] if has_coords(self.kb.pois[p])]
        if not located:
            return CITY_CENTRE, None
        return CITY_CENTRE, (
            sum(p.latitude for p in located) / len(located),
            sum(p.longitude for p in located) / len(located),
        )

    def distances(self, inp: Mapping[str, Any]) -> dict[str, float]:
        """Metres from the anchor for the coordinate-valid candidates."""
        _, coords = self.anchor(inp)
        if coords is None:
            return {}
        out = {}
        for pid in inp["candidates"]:
            poi = self.kb.pois[pid]
            if has_coords(poi):
                out[pid] = haversine_m(coords[0], coords[1], poi.latitude, poi.longitude)
        return out

    def _forward(self, inputs: list[dict[str, Any]]) -> list[TurnOutput]:
        self.tfidf.prefetch(inputs)  # the batch's turns scored together; `score` reads them
        return super()._forward(inputs)

    def score(self, inp: Mapping[str, Any]) -> dict[str, float]:
        candidates = inp["candidates"]
        text = self.tfidf.scores(inp["query"], candidates)
        top = max(text.values(), default=0.0)
        dist = self.distances(inp)
        d_max = max(dist.values(), default=0.0)
        scores = {}
        for pid in candidates:
            t = text[pid] / top if top > 0 else 0.0
            if pid not in dist:
                s = 0.0
            else:
                s = 1.0 - dist[pid] / d_max if d_max > 0 else 1.0
            scores[pid] = self.text_weight * t + self.spatial_weight * s
        return scores

    def notes(self, inp: Mapping[str, Any], ranked: list[str]) -> dict[str, str]:
        label, _ = self.anchor(inp)
        where = f"the centre of {inp['city']}" if label == CITY_CENTRE else label
        dist = self.distances({**inp, "candidates": ranked[:2]})
        return {pid: f"{format_distance(d)} from {where}" for pid, d in dist.items()}

    def meta(self, inp: Mapping[str, Any], ranked: list[str]) -> dict[str, Any]:
        return {"anchor": self.anchor(inp)[0]}
