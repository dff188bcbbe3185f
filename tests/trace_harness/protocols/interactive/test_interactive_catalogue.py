"""Catalogues from a small hand-made Yelp bundle (`kb build --cities ... --all`), and SnipRec's seed selection
on it: the eligibility filters, the maximum bipartite matching and the seeker's anonymised context."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.interactive import business, review, write_bundle
from trace_dataset.io import TraceDataError, read_jsonl
from trace_dataset.kb.catalogue import VOTES_FILE, CatalogueSpec, build_catalogue
from trace_dataset.kb.store import KnowledgeBase
from trace_harness.protocols.interactive.simulator.sniprec_seeds import (
    SeedCriteria,
    anonymise,
    eligible,
    load_votes,
    match_pairs,
    seed_pairs,
    seeker_context,
)

PHL = "Philadelphia"
FOOD = "Restaurants, Food, Italian"


def bundle_rows() -> tuple[list[dict], list[dict]]:
    biz = [
        business("v1", "Nonna's Table", PHL, FOOD),
        business("v2", "Pier Fish Bar", PHL, "Restaurants, Seafood"),  # "food" inside "Seafood"
        business("v3", "Sweet Crumb", PHL, "Food, Desserts, Bakeries"),
        business("v4", "Taco Cart", PHL, "Food, Food Trucks, Mexican"),
        business("v5", "Noodle Bar", PHL, "Restaurants, Food, Thai"),
        business("v6", "Curd Corner", PHL, "Cheese Shops, Food, Specialty Food"),  # not a tourism type
        business("v7", "Old City Inn", PHL, "Hotels, Hotels & Travel"),
        business("v8", "Boise Bistro", "Boise", "Restaurants, Food, French"),
        business("v9", "Roma Trattoria", PHL, "Restaurants, Italian"),  # no "food" in its categories
        business("v10", "Tiny Diner", PHL, "Restaurants, Food"),  # only 2 reviews in the file
    ]
    revs = [
        # seeding-eligible (>= 4 stars, a useful vote, users with 2-5 reviews in the whole bundle)
        review("s1", "v1", "u1", 5, 2, "Loved it at NONNA'S TABLE, the tiramisu too."),
        review("s2", "v2", "u1", 4, 1),
        review("s3", "v1", "u2", 5, 3, "Nonna's Table makes the best lasagna; Nonna's Table is a gem."),
        review("x2", "v7", "u2", 4, 0),  # u2's second review: a hotel outside the catalogue
        review("s4", "v3", "u3", 4, 1),
        review("x3", "v8", "u3", 5, 0),  # u3's second review: another city
        # not eligible
        review("n1", "v4", "u5", 3, 5),
        review("n1b", "v9", "u5", 3, 5),  # 3 stars
        review("n2", "v4", "u6", 5, 0),
        review("n2b", "v9", "u6", 5, 0),  # no useful vote
        *[
            review(f"n3{i}", b, "u7", 5, 4) for i, b in enumerate(("v5", "v7", "v8", "v9", "v1", "v2"))
        ],  # 6 reviews
    ]
    fill = {"v1": 2, "v2": 2, "v3": 3, "v4": 2, "v5": 3, "v6": 3, "v8": 2, "v9": 3, "v10": 2}
    for bid, k in fill.items():
        for i in range(k):
            stars = 1.0 if i == 0 else 4.0
            revs.append(
                review(
                    f"f_{bid}_{i}",
                    bid,
                    f"fill_{bid}_{i}",
                    stars,
                    i,
                    f"Filler review {i} of this venue, which people call {bid}.",
                )
            )
    return biz, revs


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    return write_bundle(tmp_path / "bundle", *bundle_rows())


def test_a_catalogue_of_one_city_s_food_places(bundle, tmp_path):
    spec = CatalogueSpec(cities=(PHL,), poi_types=("restaurant",), category="food", min_reviews=3)
    meta = build_catalogue(bundle, tmp_path / "cat", spec)
    kb = KnowledgeBase.load(tmp_path / "cat")
    assert sorted(kb.pois) == ["v1", "v2", "v3", "v4", "v5", "v6"]  # no hotel, other city, non-food, thin POI
    assert kb.pois["v6"].poi_type == "restaurant"  # a matching non-tourism business takes the first type
    assert (
        meta["kind"] == "catalogue"
        and meta["stats"]["pois"] == 6
        and meta["stats"]["cells"] == {"Philadelphia x restaurant": 6}
    )
    assert len(kb.reviews_of("v1")) == 5  # every review kept
    votes = {v["review_id"]: v for v in read_jsonl(tmp_path / "cat" / VOTES_FILE)}
    assert votes["s3"] == {
        "review_id": "s3",
        "user_id": "u2",
        "useful": 3,
        "user_reviews": 2,
    }  # counted bundle-wide
    assert votes["n30"]["user_reviews"] == 6
    again = build_catalogue(bundle, tmp_path / "cat2", spec)
    assert again["kb_version"] == meta["kb_version"]


def test_other_cities_types_and_a_cap_per_cell(bundle, tmp_path):
    boise = build_catalogue(bundle, tmp_path / "boise", CatalogueSpec(cities=("Boise",), min_reviews=3))
    assert boise["stats"]["cells"] == {"Boise x restaurant": 1}
    everything = build_catalogue(bundle, tmp_path / "all", CatalogueSpec(min_reviews=3))
    # v6 has no tourism type without --category; the hotel and v10 have too few reviews in the file
    assert everything["stats"]["cells"] == {"Boise x restaurant": 1, "Philadelphia x restaurant": 6}
    capped = build_catalogue(
        bundle, tmp_path / "cap", CatalogueSpec(cities=(PHL,), min_reviews=3, per_cell=2)
    )
    assert capped["stats"]["cells"] == {"Philadelphia x restaurant": 2}
    with pytest.raises(TraceDataError, match="no business qualifies"):
        build_catalogue(bundle, tmp_path / "none", CatalogueSpec(cities=("Atlantis",)))
    with pytest.raises(ValueError, match="unknown POI type"):
        CatalogueSpec(poi_types=("museum",))


def test_kb_build_cli_builds_a_catalogue(bundle, tmp_path, capsys):
    from trace_bench.cli import main

    out = tmp_path / "cli"
    assert (
        main(
            [
                "-q",
                "kb",
                "build",
                "--yelp",
                str(bundle),
                "--out",
                str(out),
                "--cities",
                PHL,
                "--poi-types",
                "restaurant",
                "--category",
                "food",
                "--min-reviews",
                "3",
                "--all",
            ]
        )
        == 0
    )
    assert "Philadelphia x restaurant" in capsys.readouterr().out
    assert main(["-q", "kb", "stats", str(out)]) == 0
    assert "POIs        6" in capsys.readouterr().out


def test_seed_pairs_are_a_maximum_bipartite_matching(bundle, tmp_path):
    build_catalogue(bundle, tmp_path / "cat", CatalogueSpec(cities=(PHL,), category="food", min_reviews=3))
    kb = KnowledgeBase.load(tmp_path / "cat")
    votes = load_votes(kb)
    crit = SeedCriteria(user_reviews=(2, 5))
    ok = eligible(votes, crit)
    assert {v.review_id for v in ok} == {"s1", "s2", "s3", "s4"}
    pairs = match_pairs(ok)
    # u1 reviewed v1 and v2, u2 only v1: a maximum matching gives u2 v1 and u1 v2 (greedy would strand u2)
    assert sorted((u, b) for u, b, _ in pairs) == [("u1", "v2"), ("u2", "v1"), ("u3", "v3")]
    assert dict(((u, b), r) for u, b, r in pairs)[("u1", "v2")] == "s2"
    val = seed_pairs(votes, crit, split="validation")
    test = seed_pairs(votes, crit, split="test")
    assert len(val) == 1 and len(test) == 2  # a small matching keeps SnipRec's 1:2 validation/test ratio
    assert {(p.user_id, p.business_id) for p in val + test} == {("u1", "v2"), ("u2", "v1"), ("u3", "v3")}
    assert seed_pairs(votes, crit, split="test") == test  # seeded
    assert match_pairs(eligible(votes, SeedCriteria())) == []  # SnipRec's 10-99 reviews: nobody here


def test_the_seeker_context_never_names_the_venue(bundle, tmp_path):
    build_catalogue(bundle, tmp_path / "cat", CatalogueSpec(cities=(PHL,), category="food", min_reviews=3))
    kb = KnowledgeBase.load(tmp_path / "cat")
    votes = load_votes(kb)
    pair = next(
        p
        for p in seed_pairs(votes, SeedCriteria(user_reviews=(2, 5)), split="test", n_validation=0)
        if p.business_id == "v1"
    )
    ctx = seeker_context(kb, pair, {v.review_id: v for v in votes})
    assert ctx.seed_review.startswith("this place makes the best lasagna")
    text = " ".join([ctx.seed_review, *ctx.info, *ctx.positive, *ctx.negative]).lower()
    assert "nonna" not in text
    assert len(ctx.negative) == 1 and len(ctx.positive) >= 1  # 1-star filler vs the 4-5 star others
    assert ctx.seed_review not in ctx.positive and "Loved it at this place, the tiramisu too." in ctx.positive
    assert anonymise("The Oak is great. I love Oak!", "The Oak") == "this place is great. I love this place!"


def test_a_catalogue_from_the_real_yelp_sample(yelp_sample_dir, tmp_path):
    meta = build_catalogue(yelp_sample_dir, tmp_path / "real", CatalogueSpec(cities=(PHL,), min_reviews=1))
    kb = KnowledgeBase.load(tmp_path / "real")
    assert meta["source"] == "yelp" and kb.pois and all(p.city == PHL for p in kb.pois.values())
    votes = load_votes(kb)
    assert len(votes) == len(kb.reviews) and all(v.user_id and v.user_reviews >= 1 for v in votes)
