"""The synthetic bundle's catalogue: kinds of POI with their Yelp categories and details, and the word lists
names, addresses and city spellings are drawn from (data for `trace_dataset.yelp.synth`).

The catalogue is data: synth_catalogue.json beside this module, one key per field of `Catalogue` (a kind is an
object with the fields of `Kind`), read on first use by `catalogue()`; the synthetic bundle's manifest records
its SHA-256 (`trace_dataset.datafiles`). `star_weights` has float keys and is written as rows
(`[stars, weight]`, `datafiles.from_rows`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from trace_dataset.datafiles import from_rows, read_table

CATALOGUE_FILE = Path(__file__).with_name("synth_catalogue.json")
_KIND_TABLES = ("restaurant_kinds", "hotel_kinds", "attraction_kinds", "other_kinds")


@dataclass(frozen=True)
class Kind:
    name: str
    poi_type: str  # restaurant | hotel | attraction | other
    categories: tuple[str, ...]  # always present
    optional: tuple[str, ...]  # some of these are added
    items: tuple[str, ...]  # signature dishes / room features / exhibits
    nouns: tuple[str, ...]  # name nouns ("Trattoria", "Inn", "Museum of Art")
    price: tuple[int, ...]  # price levels it draws from
    cities: tuple[str, ...] = ()  # favoured in these cities (weight x3)


@dataclass(frozen=True)
class Catalogue:
    """The kinds of POI and the word lists (the keys of synth_catalogue.json)."""

    restaurant_kinds: tuple[Kind, ...]
    hotel_kinds: tuple[Kind, ...]
    attraction_kinds: tuple[Kind, ...]
    other_kinds: tuple[Kind, ...]  # not tourism: exercise the classifier
    name_words: tuple[str, ...]
    city_words: dict[str, tuple[str, ...]]  # canonical city -> words for names
    surnames: tuple[str, ...]
    streets: tuple[str, ...]
    street_types: tuple[str, ...]
    city_spellings: dict[
        str, tuple[tuple[str, float], ...]
    ]  # canonical city -> (spelling, weight): the quirks the reader must normalise
    postal_prefix: dict[str, str]
    other_cities: tuple[
        tuple[str, str, float, float], ...
    ]  # (city, state, lat, lon): outside the 8 Trace cities
    star_weights: dict[float, int]  # stars -> weight; mean 3.84 (Table 3: 3.8)
    days: tuple[str, ...]

    @property
    def kinds_by_type(self) -> dict[str, tuple[Kind, ...]]:
        """The tourism kinds by POI type (every type a Trace cell has)."""
        return {
            "restaurant": self.restaurant_kinds,
            "hotel": self.hotel_kinds,
            "attraction": self.attraction_kinds,
        }

    @property
    def all_kinds(self) -> tuple[Kind, ...]:
        return self.restaurant_kinds + self.hotel_kinds + self.attraction_kinds + self.other_kinds


@functools.cache
def catalogue() -> Catalogue:
    """The catalogue, read from synth_catalogue.json once."""
    table = read_table(CATALOGUE_FILE)
    for key in _KIND_TABLES:
        table[key] = tuple(Kind(**k) for k in table[key])
    table["star_weights"] = from_rows(table["star_weights"])
    return Catalogue(**table)
