"""The predicate "POI satisfies constraint": attributes first, review evidence where they are silent."""

from __future__ import annotations

import pytest

from trace_dataset.generate.preferences import Constraint, evidence_mentions, satisfies, violation_is_explicit
from trace_dataset.records import Poi


def poi(**kw) -> Poi:
    base = dict(
        business_id="b1",
        name="Test Place",
        address="",
        city="Nashville",
        state="TN",
        latitude=36.1610,
        longitude=-86.7770,
        categories=("Restaurants", "Italian"),
        stars=4.0,
        review_count=10,
        price=2,
        attributes={},
        poi_type="restaurant",
        review_ids=(),
    )
    base.update(kw)
    return Poi(**base)


def keys(text: str) -> set[str]:
    return {k for k, _, _ in evidence_mentions(text)}


def test_evidence_mentions_and_negation():
    text = "The patio was lovely. It was not quiet at all. Great for kids, and wi-fi worked."
    found = keys(text)
    assert {"amenity:outdoor_seating", "amenity:good_for_kids", "amenity:wifi"} <= found
    assert "noise:quiet" not in found  # "not quiet" is negated
    assert "noise:quiet" in keys("A quiet, calm room.")
    assert "noise:quiet" not in keys("Wasn't quiet, sadly.")
    for _key, s, e in evidence_mentions(text):
        assert text[s:e].lower() in ("patio", "kids", "wi-fi")


def test_boolean_attribute_beats_evidence():
    c = Constraint("amenity", "outdoor_seating")
    assert satisfies(poi(attributes={"outdoor_seating": True}), c, set())
    assert not satisfies(poi(attributes={"outdoor_seating": False}), c, {"amenity:outdoor_seating"})
    assert satisfies(poi(attributes={}), c, {"amenity:outdoor_seating"})  # unknown -> evidence decides
    assert not satisfies(poi(attributes={}), c, set())
    assert violation_is_explicit(poi(attributes={"outdoor_seating": False}), c)
    assert not violation_is_explicit(poi(attributes={}), c)


@pytest.mark.parametrize(
    "level,quiet,lively",
    [
        ("quiet", True, False),
        ("loud", False, True),
        ("very_loud", False, True),
        ("average", None, None),
        (None, None, None),
    ],
)
def test_noise(level, quiet, lively):
    p = poi(attributes={"noise_level": level})
    for value, expected in (("quiet", quiet), ("lively", lively)):
        c = Constraint("noise", value)
        if expected is None:  # attribute silent: evidence decides
            assert satisfies(p, c, {c.key}) and not satisfies(p, c, set())
        else:
            assert satisfies(p, c, {c.key}) == expected


def test_wifi_bar_parking_lists():
    assert satisfies(poi(attributes={"wifi": "free"}), Constraint("amenity", "wifi"), set())
    assert not satisfies(poi(attributes={"wifi": "paid"}), Constraint("amenity", "wifi"), {"amenity:wifi"})
    assert satisfies(poi(attributes={"alcohol": "full_bar"}), Constraint("amenity", "full_bar"), set())
    assert not satisfies(
        poi(attributes={"alcohol": "none"}), Constraint("amenity", "full_bar"), {"amenity:full_bar"}
    )
    assert satisfies(poi(attributes={"parking": ["lot"]}), Constraint("amenity", "parking"), set())
    assert satisfies(poi(attributes={"ambience": ["romantic"]}), Constraint("ambience", "romantic"), set())
    assert satisfies(poi(attributes={"dietary": ["vegan"]}), Constraint("dietary", "vegan"), set())
    assert satisfies(poi(attributes={"good_for_meal": ["brunch"]}), Constraint("meal", "brunch"), set())
    assert satisfies(poi(attributes={}), Constraint("meal", "brunch"), {"meal:brunch"})


def test_price_rating_category_location():
    assert satisfies(poi(price=2), Constraint("price", "cheap"), set())
    assert not satisfies(poi(price=3), Constraint("price", "cheap"), {"price:value"})
    assert satisfies(poi(price=3), Constraint("price", "moderate"), set())
    assert satisfies(poi(price=None), Constraint("price", "cheap"), {"price:value"})
    assert not satisfies(poi(price=None), Constraint("price", "cheap"), {"price:value", "price:expensive"})
    assert satisfies(poi(stars=4.5), Constraint("rating", "4.5"), set())
    assert not satisfies(poi(stars=4.0), Constraint("rating", "4.5"), set())
    assert satisfies(poi(), Constraint("category", "italian"), set())
    assert not satisfies(poi(), Constraint("category", "Thai"), set())
    near = Constraint("location", "Lower Broadway", 1.5)
    assert satisfies(poi(), near, set())
    assert not satisfies(poi(latitude=36.25, longitude=-86.70), near, set())
    with pytest.raises(ValueError, match="unknown landmark"):
        satisfies(poi(), Constraint("location", "Times Square", 3.0), set())


def test_aspect_is_evidence_only_and_keys_round_trip():
    c = Constraint("aspect", "pool")
    assert satisfies(poi(poi_type="hotel"), c, {"aspect:pool"})
    assert not satisfies(poi(poi_type="hotel", attributes={"outdoor_seating": True}), c, set())
    for k in ("aspect:pool", "location:the Gulch@3", "price:cheap", "category:Bed & Breakfast"):
        assert Constraint.parse(k).key == k
    with pytest.raises(ValueError, match="bad constraint key"):
        Constraint.parse("colour:blue")
