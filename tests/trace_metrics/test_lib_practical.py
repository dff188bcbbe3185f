"""Practical-value functions: hand-computed distances, routes, budgets and diversity."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from trace_metrics.lib import practical as pr

KM_PER_DEG_LAT = 2 * math.pi * pr.EARTH_RADIUS_KM / 360  # 111.195 km along a meridian


def P(km_north: float, price: int | None = 2, poi_type: str = "restaurant") -> pr.PoiPoint:
    """A POI km_north km north of (30, -90)."""
    return pr.PoiPoint(30.0 + km_north / KM_PER_DEG_LAT, -90.0, price, poi_type)


def test_haversine_along_a_meridian():
    assert pr.haversine_km(P(0), P(5)) == pytest.approx(5.0, rel=1e-9)
    assert pr.haversine_km((0.0, 0.0), (0.0, 1.0)) == pytest.approx(KM_PER_DEG_LAT, rel=1e-9)


def test_spatial_coherence_hand_computed():
    pts = [P(0), P(1.5), P(3.5)]  # pairs: 1.5 km, 3.5 km, 2.0 km
    assert pr.spatial_coherence(pts, 2.0) == pytest.approx(2 / 3)  # 2.0 km counts (<=)
    assert pr.spatial_coherence(pts, 1.0) == 0.0 and pr.spatial_coherence(pts, 5.0) == 1.0
    assert pr.spatial_coherence([P(0)], 2.0) is None and pr.spatial_coherence([], 2.0) is None


def test_route_is_nearest_neighbour_from_the_first():
    # recommended order A(0), C(3), B(1): nearest neighbour walks A -> B -> C = 1 + 2 = 3 km (not 3 + 2)
    assert pr.route_length_km([P(0), P(3), P(1)]) == pytest.approx(3.0, rel=1e-9)
    # ties go to the earlier recommendation: from 0, both +1 and -1 are 1 km away; +1 first -> 1 + 2 = 3
    assert pr.route_length_km([P(0), P(1), P(-1)]) == pytest.approx(3.0, rel=1e-9)
    assert pr.route_length_km([P(7)]) == 0.0 and pr.route_length_km([]) is None


def test_price_ceiling_latest_whole_word_case_insensitive():
    assert pr.price_ceiling(["Something UPSCALE please", "well, actually affordable"]) == 2
    assert (
        pr.price_ceiling(["cheap, please", "ok, upscale is fine after all"]) == 4
    )  # the latest word, not the strictest
    assert pr.price_ceiling(["a mid-range place"]) == 3
    assert pr.price_ceiling(["budget-friendly"]) == 2  # \\b after "budget"
    assert pr.price_ceiling(["budgetary concerns", "cheaply"]) is None
    assert pr.price_ceiling([]) is None


def test_price_alignment_skips_unknown_prices():
    pts = [P(0, 1), P(0, 3), P(0, None), P(0, 2)]
    assert pr.price_alignment(pts, 2) == pytest.approx(2 / 3)
    assert pr.price_alignment(pts, None) is None
    assert pr.price_alignment([P(0, None)], 2) is None


def test_itinerary_diversity():
    assert pr.itinerary_diversity([P(0), P(1)]) == pytest.approx(1 / 3)
    assert pr.itinerary_diversity([P(0), P(1, poi_type="hotel"), P(2, poi_type="attraction")]) == 1.0
    assert pr.itinerary_diversity([]) is None


def test_score_counts_per_metric():
    out = pr.score([[P(0), P(1)], [P(0)], []], [2, None, 4], radius_km=1.5, return_per_item=True)
    assert out["spatial_coherence@1.5km"] == 1.0 and out["spatial_coherence@1.5km_n"] == 1
    assert (
        out["route_efficiency_km_n"] == 2
        and out["price_alignment_n"] == 1
        and out["itinerary_diversity_n"] == 2
    )
    assert out["n"] == 3 and out["route_efficiency_km_per_item"][2] is None
    assert pr.spatial_id(2.0) == "spatial_coherence@2km"
    with pytest.raises(ValueError, match="radius_km"):
        pr.score([], [], radius_km=0)


def test_to_point():
    assert pr.to_point({"latitude": 1, "longitude": 2, "price": None, "poi_type": "hotel"}) == pr.PoiPoint(
        1.0, 2.0, None, "hotel"
    )
    with pytest.raises(ValueError, match="lacks"):
        pr.to_point({"latitude": 1})


@given(st.lists(st.floats(-20, 20), min_size=2, max_size=6))
def test_coherence_monotone_in_radius(kms):
    pts = [P(k) for k in kms]
    values = [pr.spatial_coherence(pts, r) for r in pr.SPATIAL_SWEEP_KM]
    assert values == sorted(values) and all(0.0 <= v <= 1.0 for v in values)
    assert pr.route_length_km(pts) >= 0.0
