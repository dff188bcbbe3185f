"""Proximity graphs (App. F "ItineraryBaseline"): POIs of one city within a radius of each other.

- Nodes: all coordinate-valid POIs of the city in the knowledge base (every type).
- Edges: two POIs of different types within `radius_m` (haversine); same-type pairs get none.
- Neighbours of a POI: nearest first, ties by business_id.
- `ProximityGraphs`: one graph per city, built the first time a city is asked for and kept.

The Itinerary baseline walks it; Itinerary-LLM shows each candidate's nearest neighbours in its prompt.
"""

from __future__ import annotations

from baselines.toolkit.geo import has_coords, poi_distance_m
from trace_dataset.kb.store import KnowledgeBase

DEFAULT_RADIUS_M = 500.0  # App. F ItineraryBaseline: an edge between POIs within 500 m


class ProximityGraph:
    """POIs of one city within `radius_m` of each other, same-type pairs excluded; neighbours by distance."""

    def __init__(self, kb: KnowledgeBase, city: str, radius_m: float):
        pois = sorted(
            (p for p in kb.pois.values() if p.city == city and has_coords(p)), key=lambda p: p.business_id
        )
        self.neighbours: dict[str, list[tuple[float, str]]] = {p.business_id: [] for p in pois}
        # Sort by latitude and stop scanning once the latitude gap alone exceeds the radius.
        by_lat = sorted(pois, key=lambda p: (p.latitude, p.business_id))
        lat_gap = radius_m / 111_000.0  # metres per degree of latitude, rounded down (a safe bound)
        for i, a in enumerate(by_lat):
            for b in by_lat[i + 1 :]:
                if b.latitude - a.latitude > lat_gap:
                    break
                if a.poi_type == b.poi_type:
                    continue
                d = poi_distance_m(a, b)
                if d <= radius_m:
                    self.neighbours[a.business_id].append((d, b.business_id))
                    self.neighbours[b.business_id].append((d, a.business_id))
        for edges in self.neighbours.values():
            edges.sort()


class ProximityGraphs(dict):
    """The proximity graph of each city of `kb`, built the first time a city is asked for."""

    def __init__(self, kb: KnowledgeBase, radius_m: float):
        super().__init__()
        self.kb, self.radius_m = kb, radius_m

    def __missing__(self, city: str) -> ProximityGraph:
        graph = self[city] = ProximityGraph(self.kb, city, self.radius_m)
        return graph
