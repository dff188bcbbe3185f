"""Knowledge-Enhanced: constraint parsing, per-constraint checks, satisfaction counts, ranking."""

from __future__ import annotations

import pytest

from baselines.non_llm.knowledge import KnowledgeEnhancedBaseline
from baselines.toolkit.constraints import (
    AttributeConstraint,
    category_aliases,
    check_constraint,
    constraint_counts,
    constraint_share,
    parse_constraints,
    rank_by_constraints,
)
from tests.support.non_llm import poi, row
from trace_dataset.records import Poi


def described(texts, categories=(), rejected_prices=()):
    return [c.describe() for c in parse_constraints(texts, categories, rejected_prices)]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Somewhere quiet with free wifi", ["noise_level: quiet/average", "wifi: free"]),
        ("It was too loud, and I need wifi", ["noise_level: quiet/average", "wifi: free/paid"]),
        ("I don't want it too noisy", ["noise_level: quiet/average"]),  # the wording is the negation
        ("a lively spot with a patio", ["noise_level: loud/very_loud", "outdoor seating"]),
        ("we have two kids and a dog", ["good for kids", "dogs allowed"]),
        ("no kids this time, we don't need parking", []),
        (
            "a party of six, wheelchair access and parking",
            ["good for groups", "wheelchair accessible", "parking"],
        ),
        ("just the two of us", []),
        ("great cocktails, a romantic date night", ["alcohol: full_bar", "ambience: romantic"]),
        ("vegan options for brunch", ["dietary: vegan", "good_for_meal: brunch"]),
        ("something budget-friendly", ["price <= $$"]),
        ("$$$ is fine", ["price <= $$$"]),
        ("a luxury hotel", ["price >= $$$"]),
        ("at least 4.5 stars.", ["stars >= 4.5"]),
        ("I'd prefer somewhere rated four stars or better.", ["stars >= 4.0"]),
        ("Only places rated at least 4.", ["stars >= 4.0"]),
        ("A four and a half star hotel, 4+ would do", ["stars >= 4.0"]),  # the latest mention wins
        ("It needs a kid-friendly setup and bookable tables.", ["good for kids", "reservations"]),
        ("Earlier I said elegant, but I'd now prefer trendy.", ["ambience: trendy"]),  # one ambience slot
        ("something highly rated", ["stars >= 4.0"]),
    ],
)
def test_parse_constraints(text, expected):
    assert described([text]) == expected


def test_latest_mention_wins_and_relative_price():
    assert described(["cheap please", "actually moderate is fine"]) == ["price <= $$$"]
    assert described(["quiet please", "hmm, something lively after all"]) == ["noise_level: loud/very_loud"]
    # "cheaper" after rejecting a $$$ POI: one level below the cheapest rejected price
    assert described(["that one is too expensive, something cheaper"], rejected_prices=[3, 4]) == [
        "price <= $$"
    ]
    assert described(["something cheaper"]) == ["price <= $$"]  # nothing rejected: the cheap ceiling


def test_categories_from_the_cell():
    assert category_aliases("Sushi Bars") == ("sushi bars", "sushi")
    assert category_aliases("Burgers") == ("burgers", "burger")
    assert category_aliases("Coffee & Tea") == ("coffee & tea", "coffee", "tea")
    assert category_aliases("American (New)") == ("american (new)", "american")
    cats = ["Sushi Bars", "Japanese", "Restaurants", "American (New)", "American (Traditional)", "Seafood"]
    [c] = parse_constraints(["I'd love some sushi or classic American food"], cats)
    assert (c.kind, c.values) == (
        "category",
        ("american (new)", "american (traditional)", "sushi bars"),
    )  # sorted
    assert parse_constraints(["any restaurants around?"], cats) == []  # generic category
    assert parse_constraints(["no sushi please"], cats) == []
    [bars] = parse_constraints(["I'm leaning towards Bars."], ["Bars", "Nightlife", "Arts & Entertainment"])
    assert bars.values == ("bars",)
    # the latest turn naming categories replaces the earlier ones
    [latest] = parse_constraints(["sushi tonight", "hmm, seafood instead"], cats)
    assert latest.values == ("seafood",)


def make(attrs=None, price=2, stars=4.0, categories=("Restaurants",)) -> Poi:
    return Poi.from_dict(poi("x", "X", price=price, stars=stars, categories=categories, attributes=attrs))


def test_check_constraint_true_false_unknown():
    quiet = AttributeConstraint("noise", "enum", "noise_level", ("quiet", "average"))
    assert check_constraint(quiet, make({"noise_level": "quiet"})) is True
    assert check_constraint(quiet, make({"noise_level": "loud"})) is False
    assert check_constraint(quiet, make({})) is None
    outdoor = AttributeConstraint("bool:outdoor_seating", "bool", "outdoor_seating", (True,))
    assert check_constraint(outdoor, make({"outdoor_seating": True})) is True
    assert check_constraint(outdoor, make({"outdoor_seating": False})) is False
    parking = AttributeConstraint("parking", "any_list", "parking")
    assert check_constraint(parking, make({"parking": ["lot"]})) is True
    assert check_constraint(parking, make({"parking": []})) is False
    romantic = AttributeConstraint("ambience:romantic", "list", "ambience", ("romantic",))
    assert check_constraint(romantic, make({"ambience": ["romantic", "classy"]})) is True
    assert check_constraint(romantic, make({"ambience": ["casual"]})) is False
    price = AttributeConstraint("price", "price_max", "price", (2,))
    assert check_constraint(price, make(price=2)) is True
    assert check_constraint(price, make(price=3)) is False
    assert check_constraint(price, make(price=None)) is None
    floor = AttributeConstraint("price", "price_min", "price", (3,))
    assert check_constraint(floor, make(price=4)) is True
    rating = AttributeConstraint("rating", "rating_min", "stars", (4.5,))
    assert check_constraint(rating, make(stars=4.0)) is False
    vegan = AttributeConstraint("dietary:vegan", "dietary", "dietary", ("vegan",))
    assert check_constraint(vegan, make({}, categories=("Vegan", "Restaurants"))) is True  # category says so
    assert check_constraint(vegan, make({"dietary": ["vegetarian"]})) is False
    assert check_constraint(vegan, make({})) is None
    cat = AttributeConstraint("category", "category", "categories", ("sushi bars", "seafood"))
    assert check_constraint(cat, make(categories=("Seafood",))) is True
    assert check_constraint(cat, make(categories=("Pizza",))) is False


def test_counts_and_share():
    p = make({"noise_level": "quiet", "outdoor_seating": True}, price=3)
    constraints = parse_constraints(["quiet, with a patio, cheap, and free wifi"])
    # noise: satisfied; outdoor: satisfied; price <= 2: violated; wifi: unknown
    assert constraint_counts(constraints, p) == (2, 1, 1)
    assert constraint_share(constraints, p) == pytest.approx((2 + 0.5 * 1) / 4)
    assert constraint_share(constraints, p, unknown_credit=0.0) == pytest.approx(2 / 4)
    assert constraint_share([], p) == 0.0


def test_rank_by_constraints_ties_by_tiebreak_then_id():
    pois = [Poi.from_dict(poi(b, b, price=pr)) for b, pr in (("c", 2), ("b", 2), ("a", 3), ("d", None))]
    constraints = parse_constraints(["something cheap"])
    ranked = rank_by_constraints(pois, constraints, tiebreak={"c": 0.2, "b": 0.1})
    # b, c satisfy (1.0), d unknown (0.5), a violates (0.0); c before b by TF-IDF
    assert ranked == [("c", 1.0), ("b", 1.0), ("d", 0.5), ("a", 0.0)]
    assert [p for p, _ in rank_by_constraints(pois, constraints, tiebreak={})][:2] == ["b", "c"]


def test_pipeline_scores_share_then_tfidf(cell_kb):
    pipe = KnowledgeEnhancedBaseline(cell_kb)
    candidates = ("p_sea", "p_veg", "p_bbq", "p_caf", "p_sus")
    r = row(["We want somewhere quiet with outdoor seating, and cheap"], candidates=candidates)
    inp = pipe.preprocess(r)
    scores = pipe.score(inp)
    # constraints: noise quiet/average, outdoor, price <= 2
    # p_veg quiet/T/2 -> 3/3; p_bbq loud/T/2 -> 2/3; p_sea average/F/3 -> 1/3;
    # p_caf ?/?/1 -> (1 + 0.5 * 2)/3; p_sus ?/?/3 -> (0 + 0.5 * 2)/3
    assert {p: s for p, (s, _) in scores.items()} == {
        "p_veg": 1.0,
        "p_bbq": pytest.approx(2 / 3),
        "p_sea": pytest.approx(1 / 3),
        "p_caf": pytest.approx(2 / 3),
        "p_sus": pytest.approx(1 / 3),
    }
    [pred] = pipe([r])
    assert pred["ranked_poi_ids"][0] == "p_veg"
    assert set(pred["ranked_poi_ids"][1:3]) == {"p_bbq", "p_caf"}
    assert "meets 3 of your 3 stated requirements" in pred["response"]
    assert pred["meta"]["constraints"] == ["noise_level: quiet/average", "outdoor seating", "price <= $$"]
    # equal shares: TF-IDF decides (p_bbq's reviews say "outdoor seating"; p_caf's do not)
    assert pred["ranked_poi_ids"][1] == "p_bbq"


def test_pipeline_without_constraints_is_tfidf(cell_kb):
    from baselines.non_llm.tfidf import TfidfBaseline

    r = row(["fresh oysters and lobster"], candidates=("p_sea", "p_veg", "p_bbq", "p_caf", "p_sus"))
    [k] = KnowledgeEnhancedBaseline(cell_kb)([r])
    [t] = TfidfBaseline(cell_kb)([r])
    assert k["ranked_poi_ids"] == t["ranked_poi_ids"]
    assert k["ranked_poi_ids"][0] == "p_sea"


def test_pipeline_parameters(cell_kb):
    assert KnowledgeEnhancedBaseline(cell_kb, unknown_credit=0.25).get_config_dict() == {
        "unknown_credit": 0.25
    }
    with pytest.raises(ValueError, match="unknown_credit"):
        KnowledgeEnhancedBaseline(cell_kb, unknown_credit=2.0)
