"""Practical value of a dialogue's recommendations (§3, App. E Table 9, App. L Table 18).

Inputs are the dialogue's *recommended POIs* (`selection.recommended_pois`, `conventions.recommended_by_turn`:
the top-1 of every recommend turn and the top two of every compare turn, then the POIs whose reviews those
responses cite, distinct, in order of first appearance) looked up in the knowledge base as `PoiPoint`s.

- **Spatial coherence@r km**: share of unordered pairs of recommended POIs whose haversine distance is <= r
  (2 km; Table 18 sweeps 1-5 km). Fewer than two POIs: no pair, no value (the dialogue is not counted).
- **Route efficiency (km)**: length of the nearest-neighbour path that starts at the first recommended POI
  and repeatedly walks to the closest unvisited one (ties: earlier recommendation first). One POI: 0 km.
  Lower is better.
- **Price alignment**: the user's budget ceiling is set by the latest `constants.PRICE_KEYWORDS` word
  (whole-word, case-insensitive) in the user turns ("budget/cheap/affordable" -> 2, "moderate/mid-range" -> 3,
  "luxury/upscale" -> 4; `conventions.price_ceiling`, shared with the baselines' dialogue state); the value
  is the share of recommended POIs with price <= ceiling. Dialogues without
  a budget word are not counted (the paper excludes them), nor are POIs with unknown price (neither aligned
  nor misaligned); a dialogue whose recommended POIs all lack a price has no value.
- **Itinerary diversity**: distinct POI types among the recommended POIs / 3.

Dialogue-level values are averaged over the dialogues that have one; every result states that n.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from trace_dataset.constants import POI_TYPES
from trace_metrics.lib import conventions
from trace_metrics.lib._util import mean_or_none

EARTH_RADIUS_KM = 6371.0088  # mean Earth radius (IUGG)
DEFAULT_RADIUS_KM = 2.0
SPATIAL_SWEEP_KM: tuple[float, ...] = (1.0, 1.5, 2.0, 3.0, 5.0)  # App. L Table 18
PRACTICAL_IDS: tuple[str, ...] = (
    "spatial_coherence@2km",
    "route_efficiency_km",
    "price_alignment",
    "itinerary_diversity",
)


class PoiPoint(NamedTuple):
    """What the practical metrics read of a POI."""

    latitude: float
    longitude: float
    price: int | None
    poi_type: str


def to_point(value: Any) -> PoiPoint:
    """A PoiPoint from a PoiPoint, a `records.Poi`, or a mapping with latitude, longitude, price, poi_type."""
    if isinstance(value, PoiPoint):
        return value
    get = value.get if isinstance(value, Mapping) else (lambda k: getattr(value, k, None))
    lat, lon, poi_type = get("latitude"), get("longitude"), get("poi_type")
    if lat is None or lon is None or not poi_type:
        raise ValueError(f"POI {value!r} lacks latitude, longitude or poi_type")
    price = get("price")
    return PoiPoint(float(lat), float(lon), None if price is None else int(price), str(poi_type))


def spatial_id(radius_km: float) -> str:
    """Canonical id of spatial coherence at a radius: spatial_coherence@2km, spatial_coherence@1.5km."""
    return f"spatial_coherence@{radius_km:g}km"


def haversine_km(a: PoiPoint | tuple[float, float], b: PoiPoint | tuple[float, float]) -> float:
    lat1, lon1 = math.radians(a[0]), math.radians(a[1])
    lat2, lon2 = math.radians(b[0]), math.radians(b[1])
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return 2 * EARTH_RADIUS_KM * math.asin(min(1.0, math.sqrt(h)))


def pair_distances(points: Sequence[PoiPoint]) -> list[float]:
    """Haversine km of every unordered pair (i < j)."""
    return [haversine_km(points[i], points[j]) for i in range(len(points)) for j in range(i + 1, len(points))]


def spatial_coherence(points: Sequence[PoiPoint], radius_km: float = DEFAULT_RADIUS_KM) -> float | None:
    distances = pair_distances(points)
    if not distances:
        return None
    return sum(1 for d in distances if d <= radius_km) / len(distances)


def coherence_from_distances(distances: Sequence[float], radius_km: float) -> float | None:
    if not distances:
        return None
    return sum(1 for d in distances if d <= radius_km) / len(distances)


def route_length_km(points: Sequence[PoiPoint]) -> float | None:
    """Nearest-neighbour path length from the first POI; None for no POI."""
    if not points:
        return None
    unvisited = list(range(1, len(points)))
    current = 0
    total = 0.0
    while unvisited:
        best_j, best_d = 0, math.inf
        for idx, j in enumerate(unvisited):
            d = haversine_km(points[current], points[j])
            if d < best_d:
                best_j, best_d = idx, d
        current = unvisited.pop(best_j)
        total += best_d
    return total


def price_ceiling(user_texts: Iterable[str]) -> int | None:
    """The ceiling the user's latest budget word sets (`conventions.price_ceiling`); None without one."""
    return conventions.price_ceiling(user_texts)


def price_alignment(points: Sequence[PoiPoint], ceiling: int | None) -> float | None:
    if ceiling is None:
        return None
    priced = [p.price for p in points if p.price is not None]
    if not priced:
        return None
    return sum(1 for price in priced if price <= ceiling) / len(priced)


def itinerary_diversity(points: Sequence[PoiPoint]) -> float | None:
    if not points:
        return None
    return len({p.poi_type for p in points}) / len(POI_TYPES)


def dialogue_scores(
    points: Sequence[PoiPoint], ceiling: int | None, radius_km: float = DEFAULT_RADIUS_KM
) -> dict[str, float | None]:
    return {
        spatial_id(radius_km): spatial_coherence(points, radius_km),
        "route_efficiency_km": route_length_km(points),
        "price_alignment": price_alignment(points, ceiling),
        "itinerary_diversity": itinerary_diversity(points),
    }


def score(
    points: Sequence[Sequence[PoiPoint]],
    ceilings: Sequence[int | None],
    radius_km: float = DEFAULT_RADIUS_KM,
    return_per_item: bool = False,
) -> dict:
    """Means over dialogues that have each value, with `<id>_n` counts; `n` = dialogues given."""
    if len(points) != len(ceilings):
        raise ValueError(
            f"{len(points)} dialogues of POIs but {len(ceilings)} price ceilings; expected one per dialogue"
        )
    if not (isinstance(radius_km, (int, float)) and radius_km > 0):
        raise ValueError(f"radius_km must be > 0; got {radius_km!r}")
    ids = (spatial_id(radius_km), "route_efficiency_km", "price_alignment", "itinerary_diversity")
    per_item: dict[str, list[float | None]] = {m: [] for m in ids}
    for pts, ceiling in zip(points, ceilings, strict=True):
        s = dialogue_scores(pts, ceiling, radius_km)
        for m in ids:
            per_item[m].append(s[m])
    out: dict = {}
    for m in ids:
        out[m] = mean_or_none(per_item[m])
        out[f"{m}_n"] = sum(1 for v in per_item[m] if v is not None)
    out["n"] = len(points)
    if return_per_item:
        out.update({f"{m}_per_item": per_item[m] for m in ids})
    return out
