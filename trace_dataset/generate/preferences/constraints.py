"""Concrete user preferences and the one predicate "POI satisfies constraint".

A constraint is what a simulated user states ("somewhere quiet", "near the French Quarter", "cheap").
Whether a POI satisfies it is decided from its structured attributes first and, where the attribute is
unknown, from review evidence: a non-negated mention of the aspect in one of the POI's knowledge-base
reviews. Gold POIs, rejections and `acceptable_alternative_poi_ids` are all computed with this predicate,
so the alternatives a dialogue lists are derived, never guessed.

Rules per kind (documented in docs/generator.md):
- category: the value is one of the POI's Yelp categories.
- price: the POI's price level is known and <= the ceiling of the word (constants.PRICE_KEYWORDS); with an
  unknown price level, review evidence of good value and none of expense.
- rating: stars >= the value.
- location: great-circle distance to the named landmark (constants.CITY_LANDMARKS) <= radius_km.
- noise: quiet <-> noise_level "quiet", lively <-> "loud"/"very_loud"; the other known levels violate;
  unknown or "average" -> review evidence.
- amenity: boolean attribute True satisfies, False violates, unknown -> review evidence; wifi "free"
  satisfies, "no"/"paid" violate; full_bar <-> alcohol "full_bar"; parking <-> any parking key.
- ambience / dietary / meal: the key is in the attribute list, else review evidence.
- aspect: review evidence only (hotel pools, gyms, views, exhibits ...: nothing structured says so).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from trace_dataset.constants import CITY_LANDMARKS, NEGATION_WINDOW, PRICE_KEYWORDS, REVIEW_NEGATORS

KINDS: tuple[str, ...] = (
    "category",
    "price",
    "rating",
    "location",
    "noise",
    "amenity",
    "ambience",
    "dietary",
    "meal",
    "aspect",
)

# Kinds a user may revise (the Expert tier's conflicting constraint replaces an earlier one of these).
REVISABLE_KINDS: tuple[str, ...] = ("category", "location", "noise", "ambience")

PRICE_WORDS_BY_CEILING: dict[int, tuple[str, ...]] = {
    2: tuple(w for w, c in PRICE_KEYWORDS.items() if c == 2),
    3: tuple(w for w, c in PRICE_KEYWORDS.items() if c == 3),
}


# Review-evidence lexicon: constraint key -> phrases (lower case, matched on word boundaries).
EVIDENCE_PHRASES: dict[str, tuple[str, ...]] = {
    "noise:quiet": ("quiet", "peaceful", "calm", "tranquil", "relaxing", "low-key", "serene"),
    "noise:lively": ("lively", "buzzing", "energetic", "vibrant", "bustling", "festive"),
    "ambience:romantic": ("romantic", "date night", "candlelit", "candle lit"),
    "ambience:intimate": ("intimate", "cozy", "cosy"),
    "ambience:classy": ("classy", "elegant", "refined", "sophisticated"),
    "ambience:trendy": ("trendy", "hip", "stylish", "chic"),
    "ambience:casual": ("casual", "laid-back", "laid back", "relaxed", "no-frills"),
    "ambience:hipster": ("hipster", "quirky", "artsy"),
    "ambience:upscale": ("upscale", "luxurious", "fancy", "high-end", "luxury"),
    "amenity:outdoor_seating": (
        "patio",
        "outdoor seating",
        "terrace",
        "outside seating",
        "sidewalk tables",
        "courtyard",
    ),
    "amenity:good_for_kids": (
        "kids",
        "children",
        "family-friendly",
        "family friendly",
        "kid-friendly",
        "kid friendly",
    ),
    "amenity:good_for_groups": ("large group", "big group", "our group", "groups", "large party"),
    "amenity:reservations": ("reservation", "reservations", "booked a table", "book ahead"),
    "amenity:takeout": ("takeout", "take-out", "carryout", "carry out"),
    "amenity:wheelchair_accessible": ("wheelchair", "wheelchair accessible", "handicap accessible", "ramp"),
    "amenity:dogs_allowed": (
        "dog-friendly",
        "dog friendly",
        "pet-friendly",
        "pet friendly",
        "our dog",
        "dogs",
        "pets",
    ),
    "amenity:happy_hour": ("happy hour",),
    "amenity:wifi": ("wifi", "wi-fi", "internet"),
    "amenity:parking": ("parking", "valet", "garage", "parking lot"),
    "amenity:full_bar": ("cocktail", "cocktails", "full bar", "bartender", "bartenders"),
    "dietary:vegan": ("vegan",),
    "dietary:vegetarian": ("vegetarian", "veggie"),
    "dietary:gluten-free": ("gluten-free", "gluten free", "celiac"),
    "meal:brunch": ("brunch",),
    "meal:breakfast": ("breakfast",),
    "meal:latenight": ("late night", "late-night", "open late", "after midnight"),
    "meal:dessert": ("dessert", "desserts"),
    "price:value": (
        "cheap",
        "affordable",
        "inexpensive",
        "reasonably priced",
        "reasonable prices",
        "great value",
        "good value",
        "budget",
        "bargain",
    ),
    "price:expensive": ("expensive", "pricey", "overpriced", "splurge"),
    "aspect:pool": ("pool", "swimming pool", "hot tub"),
    "aspect:gym": ("gym", "fitness center", "fitness centre", "workout room"),
    "aspect:breakfast": ("breakfast",),
    "aspect:shuttle": ("shuttle",),
    "aspect:views": ("view", "views", "scenery", "skyline"),
    "aspect:clean": ("clean", "spotless"),
    "aspect:spacious": ("spacious", "roomy"),
    "aspect:staff": ("friendly staff", "helpful staff", "staff were friendly", "staff was friendly"),
    "aspect:history": ("history", "historic", "historical"),
    "aspect:exhibits": ("exhibit", "exhibits", "exhibition", "collection", "gallery", "galleries"),
    "aspect:guided_tours": ("guided tour", "guided tours", "tour guide", "our guide", "docent"),
    "aspect:live_music": ("live music", "live band", "concert", "concerts"),
    "aspect:trails": ("trail", "trails", "hike", "hiking"),
    "aspect:shade": ("shade", "shaded", "shady"),
}

# Constraint values offered per POI type (the universe a persona's wants are drawn from).
TYPE_VALUES: dict[str, dict[str, tuple[str, ...]]] = {
    "restaurant": {
        "price": ("cheap", "affordable", "budget", "moderate", "mid-range"),
        "noise": ("quiet", "lively"),
        "amenity": (
            "outdoor_seating",
            "good_for_kids",
            "good_for_groups",
            "reservations",
            "takeout",
            "wheelchair_accessible",
            "dogs_allowed",
            "happy_hour",
            "wifi",
            "parking",
            "full_bar",
        ),
        "ambience": ("romantic", "intimate", "classy", "trendy", "casual", "hipster"),
        "dietary": ("vegan", "vegetarian", "gluten-free"),
        "meal": ("brunch", "breakfast", "latenight", "dessert"),
        "aspect": (),
        "rating": ("4.0", "4.5"),
    },
    "hotel": {
        "price": ("cheap", "affordable", "budget", "moderate", "mid-range"),
        "noise": ("quiet", "lively"),
        "amenity": ("wifi", "parking", "dogs_allowed", "wheelchair_accessible", "good_for_kids"),
        "ambience": ("classy", "trendy", "casual"),
        "dietary": (),
        "meal": (),
        "aspect": ("pool", "gym", "breakfast", "shuttle", "views", "clean", "spacious", "staff"),
        "rating": ("4.0", "4.5"),
    },
    "attraction": {
        "price": ("cheap", "affordable", "budget", "moderate"),
        "noise": ("quiet", "lively"),
        "amenity": ("good_for_kids", "wheelchair_accessible", "dogs_allowed", "parking"),
        "ambience": ("casual",),
        "dietary": (),
        "meal": (),
        "aspect": ("views", "history", "exhibits", "guided_tours", "live_music", "trails", "shade"),
        "rating": ("4.0", "4.5"),
    },
}

LOCATION_RADII_KM: tuple[float, ...] = (1.5, 3.0, 5.0)

# Categories too broad to be a preference ("Restaurants", "Hotels & Travel" ...).
GENERIC_CATEGORIES = frozenset(
    c.lower()
    for c in (
        "Restaurants",
        "Food",
        "Hotels & Travel",
        "Hotels",
        "Event Planning & Services",
        "Arts & Entertainment",
        "Active Life",
        "Nightlife",
        "Local Flavor",
        "Shopping",
        "Public Services & Government",
        "Travel Services",
        "Professional Services",
        "Local Services",
        "Tours",
        "Landmarks & Historical Buildings",
        "Venues & Event Spaces",
    )  # keep "Tours" etc. out: too wide inside a type cell
)


@dataclass(frozen=True, order=True)
class Constraint:
    """One preference of the traveller's goal: kind + value (+ radius for a location anchor).

    Systems never see it; what a system reads from the user's words is `baselines.toolkit.constraints.
    AttributeConstraint`, checked against structured fields only."""

    kind: str
    value: str
    radius_km: float = 0.0

    @cached_property
    def key(self) -> str:
        if self.kind == "location":
            return f"location:{self.value}@{self.radius_km:g}"
        return f"{self.kind}:{self.value}"

    @cached_property
    def slot(self) -> str:
        """Two constraints of one slot cannot both be active: a later one revises the earlier."""
        if self.kind in ("amenity", "dietary", "meal", "aspect"):
            return f"{self.kind}:{self.value}"
        return self.kind

    @property
    def ceiling(self) -> int | None:
        return PRICE_KEYWORDS[self.value] if self.kind == "price" else None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": self.kind, "value": self.value}
        if self.kind == "location":
            d["radius_km"] = self.radius_km
        return d

    @classmethod
    def parse(cls, key: str) -> Constraint:
        kind, _, value = key.partition(":")
        if kind not in KINDS or not value:
            raise ValueError(f"bad constraint key {key!r}; expected KIND:VALUE with KIND one of {KINDS}")
        if kind == "location":
            name, _, radius = value.rpartition("@")
            return cls(kind, name, float(radius))
        return cls(kind, value)


# ---------------------------------------------------------------------------------------------------
# Review evidence
# ---------------------------------------------------------------------------------------------------
_TOKEN_RE = re.compile(r"\w+(?:[-'\u2019]\w+)*")
_PHRASES: dict[tuple[str, ...], tuple[str, ...]] = {}
for _key, _phrases in EVIDENCE_PHRASES.items():
    for _p in _phrases:
        _t = tuple(_TOKEN_RE.findall(_p))
        _PHRASES[_t] = _PHRASES.get(_t, ()) + (_key,)
_MAX_PHRASE = max(len(t) for t in _PHRASES)
_FIRST_WORDS = frozenset(t[0] for t in _PHRASES)


def _is_negator(word: str) -> bool:
    return word in REVIEW_NEGATORS or word.endswith("n't") or word.endswith("n\u2019t")


def tokenize(text: str) -> tuple[list[re.Match], list[str]]:
    """Word matches of `text` and their lower-cased words (offsets stay those of `text`)."""
    matches = list(_TOKEN_RE.finditer(text))
    return matches, [m.group().lower() for m in matches]


def evidence_mentions(
    text: str, tokens: tuple[list[re.Match], list[str]] | None = None
) -> list[tuple[str, int, int]]:
    """(constraint key, start, end) of every non-negated evidence phrase in a review text.

    Words are matched case-insensitively on word boundaries (hyphenated words are one word); a mention is
    negated when one of the NEGATION_WINDOW words before it is a negator ("not", "no", "never", "...n't").
    """
    matches, words = tokens if tokens is not None else tokenize(text)
    n_words = len(words)
    out: list[tuple[str, int, int]] = []
    for i in [i for i, w in enumerate(words) if w in _FIRST_WORDS]:
        for n in range(1, min(_MAX_PHRASE, n_words - i) + 1):
            keys = _PHRASES.get(tuple(words[i : i + n]))
            if keys is None:
                continue
            if any(_is_negator(w) for w in words[max(0, i - NEGATION_WINDOW) : i]):
                continue
            start, end = matches[i].start(), matches[i + n - 1].end()
            out.extend((key, start, end) for key in keys)
    return out


# ---------------------------------------------------------------------------------------------------
# The predicate
# ---------------------------------------------------------------------------------------------------
def haversine_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    r = 6371.0088
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * r * math.asin(min(1.0, math.sqrt(a)))


def landmark_distance_km(poi: Any, landmark: str) -> float:
    try:
        lat, lon = CITY_LANDMARKS[poi.city][landmark]
    except KeyError:
        raise ValueError(
            f"unknown landmark {landmark!r} for {poi.city!r}; expected one of "
            f"{tuple(CITY_LANDMARKS.get(poi.city, {}))}"
        ) from None
    return haversine_km(poi.latitude, poi.longitude, lat, lon)


def _attribute_verdict(poi: Any, c: Constraint) -> bool | None:
    """True/False when the structured attributes decide; None when they are silent."""
    attrs = poi.attributes or {}
    if c.kind == "noise":
        level = attrs.get("noise_level")
        if level is None or level == "average":
            return None
        return level == "quiet" if c.value == "quiet" else level in ("loud", "very_loud")
    if c.kind == "amenity":
        if c.value == "wifi":
            wifi = attrs.get("wifi")
            return None if wifi is None else wifi == "free"
        if c.value == "full_bar":
            alcohol = attrs.get("alcohol")
            return None if alcohol is None else alcohol == "full_bar"
        if c.value == "parking":
            return True if attrs.get("parking") else None
        value = attrs.get(c.value)
        return None if value is None else bool(value)
    if c.kind in ("ambience", "dietary", "meal"):
        field = {"ambience": "ambience", "dietary": "dietary", "meal": "good_for_meal"}[c.kind]
        return True if c.value in (attrs.get(field) or ()) else None
    return None


def satisfies(poi: Any, c: Constraint, evidence: dict[str, Any] | frozenset[str] | set[str]) -> bool:
    """Whether `poi` satisfies `c`; `evidence` holds the POI's review-evidence keys (see evidence_mentions)."""
    if c.kind == "category":
        return c.value.lower() in (cat.lower() for cat in poi.categories)
    if c.kind == "price":
        if poi.price is not None:
            return poi.price <= PRICE_KEYWORDS[c.value]
        return "price:value" in evidence and "price:expensive" not in evidence
    if c.kind == "rating":
        return poi.stars >= float(c.value)
    if c.kind == "location":
        return landmark_distance_km(poi, c.value) <= c.radius_km
    if c.kind == "aspect":
        return c.key in evidence
    if c.kind in ("noise", "amenity", "ambience", "dietary", "meal"):
        verdict = _attribute_verdict(poi, c)
        return c.key in evidence if verdict is None else verdict
    raise ValueError(f"unknown constraint kind {c.kind!r}; expected one of {KINDS}")


def satisfies_all(poi: Any, constraints: list[Constraint] | tuple[Constraint, ...], evidence) -> bool:
    return all(satisfies(poi, c, evidence) for c in constraints)


def violation_is_explicit(poi: Any, c: Constraint) -> bool:
    """Whether a violation is stated by the data (an attribute says no, a known price is too high, a known
    distance is too far) rather than by missing review evidence; the system phrases the two differently."""
    if c.kind in ("category", "price", "rating", "location"):
        return c.kind != "price" or poi.price is not None
    return _attribute_verdict(poi, c) is False
