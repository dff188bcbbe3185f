from __future__ import annotations

import pytest

from trace_dataset.constants import BOOL_ATTRIBUTES
from trace_dataset.schema import ATTRIBUTE_FEATURES
from trace_dataset.yelp.attributes import (
    CANONICAL_KEYS,
    YELP_BOOL_ATTRIBUTES,
    normalise_attributes,
    parse_literal,
    parse_price,
)
from trace_dataset.yelp.reader import canonical_city, split_categories


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("u'free'", "free"),
        ("'none'", "none"),
        ("None", None),
        ("True", True),
        ("False", False),
        ("2", 2),
        ("u\"'average'\"", "average"),
        ("free", "free"),  # not a literal: kept as a string
        ("  ", None),
        (True, True),
        (None, None),
        ("{'garage': False, 'street': True}", {"garage": False, "street": True}),
        ("{u'valet': False, u'lot': None}", {"valet": False, "lot": None}),
        ("{}", {}),
    ],
)
def test_parse_literal(raw, expected):
    assert parse_literal(raw) == expected


def test_parse_literal_never_evaluates_code(tmp_path):
    marker = tmp_path / "pwned"
    code = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    assert parse_literal(code) == code  # returned as text, not run
    assert not marker.exists()
    assert parse_literal("1 + 1") == "1 + 1"
    assert parse_literal("x" * 10_000) == "x" * 10_000


def test_canonical_keys_are_the_schema_keys():
    assert list(CANONICAL_KEYS) == list(ATTRIBUTE_FEATURES)
    assert set(YELP_BOOL_ATTRIBUTES) == set(BOOL_ATTRIBUTES)


def test_normalise_attributes_types_and_enumerations():
    raw = {
        "WiFi": "u'free'",
        "NoiseLevel": "'very_loud'",
        "Alcohol": "u'full_bar'",
        "RestaurantsAttire": "'dressy'",
        "OutdoorSeating": "True",
        "GoodForKids": "False",
        "DogsAllowed": "None",
        "RestaurantsReservations": "maybe",
        "BusinessParking": "{'garage': False, 'street': True, 'validated': None, 'lot': True, 'valet': False}",
        "Ambience": "{u'romantic': True, u'divey': False, u'casual': True, u'unknown_key': True}",
        "GoodForMeal": "None",
        "DietaryRestrictions": "{'vegan': True, 'gluten-free': True, 'halal': False}",
        "Smoking": "u'outdoor'",  # not part of the canonical dict
    }
    attrs = normalise_attributes(raw)
    assert list(attrs) == list(ATTRIBUTE_FEATURES)
    assert attrs["wifi"] == "free"
    assert attrs["noise_level"] == "very_loud"
    assert attrs["alcohol"] == "full_bar"
    assert attrs["attire"] == "dressy"
    assert attrs["outdoor_seating"] is True
    assert attrs["good_for_kids"] is False
    assert attrs["dogs_allowed"] is None
    assert attrs["reservations"] is None
    assert attrs["parking"] == ["street", "lot"]
    assert attrs["ambience"] == ["romantic", "casual"]  # constants.AMBIENCE_KEYS order, unknown keys dropped
    assert attrs["good_for_meal"] == []
    assert attrs["dietary"] == ["gluten-free", "vegan"]


def test_normalise_attributes_unknown_and_out_of_range():
    attrs = normalise_attributes(None)
    assert list(attrs) == list(ATTRIBUTE_FEATURES)
    assert all(v in (None, []) for v in attrs.values())
    assert normalise_attributes({"WiFi": "u'sometimes'", "NoiseLevel": "3"})["wifi"] is None
    assert normalise_attributes({"NoiseLevel": "3"})["noise_level"] is None


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"RestaurantsPriceRange2": "1"}, 1),
        ({"RestaurantsPriceRange2": "4"}, 4),
        ({"RestaurantsPriceRange2": "None"}, None),
        ({"RestaurantsPriceRange2": "5"}, None),
        ({"RestaurantsPriceRange2": 2}, 2),
        ({}, None),
        (None, None),
        ({"RestaurantsPriceRange2": "True"}, None),
    ],
)
def test_parse_price(raw, expected):
    assert parse_price(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Saint Louis", "Saint Louis"),
        ("St. Louis", "Saint Louis"),
        ("St Louis", "Saint Louis"),
        ("st. louis ", "Saint Louis"),
        ("new  orleans", "New Orleans"),
        ("Tampa Bay", "Tampa"),
        ("PHILADELPHIA", "Philadelphia"),
        ("Edmonton", "Edmonton"),
        (" Santa  Barbara ", "Santa Barbara"),
        (None, ""),
        ("", ""),
    ],
)
def test_canonical_city(raw, expected):
    assert canonical_city(raw) == expected


def test_split_categories():
    assert split_categories("Restaurants, Food,  Bubble Tea,Restaurants") == (
        "Restaurants",
        "Food",
        "Bubble Tea",
    )
    assert split_categories(None) == ()
    assert split_categories("") == ()
    assert split_categories(["Hotels", " Hotels & Travel "]) == ("Hotels", "Hotels & Travel")
