from __future__ import annotations

import itertools
import json
import math
import re
from collections import defaultdict
from pathlib import Path

import pytest

from trace_bench.cli import main
from trace_dataset.constants import ASPECT_TERMS, CITIES, CITY_NAMES, YELP_BUSINESS_FILE, YELP_REVIEW_FILE
from trace_dataset.datafiles import from_rows, table_hashes
from trace_dataset.io import sha256_file
from trace_dataset.kb.classify import classify
from trace_dataset.yelp.reader import SYNTHETIC_MANIFEST, iter_businesses, iter_reviews
from trace_dataset.yelp.review_banks import REVIEW_BANKS_FILE, banks
from trace_dataset.yelp.synth import pois_per_cell, review_factor, write_synthetic_bundle
from trace_dataset.yelp.synth_catalogue import CATALOGUE_FILE, catalogue

BUSINESS_KEYS = [
    "business_id",
    "name",
    "address",
    "city",
    "state",
    "postal_code",
    "latitude",
    "longitude",
    "stars",
    "review_count",
    "is_open",
    "attributes",
    "categories",
    "hours",
]
REVIEW_KEYS = ["review_id", "user_id", "business_id", "stars", "useful", "funny", "cool", "text", "date"]


def _raw(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.open(encoding="utf-8")]


def _km(a, b) -> float:
    (lat1, lon1), (lat2, lon2) = a, b
    x = math.radians(lon2 - lon1) * math.cos(math.radians((lat1 + lat2) / 2))
    y = math.radians(lat2 - lat1)
    return 6371.0 * math.hypot(x, y)


def test_same_seed_gives_identical_bytes(small_bundle, tmp_path):
    again = write_synthetic_bundle(tmp_path / "again", seed=42, scale=0.1)
    for name in (YELP_BUSINESS_FILE, YELP_REVIEW_FILE, SYNTHETIC_MANIFEST):
        assert sha256_file(again / name) == sha256_file(small_bundle / name), name
    other = write_synthetic_bundle(tmp_path / "other", seed=7, scale=0.1)
    assert sha256_file(other / YELP_REVIEW_FILE) != sha256_file(small_bundle / YELP_REVIEW_FILE)


def test_same_fields_and_types_as_the_real_dump(small_bundle):
    businesses = _raw(small_bundle / YELP_BUSINESS_FILE)
    reviews = _raw(small_bundle / YELP_REVIEW_FILE)
    assert all(list(b) == BUSINESS_KEYS for b in businesses)
    assert all(list(r) == REVIEW_KEYS for r in reviews)
    for b in businesses:
        assert isinstance(b["stars"], float) and isinstance(b["review_count"], int)
        assert b["attributes"] is None or all(isinstance(v, str) for v in b["attributes"].values())
        assert b["categories"] is None or isinstance(b["categories"], str)
        assert b["hours"] is None or isinstance(b["hours"], dict)
        assert len(b["business_id"]) == 22
    for r in reviews:
        assert isinstance(r["stars"], float) and isinstance(r["text"], str)
        assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", r["date"])


def test_same_fields_as_the_real_sample(small_bundle, yelp_sample_dir):
    real_b = json.loads((yelp_sample_dir / YELP_BUSINESS_FILE).open().readline())
    real_r = json.loads((yelp_sample_dir / YELP_REVIEW_FILE).open().readline())
    assert list(_raw(small_bundle / YELP_BUSINESS_FILE)[0]) == list(real_b)
    assert list(_raw(small_bundle / YELP_REVIEW_FILE)[0]) == list(real_r)


def test_yelp_quirks_are_present(small_bundle):
    text = (small_bundle / YELP_BUSINESS_FILE).read_text(encoding="utf-8")
    businesses = [json.loads(line) for line in text.splitlines()]
    values = [v for b in businesses if b["attributes"] for v in b["attributes"].values()]
    assert any(v.startswith("u'") for v in values) and any(v.startswith("'") for v in values)
    assert "None" in values and "True" in values
    assert any(v.startswith("{u'") for v in values) and any(v.startswith("{'") for v in values)
    assert any(b["attributes"] is None for b in businesses)
    assert any(b["hours"] is None for b in businesses)
    assert any("," in (b["categories"] or "") for b in businesses)
    assert "\\/" in text  # Yelp escapes "/" (e.g. "Cajun\/Creole")
    cities = {b["city"] for b in businesses}
    assert {"St. Louis", "St Louis"} & cities
    assert (
        cities
        - set(CITY_NAMES)
        - {"St. Louis", "St Louis", "st. louis ", "new  orleans", "Tampa Bay", "Philly", "Nashville-Davidson"}
    )  # other cities exist


def test_tourism_types_and_non_tourism(small_bundle):
    types = defaultdict(int)
    for b in iter_businesses(small_bundle):
        types[classify(b.categories)] += 1
    assert types["restaurant"] and types["hotel"] and types["attraction"]
    assert types[None] > 0  # dentists, car rental, ... are dropped by the classifier


def test_spatial_density(small_bundle):
    by_city = defaultdict(list)
    for b in iter_businesses(small_bundle):
        if b.in_trace_city:
            by_city[b.city].append((b.latitude, b.longitude))
    for city, points in by_city.items():
        centre = (CITIES[city].latitude, CITIES[city].longitude)
        assert all(_km(p, centre) < 30 for p in points), city
        dists = [_km(a, b) for a, b in itertools.combinations(points, 2)]
        assert sum(d < 0.5 for d in dists) >= 5, city  # clusters: POIs within 500 m of each other
        assert sum(d > 3.0 for d in dists) >= 5, city  # and spread over kilometres


def test_review_text_is_grounded_varied_and_follows_stars(small_bundle):
    reviews = list(iter_reviews(small_bundle))
    texts = [r.text for r in reviews]
    assert len(set(texts)) / len(texts) > 0.98
    assert any(len(t) > 500 for t in texts) and sum(len(t) > 500 for t in texts) / len(texts) > 0.15
    assert all('"' not in t for t in texts)  # quotes are how dialogues cite: keep review text free of them
    joined = " ".join(texts).lower()
    present = [t for t in ASPECT_TERMS if t in joined]
    assert len(present) >= 35, sorted(set(ASPECT_TERMS) - set(present))
    pos_words = ("highly recommend", "excellent", "loved", "best", "great", "definitely be back")
    neg_words = ("disappointing", "rude", "bland", "not be back", "letdown", "overpriced", "save your money")

    def score(t: str) -> int:
        t = t.lower()
        return sum(t.count(w) for w in pos_words) - sum(t.count(w) for w in neg_words)

    high = [score(r.text) for r in reviews if r.stars >= 4]
    low = [score(r.text) for r in reviews if r.stars <= 2]
    assert sum(high) / len(high) > 0.5 > 0 > sum(low) / len(low)


def test_reviews_differ_between_pois(small_bundle):
    """POI-specific details (named dishes, exhibits) make documents of different POIs distinguishable."""
    words_by_poi = defaultdict(set)
    for r in iter_reviews(small_bundle):
        words_by_poi[r.business_id].update(re.findall(r"[a-z']+", r.text.lower()))
    docs = [w for w in words_by_poi.values() if len(w) > 50][:60]
    sims = [len(a & b) / len(a | b) for a, b in itertools.combinations(docs, 2)]
    assert max(sims) < 0.9 and sum(sims) / len(sims) < 0.6


def test_scale_rule():
    assert pois_per_cell(1.0) == 135
    assert pois_per_cell(0.1) == 14
    assert pois_per_cell(16.0) == 540 and review_factor(16.0) == 4.0
    with pytest.raises(ValueError, match="scale"):
        write_synthetic_bundle("/nonexistent-never-created", scale=0)


def test_cli_synth(tmp_path, capsys):
    assert main(["yelp", "synth", "--out", str(tmp_path / "s"), "--scale", "0.02", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    assert "synthetic Yelp bundle" in out
    manifest = json.loads((tmp_path / "s" / SYNTHETIC_MANIFEST).read_text())
    assert manifest["seed"] == 3 and manifest["scale"] == 0.02
    assert manifest["reviews"] == sum(1 for _ in (tmp_path / "s" / YELP_REVIEW_FILE).open())
    assert manifest["data_tables"] == table_hashes(REVIEW_BANKS_FILE, CATALOGUE_FILE)
    assert set(manifest["data_tables"]) == {"review_banks.json", "synth_catalogue.json"}


def test_every_catalogue_kind_classifies_as_its_type():
    """Whatever optional categories a synthetic POI gets, the classifier gives it the intended type."""
    for kind in catalogue().all_kinds:
        expected = None if kind.poi_type == "other" else kind.poi_type
        for extra in [(), *((c,) for c in kind.optional), kind.optional]:
            assert classify(kind.categories + extra) == expected, (kind.name, extra)


def test_tables_with_keys_json_cannot_hold_come_back_as_written():
    """Rows rebuild int, float, None and (attribute, value) keys, in file order."""
    assert from_rows(((2, ("a",)), (1, ("b",)))) == {2: ("a",), 1: ("b",)}
    assert list(from_rows(((2, ("a",)), (1, ("b",))))) == [2, 1]
    assert from_rows((("wifi", "free", ("w",)), ("outdoor_seating", True, ("o",)))) == {
        ("wifi", "free"): ("w",),
        ("outdoor_seating", True): ("o",),
    }
    extras = banks().restaurant_extras
    assert ("outdoor_seating", True) in extras and ("outdoor_seating", False) in extras
    assert None in banks().parking_sentences and set(banks().value_pos) == {1, 2, 3, 4}
    assert all(type(k) is float for k in catalogue().star_weights)
