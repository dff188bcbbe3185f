"""The built-in synthetic Yelp bundle: same files, fields, types and quirks as the real dump; not Yelp data.

`write_synthetic_bundle(out_dir, seed=42, scale=1.0)` writes `yelp_academic_dataset_business.json`,
`yelp_academic_dataset_review.json` and `TRACE_SYNTHETIC.json` (the manifest that marks the bundle as
synthetic, so that everything built from it says `source: synthetic`).

What it holds, per Trace city (around the real centre of each of the 8 cities):
- restaurants (cuisines with named dishes), hotels (with room features and amenities) and attractions
  (museums, parks, gardens, tours, nightlife, zoos, theatres, landmarks, casinos), placed in dense
  neighbourhood clusters (many POIs within 500 m of each other) plus a spread over ~12 km;
- stars (mean about 3.8), Yelp `review_count`, `RestaurantsPriceRange2`, and the attributes Trace reads,
  written as Yelp writes them: stringified Python literals (`"u'free'"`, `"'average'"`, `"None"`,
  `"{'garage': False, 'lot': True}"`), comma-separated `categories`, `hours` null or a dict, `/` escaped as
  `\\/`, city spelling variants ("St. Louis", "St Louis", "new  orleans");
- some businesses that are not tourism (dentists, car rental, ...) and some in other cities, so the classifier
  and the city filter have work to do; some POIs with fewer than 3 reviews in the file.

Scale: at `scale=1.0` each city x type cell has 135 POIs (so `kb build --per-cell 100` has spares) and about
70k reviews in total. Below 1 the number of POIs per cell shrinks linearly (tests use 0.1); above 1 both the
POIs per cell and the reviews per POI grow with sqrt(scale), so the review file grows linearly: scale 17 writes
about 1M reviews (the benchmark's bundle). Same seed and scale -> byte-identical files.

Parts: `synth_catalogue` (kinds and word lists, data), `synth_layout` (where POIs sit), `synth_attributes`
(Yelp-style attributes and hours), `review_text` + `review_banks` (the reviews).
"""

from __future__ import annotations

import json
import logging
import math
import os
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from trace_dataset.constants import (
    CITIES,
    CITY_NAMES,
    SEED,
    YELP_BUSINESS_FILE,
    YELP_REVIEW_FILE,
)
from trace_dataset.datafiles import table_hashes
from trace_dataset.io import atomic_open, check_output_dir, write_json
from trace_dataset.yelp.reader import SYNTHETIC_MANIFEST
from trace_dataset.yelp.review_banks import REVIEW_BANKS_FILE, banks
from trace_dataset.yelp.review_text import PoiFacts, compose_review
from trace_dataset.yelp.synth_attributes import draw_attributes, draw_hours
from trace_dataset.yelp.synth_catalogue import CATALOGUE_FILE, Kind, catalogue
from trace_dataset.yelp.synth_layout import CityLayout

log = logging.getLogger(__name__)

SYNTH_VERSION = "1"
BASE_POIS_PER_CELL = 135
REVIEW_MEDIAN = 13.0  # median of the lognormal part of reviews per POI (plus 3), at scale <= 1
REVIEW_SIGMA = 0.75
FEW_REVIEWS_SHARE = 0.06  # POIs with 0-2 reviews in the file (filtered out by --min-reviews 3)
NON_TOURISM_SHARE = 0.12  # of businesses per city
OTHER_CITY_SHARE = 0.10  # of all businesses
BLOCK = 256  # businesses whose reviews are interleaved (shuffled) together in the review file
ID_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
DATE_START = datetime(2008, 1, 1)
DATE_SPAN_S = int((datetime(2022, 1, 19) - DATE_START).total_seconds())


# ---------------------------------------------------------------------------------------------------
# Scale
# ---------------------------------------------------------------------------------------------------
def pois_per_cell(scale: float) -> int:
    return max(2, math.ceil(BASE_POIS_PER_CELL * (scale if scale <= 1 else math.sqrt(scale))))


def review_factor(scale: float) -> float:
    return 1.0 if scale <= 1 else math.sqrt(scale)


# ---------------------------------------------------------------------------------------------------
# Businesses
# ---------------------------------------------------------------------------------------------------
@dataclass
class _Business:
    record: dict[str, Any]  # the business line, as written
    facts: PoiFacts
    n_reviews: int
    stars: float
    seed_key: str


def _yelp_id(rng: random.Random) -> str:
    return "".join(rng.choices(ID_ALPHABET, k=22))


def _weighted(rng: random.Random, pairs: tuple[tuple[Any, float], ...] | dict) -> Any:
    items = list(pairs.items()) if isinstance(pairs, dict) else list(pairs)
    return rng.choices([k for k, _ in items], weights=[w for _, w in items], k=1)[0]


def _pick_kind(rng: random.Random, kinds: tuple[Kind, ...], city: str) -> Kind:
    weights = [3.0 if city in k.cities else (1.0 if not k.cities else 0.25) for k in kinds]
    return rng.choices(kinds, weights=weights, k=1)[0]


def repeats_a_word(name: str) -> bool:
    """True for a name that says a word twice ("Forest Park Park", "Oak House Public House"): a name part
    (a city word, a name word, "House") can end with the kind's noun or begin it."""
    words = [w.lower() for w in re.findall(r"[\w']+", name)]
    return len(set(words)) < len(words)


def _name(rng: random.Random, kind: Kind, city: str, used: set[str]) -> str:
    c = catalogue()
    noun = rng.choice(kind.nouns)
    for attempt in range(50):
        pattern = rng.randrange(5)
        word = rng.choice(c.name_words)
        if pattern == 0:
            name = f"{rng.choice(c.surnames)}'s {noun}"
        elif pattern == 1:
            name = f"{rng.choice(c.city_words[city]) if city in c.city_words else word} {noun}"
        elif pattern == 2:
            name = f"The {word} {noun}"
        elif pattern == 3:
            name = f"{word} & {rng.choice(c.name_words)} {noun}" if attempt > 10 else f"{word} {noun}"
        else:
            name = f"{word} {rng.choice(('House', 'Street', 'Corner', 'Yard', 'Row'))} {noun}"
        if kind.name == "museum_art" and rng.random() < 0.5:
            name = f"{city} {noun}" if attempt == 0 else f"{word} {noun}"
        if name not in used and not repeats_a_word(name):
            used.add(name)
            return name
    name = f"{name} {len(used)}"
    used.add(name)
    return name


def _categories(rng: random.Random, kind: Kind) -> list[str]:
    cats = list(kind.categories)
    extra = [c for c in kind.optional if rng.random() < 0.35]
    cats += extra
    rng.shuffle(cats)  # Yelp lists categories in no particular order
    return cats


def _n_reviews(rng: random.Random, factor: float) -> int:
    if rng.random() < FEW_REVIEWS_SHARE:
        return rng.randint(0, 2)
    n = 3 + int(rng.lognormvariate(math.log(REVIEW_MEDIAN * factor), REVIEW_SIGMA))
    return min(n, int(400 * factor))


def _make_business(
    i: int,
    seed: int,
    kind: Kind,
    city: str,
    state: str,
    layout: CityLayout | None,
    other_coords: tuple[float, float] | None,
    used_names: set[str],
    factor: float,
    city_spelling: str,
) -> _Business:
    c = catalogue()
    key = f"trace-synth:{seed}:{i}"
    rng = random.Random(key)
    business_id = _yelp_id(rng)
    price = rng.choice(kind.price)
    stars = _weighted(rng, c.star_weights)
    if layout is not None:
        lat, lon = layout.place(rng)
        landmark = layout.nearest_landmark(lat, lon)
    else:  # a business outside the Trace cities, scattered around that town's centre
        lat0, lon0 = other_coords or (0.0, 0.0)
        lat = round(lat0 + rng.gauss(0, 0.03), 7)
        lon = round(lon0 + rng.gauss(0, 0.03), 7)
        landmark = None
    name = _name(rng, kind, city, used_names)
    raw_attrs, facts = draw_attributes(rng, kind, price, city)
    n_reviews = _n_reviews(rng, factor) if kind.poi_type != "other" else rng.randint(0, 6)
    review_count = n_reviews + int(n_reviews * rng.uniform(0.0, 0.3))
    specialties = rng.sample(kind.items, min(len(kind.items), rng.randint(4, 6))) if kind.items else []
    record = {
        "business_id": business_id,
        "name": name,
        "address": f"{rng.randint(10, 9899)} {rng.choice(c.streets)} {rng.choice(c.street_types)}",
        "city": city_spelling,
        "state": state,
        "postal_code": f"{c.postal_prefix.get(city, '100')}{rng.randint(0, 99):02d}",
        "latitude": lat,
        "longitude": lon,
        "stars": stars,
        "review_count": review_count,
        "is_open": 1 if rng.random() < 0.8 else 0,
        "attributes": raw_attrs,
        "categories": ", ".join(_categories(rng, kind))
        if rng.random() > 0.003 or kind.poi_type == "other"
        else None,
        "hours": draw_hours(rng, kind),
    }
    if kind.poi_type == "other" and rng.random() < 0.1:
        record["categories"] = None  # Yelp has a few businesses without categories
    facts_obj = PoiFacts(
        poi_type=kind.poi_type,
        kind=kind.name,
        name=name,
        city=city,
        price=price if raw_attrs else None,
        specialties=specialties,
        staff=rng.sample(banks().first_names, 3),
        landmark=landmark,
        attrs=facts,
    )
    return _Business(record, facts_obj, n_reviews, stars, key)


def generate_businesses(seed: int = SEED, scale: float = 1.0) -> list[_Business]:
    """All businesses of the bundle, in file order (shuffled across cities and types, as Yelp's file is)."""
    c = catalogue()
    n_cell = pois_per_cell(scale)
    factor = review_factor(scale)
    rng = random.Random(f"trace-synth:{seed}:layout")
    out: list[_Business] = []
    i = 0
    for city in CITY_NAMES:
        layout = CityLayout(city, rng)
        state = CITIES[city].state
        used: set[str] = set()
        spellings = c.city_spellings.get(city, ((city, 1.0),))
        plan: list[Kind] = []
        for kinds in c.kinds_by_type.values():
            plan += [_pick_kind(rng, kinds, city) for _ in range(n_cell)]
        n_other = max(1, round(len(plan) * NON_TOURISM_SHARE))
        plan += [rng.choice(c.other_kinds) for _ in range(n_other)]
        for kind in plan:
            spelling = _weighted(rng, spellings)
            out.append(_make_business(i, seed, kind, city, state, layout, None, used, factor, spelling))
            i += 1
    n_outside = max(2, round(len(out) * OTHER_CITY_SHARE))
    used_outside: set[str] = set()
    all_kinds = c.all_kinds
    for _ in range(n_outside):
        city, state, lat, lon = rng.choice(c.other_cities)
        kind = rng.choice(all_kinds)
        out.append(_make_business(i, seed, kind, city, state, None, (lat, lon), used_outside, factor, city))
        i += 1
    rng.shuffle(out)
    return out


# ---------------------------------------------------------------------------------------------------
# Reviews
# ---------------------------------------------------------------------------------------------------
def _review_stars(rng: random.Random, business_stars: float) -> int:
    # centred a little above the business's stars: the 1..5 clamp pulls the mean towards 3 otherwise
    weights = [math.exp(-((k - business_stars - 0.35) ** 2) / (2 * 1.1**2)) for k in range(1, 6)]
    return rng.choices(range(1, 6), weights=weights, k=1)[0]


def _reviews_of(b: _Business) -> Iterator[dict[str, Any]]:
    rng = random.Random(b.seed_key + ":reviews")
    for _ in range(b.n_reviews):
        stars = _review_stars(rng, b.stars)
        when = DATE_START + timedelta(seconds=rng.randrange(DATE_SPAN_S))
        useful = int(rng.expovariate(0.8))
        yield {
            "review_id": _yelp_id(rng),
            "user_id": _yelp_id(rng),
            "business_id": b.record["business_id"],
            "stars": float(stars),
            "useful": useful,
            "funny": int(rng.expovariate(2.0)),
            "cool": int(rng.expovariate(1.5)),
            "text": compose_review(rng, b.facts, stars),
            "date": when.strftime("%Y-%m-%d %H:%M:%S"),
        }


def _line(record: dict[str, Any]) -> str:
    """A JSON line the way Yelp's dump writes it: compact, raw UTF-8, `/` escaped as `\\/`."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).replace("/", "\\/") + "\n"


def write_synthetic_bundle(
    out_dir: str | os.PathLike, seed: int = SEED, scale: float = 1.0, *, progress: bool = False
) -> Path:
    """Write the synthetic bundle into `out_dir` (created); returns the folder. Deterministic in (seed, scale)."""
    if not scale > 0:
        raise ValueError(f"scale must be > 0, got {scale}")
    check_output_dir(out_dir, what="bundle")  # not a file, in a writable place: before any work
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / SYNTHETIC_MANIFEST).unlink(missing_ok=True)  # written last: its presence marks a complete bundle
    businesses = generate_businesses(seed, scale)
    with atomic_open(out / YELP_BUSINESS_FILE, "w") as f:
        for b in businesses:
            f.write(_line(b.record))
    order_rng = random.Random(f"trace-synth:{seed}:review-order")
    n_reviews = 0
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(
            total=sum(b.n_reviews for b in businesses),
            desc="synthetic reviews",
            unit=" reviews",
            unit_scale=True,
            mininterval=1.0,
        )
    with atomic_open(out / YELP_REVIEW_FILE, "w") as f:
        for start in range(0, len(businesses), BLOCK):
            block = [_line(r) for b in businesses[start : start + BLOCK] for r in _reviews_of(b)]
            order_rng.shuffle(block)
            f.writelines(block)
            n_reviews += len(block)
            if bar is not None:
                bar.update(len(block))
    if bar is not None:
        bar.close()
    write_json(
        out / SYNTHETIC_MANIFEST,
        {
            "generator": "trace-bench synthetic Yelp bundle",
            "synth_version": SYNTH_VERSION,
            "seed": seed,
            "scale": scale,
            "businesses": len(businesses),
            "reviews": n_reviews,
            "pois_per_cell": pois_per_cell(scale),
            "data_tables": table_hashes(REVIEW_BANKS_FILE, CATALOGUE_FILE),
            "note": "Synthetic data in the Yelp Open Dataset schema; not Yelp data. Built by trace_dataset.yelp.synth.",
        },
    )
    log.info("synthetic bundle: %d businesses, %d reviews -> %s", len(businesses), n_reviews, out)
    return out
