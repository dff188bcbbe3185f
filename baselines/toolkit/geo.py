"""Distances for the Spatial and Itinerary baselines (haversine, metres)."""

from __future__ import annotations

import math

from trace_dataset.records import Poi

EARTH_RADIUS_M = 6_371_008.8  # mean Earth radius (IUGG)


def haversine_m(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Great-circle distance in metres."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_M * math.asin(min(1.0, math.sqrt(a)))


def has_coords(poi: Poi) -> bool:
    """Coordinate-valid: finite, in range, and not the (0, 0) placeholder of broken records."""
    lat, lon = poi.latitude, poi.longitude
    return (
        math.isfinite(lat)
        and math.isfinite(lon)
        and -90 <= lat <= 90
        and -180 <= lon <= 180
        and not (lat == 0 and lon == 0)
    )


def poi_distance_m(a: Poi, b: Poi) -> float:
    return haversine_m(a.latitude, a.longitude, b.latitude, b.longitude)
