"""Yelp's `attributes` quirks -> the canonical typed attribute dict of `schema.ATTRIBUTE_FEATURES`.

Yelp stores every attribute value as the `repr` of a Python literal: `"u'free'"`, `"'none'"`, `"None"`,
`"True"`, `"2"`, `"{'garage': False, 'street': True}"`. We parse them with `ast.literal_eval` (literals
only, never `eval`) and map the handful of attributes Trace uses onto fixed keys, so every POI carries
the same keys (None / [] where Yelp says nothing or something outside the enumeration).
"""

from __future__ import annotations

import ast
import functools
from typing import Any

from trace_dataset.constants import (
    ALCOHOL_VALUES,
    AMBIENCE_KEYS,
    ATTIRE_VALUES,
    DIETARY_KEYS,
    MEAL_KEYS,
    NOISE_LEVELS,
    PARKING_KEYS,
    PRICE_LEVELS,
    WIFI_VALUES,
)

# literal_eval on a long string costs time and memory; no real attribute value is anywhere near this
MAX_LITERAL_CHARS = 4096

# canonical key -> Yelp attribute name
YELP_ENUM_ATTRIBUTES: dict[str, tuple[str, tuple[str, ...]]] = {
    "noise_level": ("NoiseLevel", NOISE_LEVELS),
    "wifi": ("WiFi", WIFI_VALUES),
    "alcohol": ("Alcohol", ALCOHOL_VALUES),
    "attire": ("RestaurantsAttire", ATTIRE_VALUES),
}
YELP_BOOL_ATTRIBUTES: dict[str, str] = {
    "outdoor_seating": "OutdoorSeating",
    "good_for_kids": "GoodForKids",
    "good_for_groups": "RestaurantsGoodForGroups",
    "reservations": "RestaurantsReservations",
    "takeout": "RestaurantsTakeOut",
    "delivery": "RestaurantsDelivery",
    "wheelchair_accessible": "WheelchairAccessible",
    "dogs_allowed": "DogsAllowed",
    "happy_hour": "HappyHour",
    "has_tv": "HasTV",
    "bike_parking": "BikeParking",
    "accepts_credit_cards": "BusinessAcceptsCreditCards",
}
YELP_DICT_ATTRIBUTES: dict[str, tuple[str, tuple[str, ...]]] = {
    "ambience": ("Ambience", AMBIENCE_KEYS),
    "parking": ("BusinessParking", PARKING_KEYS),
    "good_for_meal": ("GoodForMeal", MEAL_KEYS),
    "dietary": ("DietaryRestrictions", DIETARY_KEYS),
}
PRICE_ATTRIBUTE = "RestaurantsPriceRange2"

# the canonical key order: exactly schema.ATTRIBUTE_FEATURES
CANONICAL_KEYS: tuple[str, ...] = (*YELP_ENUM_ATTRIBUTES, *YELP_BOOL_ATTRIBUTES, *YELP_DICT_ATTRIBUTES)


def parse_literal(value: Any) -> Any:
    """One Yelp attribute value -> a typed Python value.

    Strings holding a Python literal become that literal (`"u'free'"` -> "free", `"None"` -> None,
    `"{'lot': True}"` -> {"lot": True}); a string that is no literal (`"free"`) stays a stripped string.
    Values that are already typed (JSON booleans, numbers, objects) pass through, dicts recursively.
    """
    if isinstance(value, dict):
        return {str(k): parse_literal(v) for k, v in value.items()}
    if not isinstance(value, str):
        return value
    parsed = _parse_string(value)
    return dict(parsed) if isinstance(parsed, dict) else parsed  # a copy: the cached value stays untouched


@functools.lru_cache(maxsize=8192)
def _parse_string(value: str) -> Any:
    """Cached: Yelp repeats the same few thousand attribute strings across 150k businesses."""
    text = value.strip()
    if not text or len(text) > MAX_LITERAL_CHARS:
        return text or None
    try:
        parsed = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text
    if isinstance(parsed, dict):
        return {str(k): parse_literal(v) for k, v in parsed.items()}
    if isinstance(parsed, str):
        # Yelp sometimes double-quotes: "u\"'free'\"" -> "'free'"; one more round for those
        inner = parsed.strip()
        if len(inner) >= 2 and inner[0] == inner[-1] and inner[0] in "'\"":
            return parse_literal(inner)
        return inner
    return parsed


def parse_attributes(raw: dict[str, Any] | None) -> dict[str, Any]:
    """All of Yelp's attributes, typed (unknown names kept)."""
    if not raw:
        return {}
    return {str(k): parse_literal(v) for k, v in raw.items()}


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        low = value.strip().lower()
        if low in ("true", "yes", "1"):
            return True
        if low in ("false", "no", "0"):
            return False
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    return None


def _as_enum(value: Any, allowed: tuple[str, ...]) -> str | None:
    if not isinstance(value, str):
        return None
    low = value.strip().lower().replace(" ", "_")
    return low if low in allowed else None


def _true_keys(value: Any, allowed: tuple[str, ...]) -> list[str]:
    if not isinstance(value, dict):
        return []
    return [k for k in allowed if _as_bool(value.get(k)) is True]


def normalise_attributes(raw: dict[str, Any] | None) -> dict[str, Any]:
    """Yelp's raw `attributes` object -> the canonical dict (all keys of schema.ATTRIBUTE_FEATURES)."""
    typed = parse_attributes(raw)
    out: dict[str, Any] = {}
    for key, (name, allowed) in YELP_ENUM_ATTRIBUTES.items():
        out[key] = _as_enum(typed.get(name), allowed)
    for key, name in YELP_BOOL_ATTRIBUTES.items():
        out[key] = _as_bool(typed.get(name))
    for key, (name, allowed) in YELP_DICT_ATTRIBUTES.items():
        out[key] = _true_keys(typed.get(name), allowed)
    return out


def parse_price(raw: dict[str, Any] | None) -> int | None:
    """`RestaurantsPriceRange2` ("1".."4", sometimes "None") -> 1..4 or None."""
    if not raw:
        return None
    value = parse_literal(raw.get(PRICE_ATTRIBUTE))
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return value if isinstance(value, int) and value in PRICE_LEVELS else None
