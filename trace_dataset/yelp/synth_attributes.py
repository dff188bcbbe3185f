"""The Yelp-style attributes and opening hours of a synthetic business (used by `trace_dataset.yelp.synth`):
stringified Python literals as Yelp writes them, with its quirks ("None" strings, None inside dicts, sparse
records), and the canonical facts they encode, which the review text draws on.

`draw_attributes` draws every value from the RNG it is given in a fixed order (the common attributes, then
those of bars and restaurants, of restaurants only, of hotels, then whether the record is sparse): the
bundle's bytes depend on that order, so a new draw, or a reordered one, changes the bundle.
"""

from __future__ import annotations

import random
from typing import Any

from trace_dataset.yelp.synth_catalogue import Kind, catalogue


def yelp_literal(value: Any, rng_u: bool) -> str:
    """How Yelp writes a value: the repr of a Python literal; strings sometimes with a u prefix."""
    if isinstance(value, str):
        return ("u" if rng_u else "") + repr(value)
    if isinstance(value, dict):
        inner = ", ".join(f"{'u' if rng_u else ''}{k!r}: {v!r}" for k, v in value.items())
        return "{" + inner + "}"
    return repr(value)


def _bool(rng: random.Random, p_true: float) -> bool:
    return rng.random() < p_true


class _Drawn:
    """The attributes of one business as they are drawn: Yelp's strings (`raw`) and the facts they encode.
    `u`: an older record, whose strings carry a u'...' prefix."""

    def __init__(self, rng: random.Random, u: bool):
        self.rng, self.u = rng, u
        self.raw: dict[str, str] = {}
        self.facts: dict[str, Any] = {}

    def put(self, yelp: str, canonical: str | None, value: Any) -> None:
        if self.rng.random() < 0.03:  # Yelp sometimes stores the string "None"
            self.raw[yelp] = "None"
            return
        self.raw[yelp] = yelp_literal(value, self.u)
        if canonical is not None:
            self.facts[canonical] = value


def draw_attributes(
    rng: random.Random, kind: Kind, price: int, city: str
) -> tuple[dict[str, str] | None, dict[str, Any]]:
    """Yelp-style stringified attributes and the canonical facts they encode (for the review text)."""
    t = kind.poi_type
    drawn = _Drawn(rng, rng.random() < 0.45)
    if t == "attraction" and rng.random() < 0.25:
        return None, {}
    if t == "other" and rng.random() < 0.4:
        return None, {}
    put = drawn.put
    put("BusinessAcceptsCreditCards", "accepts_credit_cards", _bool(rng, 0.95))
    if t in ("restaurant", "hotel") or (t == "attraction" and rng.random() < 0.6):
        drawn.raw["RestaurantsPriceRange2"] = "None" if rng.random() < 0.01 else str(price)
    _parking(drawn, price)
    put("WheelchairAccessible", "wheelchair_accessible", _bool(rng, 0.85))
    put(
        "GoodForKids",
        "good_for_kids",
        _bool(rng, 0.75 if t != "attraction" or not kind.name.startswith("nightlife") else 0.1),
    )
    put("DogsAllowed", "dogs_allowed", _bool(rng, 0.3 if t != "attraction" else 0.2))
    put("BikeParking", "bike_parking", _bool(rng, 0.7))
    if t in ("restaurant", "hotel") or kind.name.startswith("nightlife"):
        put(
            "WiFi",
            "wifi",
            rng.choices(("free", "no", "paid"), weights=(6, 3, 0.4 if t != "hotel" else 1.5), k=1)[0],
        )
    if t == "restaurant" or kind.name.startswith("nightlife"):
        _bar_and_dining(drawn, kind, price)
    if t == "restaurant":
        _restaurant(drawn, kind, price)
    if t == "hotel":
        drawn.facts["_amenities"] = _hotel_amenities(rng, kind)
    raw = drawn.raw
    keep = rng.random()
    if keep < 0.1:  # a sparse record, as many real ones are
        raw = dict(list(raw.items())[: max(1, len(raw) // 3)])
    return raw, drawn.facts


def _parking(drawn: _Drawn, price: int) -> None:
    rng = drawn.rng
    parking: dict[str, bool | None] = {
        k: rng.random() < p
        for k, p in (
            ("garage", 0.2),
            ("street", 0.45),
            ("validated", 0.05),
            ("lot", 0.45),
            ("valet", 0.08 + 0.2 * (price >= 3)),
        )
    }
    if rng.random() < 0.15:
        parking[rng.choice(list(parking))] = None  # Yelp's None inside the dict
    drawn.put("BusinessParking", None, parking)
    drawn.facts["parking"] = [k for k, v in parking.items() if v]


def _bar_and_dining(drawn: _Drawn, kind: Kind, price: int) -> None:
    """Noise, seating, TV, happy hour, alcohol and ambience: restaurants and nightlife."""
    rng, put = drawn.rng, drawn.put
    restaurant = kind.poi_type == "restaurant"
    noise = rng.choices(
        ("quiet", "average", "loud", "very_loud"),
        weights=(2, 6, 2, 0.6) if restaurant else (0.3, 3, 4, 2),
        k=1,
    )[0]
    put("NoiseLevel", "noise_level", noise)
    put("OutdoorSeating", "outdoor_seating", _bool(rng, 0.5))
    put("RestaurantsGoodForGroups", "good_for_groups", _bool(rng, 0.8))
    put("HasTV", "has_tv", _bool(rng, 0.6 if "Bars" in kind.categories + kind.optional else 0.4))
    put("HappyHour", "happy_hour", _bool(rng, 0.4))
    alcohol = rng.choices(
        ("none", "beer_and_wine", "full_bar"),
        weights=(3, 1.5, 3) if restaurant else (0, 1, 5),
        k=1,
    )[0]
    if kind.name in ("cafe", "vegan", "cheesesteak", "sonoran") and rng.random() < 0.7:
        alcohol = "none"
    put("Alcohol", "alcohol", alcohol)
    ambience_keys = (
        "romantic",
        "intimate",
        "classy",
        "hipster",
        "divey",
        "touristy",
        "trendy",
        "upscale",
        "casual",
    )
    amb: dict[str, bool | None] = {k: False for k in ambience_keys}
    if price >= 3:
        amb[rng.choice(("classy", "upscale", "romantic", "intimate"))] = True
    else:
        amb[rng.choice(("casual", "casual", "trendy", "hipster", "divey", "touristy"))] = True
    if rng.random() < 0.3:
        amb[rng.choice(ambience_keys)] = True
    if rng.random() < 0.1:
        amb[rng.choice(ambience_keys)] = None
    put("Ambience", None, amb)
    drawn.facts["ambience"] = [k for k in ambience_keys if amb[k]]


def _restaurant(drawn: _Drawn, kind: Kind, price: int) -> None:
    """Reservations, takeout, delivery, attire, meals and dietary options."""
    rng, put = drawn.rng, drawn.put
    put("RestaurantsReservations", "reservations", _bool(rng, 0.25 + 0.2 * price))
    put("RestaurantsTakeOut", "takeout", _bool(rng, 0.9 if price <= 2 else 0.5))
    put("RestaurantsDelivery", "delivery", _bool(rng, 0.55 if price <= 2 else 0.2))
    put(
        "RestaurantsAttire",
        None,
        "casual" if price <= 2 or rng.random() < 0.6 else rng.choice(("dressy", "formal")),
    )
    meal_keys = ("dessert", "latenight", "lunch", "dinner", "brunch", "breakfast")
    meals = {k: False for k in meal_keys}
    if kind.name in ("breakfast", "cafe"):
        meals["breakfast"] = meals["brunch"] = True
    else:
        meals["dinner"] = True
        meals["lunch"] = rng.random() < 0.7
    meals["latenight"] = rng.random() < 0.12
    meals["dessert"] = rng.random() < 0.15
    if rng.random() < 0.85:
        put("GoodForMeal", None, meals)
        drawn.facts["good_for_meal"] = [k for k in meal_keys if meals[k]]
    if kind.name in ("vegan", "indian", "mediterranean", "thai") or rng.random() < 0.08:
        diet = {
            k: False
            for k in ("dairy-free", "gluten-free", "vegan", "kosher", "halal", "soy-free", "vegetarian")
        }
        if kind.name == "vegan":
            diet["vegan"] = diet["vegetarian"] = diet["dairy-free"] = True
        else:
            diet[rng.choice(("gluten-free", "vegan", "vegetarian", "halal"))] = True
        put("DietaryRestrictions", None, diet)
        drawn.facts["dietary"] = [k for k, v in diet.items() if v]


def _hotel_amenities(rng: random.Random, kind: Kind) -> list[str]:
    """A hotel's amenities (facts only: Yelp has no attribute for them; the reviews mention them)."""
    return [
        a
        for a, p in (
            ("pool", 0.55 if kind.name != "hostel" else 0.0),
            ("gym", 0.5),
            ("breakfast", 0.5),
            ("shuttle", 0.25),
            ("spa", 0.5 if kind.name == "resort" else 0.05),
            ("bar", 0.35),
        )
        if rng.random() < p
    ]


def draw_hours(rng: random.Random, kind: Kind) -> dict[str, str] | None:
    if rng.random() < 0.15:
        return None
    days = catalogue().days
    if kind.poi_type == "hotel":
        return {d: "0:0-0:0" for d in days}
    open_h = (
        rng.choice((6, 7, 9, 10, 11, 16, 17))
        if kind.poi_type != "attraction"
        else rng.choice((8, 9, 10, 17, 19))
    )
    close_h = min(open_h + rng.choice((6, 8, 10, 11)), 26)
    open_days = list(days) if rng.random() < 0.6 else [d for d in days if d != "Monday"]
    return {d: f"{open_h}:0-{close_h % 24}:{rng.choice(('0', '30'))}" for d in open_days}
