"""The sentence banks the synthetic reviews are composed from (data for `trace_dataset.yelp.review_text`):
per POI type and aspect, positive / negative / mixed sentences with `{slot}` fields the composer fills.

The banks are data: review_banks.json beside this module, one key per field of `ReviewBanks`, read on first
use by `banks()`; the synthetic bundle's manifest records its SHA-256 (`trace_dataset.datafiles`). Four tables
have keys JSON cannot hold and are written as rows (`datafiles.from_rows`): `value_pos` and `value_neg`
(`[price level, sentences]`), `restaurant_extras` (`[attribute, value, sentences]`, the key being the pair
(attribute, value) with a bool or str value) and `parking_sentences` (`[kind or null, sentences]`, null for
no parking).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from trace_dataset.datafiles import from_rows, read_table

REVIEW_BANKS_FILE = Path(__file__).with_name("review_banks.json")
_ROW_TABLES = ("value_pos", "value_neg", "restaurant_extras", "parking_sentences")


@dataclass(frozen=True)
class ReviewBanks:
    """Every bank's sentences (the keys of review_banks.json)."""

    # shared small banks
    companions: tuple[str, ...]
    occasions: tuple[str, ...]
    first_names: tuple[str, ...]
    # restaurants
    food_pos_adj: tuple[str, ...]
    food_neg_adj: tuple[str, ...]
    food_mix_adj: tuple[str, ...]
    food_pos: tuple[str, ...]
    food_neg: tuple[str, ...]
    food_mix: tuple[str, ...]
    service_pos: tuple[str, ...]
    service_neg: tuple[str, ...]
    service_mix: tuple[str, ...]
    decor: tuple[str, ...]
    noise_words: dict[str, tuple[str, ...]]
    ambience_words: dict[str, str]
    ambience_pos: tuple[str, ...]
    ambience_neg: tuple[str, ...]
    ambience_mix: tuple[str, ...]
    fits: tuple[str, ...]
    value_pos: dict[int, tuple[str, ...]]  # price level -> sentences
    value_neg: dict[int, tuple[str, ...]]
    value_mix: tuple[str, ...]
    restaurant_extras: dict[tuple[str, bool | str], tuple[str, ...]]  # (attribute, value) -> sentences
    diet_sentences: dict[str, str]
    meal_sentences: dict[str, str]
    # location and parking (all types)
    location_near: tuple[str, ...]
    location_far: tuple[str, ...]
    parking_sentences: dict[str | None, tuple[str, ...]]  # parking kind (None: no parking) -> sentences
    # hotels
    room_pos: tuple[str, ...]
    room_neg: tuple[str, ...]
    room_mix: tuple[str, ...]
    front_desk_pos: tuple[str, ...]
    front_desk_neg: tuple[str, ...]
    front_desk_mix: tuple[str, ...]
    hotel_amenities: dict[str, tuple[str, ...]]  # amenity -> (good, bad)
    hotel_wifi: dict[str, tuple[str, ...]]  # wifi value -> (good, bad)
    hotel_noise_pos: tuple[str, ...]
    hotel_noise_neg: tuple[str, ...]
    hotel_value_pos: tuple[str, ...]
    hotel_value_neg: tuple[str, ...]
    hotel_pets: tuple[str, ...]
    hotel_access: tuple[str, ...]
    # attractions
    exhibit_pos: tuple[str, ...]
    exhibit_neg: tuple[str, ...]
    exhibit_mix: tuple[str, ...]
    guide_pos: tuple[str, ...]
    guide_neg: tuple[str, ...]
    crowd_pos: tuple[str, ...]
    crowd_neg: tuple[str, ...]
    kids_pos: tuple[str, ...]
    kids_neg: tuple[str, ...]
    views: tuple[str, ...]
    view_spots: tuple[str, ...]
    admission_pos: tuple[str, ...]
    admission_neg: tuple[str, ...]
    night_pos: tuple[str, ...]
    night_neg: tuple[str, ...]
    night_vibe_pos: tuple[str, ...]
    night_vibe_neg: tuple[str, ...]
    # other businesses (not tourism; exercise the classifier)
    other_pos: tuple[str, ...]
    other_neg: tuple[str, ...]
    # openers, tips and closers
    visit_verbs: dict[str, tuple[str, ...]]  # POI type -> verb phrases
    meals: tuple[str, ...]
    day_parts: tuple[str, ...]
    tips: tuple[str, ...]
    tip_bodies: dict[str, tuple[str, ...]]  # POI type -> tips
    closers_pos: tuple[str, ...]
    closers_mix: tuple[str, ...]
    closers_neg: tuple[str, ...]


@functools.cache
def banks() -> ReviewBanks:
    """The sentence banks, read from review_banks.json once."""
    table = read_table(REVIEW_BANKS_FILE)
    for key in _ROW_TABLES:
        table[key] = from_rows(table[key])
    return ReviewBanks(**table)
