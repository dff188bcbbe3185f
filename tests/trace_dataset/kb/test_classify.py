from __future__ import annotations

import random

import pytest

from trace_dataset.kb.build import stratified_order
from trace_dataset.kb.classify import classify, rating_bucket, stratum_category
from trace_dataset.kb.reviews import IdHasher, review_quotas
from trace_dataset.yelp.reader import YelpBusiness


@pytest.mark.parametrize(
    ("categories", "expected"),
    [
        (["Hotels", "Restaurants", "Bars"], "hotel"),  # hotel beats its restaurant
        (["Bed & Breakfast", "Hotels & Travel"], "hotel"),
        (["Museums", "Cafes", "Restaurants"], "attraction"),  # museum with a cafe
        (["Restaurants", "Bars", "Nightlife", "Italian"], "restaurant"),  # restaurant with a bar
        (["Nightlife", "Cocktail Bars"], "attraction"),
        (["Coffee & Tea", "Food"], "restaurant"),
        (["Parks", "Active Life"], "attraction"),
        (["Hotels & Travel", "Car Rental"], None),  # parent category alone decides nothing
        (["Food", "Grocery"], None),
        (["Active Life", "Gyms"], None),
        (["Dentists", "Health & Medical"], None),
        ([], None),
    ],
)
def test_classify_rules(categories, expected):
    assert classify(categories) == expected


def test_stratum_category_and_rating_bucket():
    assert stratum_category(["Restaurants", "Bars", "Italian", "Pizza"], "restaurant") == "Italian"
    assert stratum_category(["Hotels & Travel", "Hotels"], "hotel") == "Hotels"
    assert stratum_category([], "hotel") == "hotel"
    assert [rating_bucket(s) for s in (1.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0)] == [
        "low",
        "low",
        "mid",
        "mid",
        "high",
        "high",
        "top",
    ]


def _biz(i: int, stars: float, category: str) -> YelpBusiness:
    return YelpBusiness(
        f"id{i:04d}",
        f"n{i}",
        "",
        "Reno",
        "Reno",
        "NV",
        "",
        39.5,
        -119.8,
        stars,
        10,
        1,
        ("Restaurants", category),
        {},
        None,
        None,
    )


def test_stratified_order_prefixes_are_proportional():
    # strata: 60% high/Italian, 30% mid/Thai, 10% low/Diners
    pop = (
        [_biz(i, 4.5, "Italian") for i in range(60)]
        + [_biz(100 + i, 3.0, "Thai") for i in range(30)]
        + [_biz(200 + i, 2.0, "Diners") for i in range(10)]
    )
    order = stratified_order(list(pop), "restaurant", random.Random(42))
    assert sorted(b.business_id for b in order) == sorted(b.business_id for b in pop)
    for n in (10, 20, 50):
        head = order[:n]
        share = {c: sum(b.categories[1] == c for b in head) / n for c in ("Italian", "Thai", "Diners")}
        assert abs(share["Italian"] - 0.6) <= 1.01 / n + 1e-9
        assert abs(share["Thai"] - 0.3) <= 1.01 / n + 1e-9
        assert abs(share["Diners"] - 0.1) <= 1.01 / n + 1e-9
    # deterministic in the seed and independent of input order
    again = stratified_order(list(reversed(pop)), "restaurant", random.Random(42))
    assert [b.business_id for b in again] == [b.business_id for b in order]
    other = stratified_order(list(pop), "restaurant", random.Random(7))
    assert [b.business_id for b in other] != [b.business_id for b in order]


def test_review_quotas_hit_the_target_exactly():
    hasher = IdHasher(42, "extra")
    available = {f"p{i}": n for i, n in enumerate([3, 5, 8, 14, 20, 30, 48, 48, 4, 16])}
    quotas, cap = review_quotas(available, 3, 100, hasher)
    assert sum(quotas.values()) == 100
    assert all(3 <= q <= available[b] for b, q in quotas.items())
    assert all(q in (min(available[b], cap), cap + 1) for b, q in quotas.items())
    # not enough reviews anywhere: everyone keeps everything
    quotas, _ = review_quotas({"a": 3, "b": 4}, 3, 100, hasher)
    assert quotas == {"a": 3, "b": 4}
    # too many POIs for the target: min_reviews still holds
    quotas, cap = review_quotas({"a": 10, "b": 10}, 3, 4, hasher)
    assert cap == 3 and quotas == {"a": 3, "b": 3}
