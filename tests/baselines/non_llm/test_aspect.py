"""Aspect baseline: lexicon, query weights, clause sentiment, the score formula, and the pipeline."""

from __future__ import annotations

from collections import Counter

import pytest

from baselines.non_llm.aspect import AspectBaseline
from baselines.toolkit.aspect import (
    ASPECT_KEYWORDS,
    ASPECTS,
    NEGATIVE_WORDS,
    POSITIVE_WORDS,
    aspect_hits,
    aspect_mentions,
    aspect_score,
    clause_polarity,
    poi_aspect_sentiment,
    query_aspect_weights,
    review_aspect_sentiment,
)
from baselines.toolkit.text import tokenize
from tests.support.non_llm import load_kb, poi, row


def test_lexicon_has_five_disjoint_aspects():
    assert ASPECTS == ("food", "service", "ambiance", "value", "location")
    assert set(ASPECT_KEYWORDS) == set(ASPECTS)
    counts = Counter(tuple(tokenize(w)) for words in ASPECT_KEYWORDS.values() for w in words)
    assert [k for k, n in counts.items() if n > 1] == []
    assert not POSITIVE_WORDS & NEGATIVE_WORDS


def test_phrases_match_longest_first_once():
    # "front desk" is one service hit, "walking distance" one location hit (not walking + distance)
    assert aspect_mentions(tokenize("The front desk was a walking distance away")) == ["service", "location"]
    assert aspect_mentions(tokenize("wi-fi gluten-free")) == ["food"]  # "gluten free" (wi fi is no aspect)


def test_query_weights_are_hits_over_three_capped_at_one():
    texts = ["I want great food, a good menu", "and tasty dishes; friendly staff", "near downtown"]
    # food: food, menu, tasty, dishes = 4 -> 1.0; service: friendly, staff = 2 -> 2/3; location: near,
    # downtown = 2 -> 2/3; ambiance and value: 0
    assert aspect_hits(texts) == {"food": 4, "service": 2, "ambiance": 0, "value": 0, "location": 2}
    w = query_aspect_weights(texts)
    assert w == {
        "food": 1.0,
        "service": pytest.approx(2 / 3),
        "ambiance": 0.0,
        "value": 0.0,
        "location": pytest.approx(2 / 3),
    }
    assert query_aspect_weights("cheap prices")["value"] == pytest.approx(2 / 3)


def test_clause_polarity_and_negation():
    assert clause_polarity(tokenize("good and great")) == 1.0
    assert clause_polarity(tokenize("good but awful and rude")) == pytest.approx((1 - 2) / 3)
    assert clause_polarity(tokenize("the food was not good")) == -1.0
    assert clause_polarity(tokenize("the staff wasn't rude")) == 1.0  # n't -> "t" negates
    assert clause_polarity(tokenize("a table by the window")) == 0.0


def test_review_sentiment_splits_clauses_and_averages():
    text = "The food was delicious. The food was not great! Rooms were dirty but the location is perfect."
    # food clauses: +1 ("delicious"), -1 ("not great") -> 0; ambiance: "rooms ... dirty" -> -1 (dirty is both
    # an ambiance cue and negative); location: "location ... perfect" -> +1; service, value: absent
    assert review_aspect_sentiment(text) == {"food": 0.0, "ambiance": -1.0, "location": 1.0}


def test_poi_sentiment_is_mean_over_mentioning_reviews():
    reviews = ["Delicious food.", "The food was bland.", "Great food. Friendly staff.", "Nice view."]
    # food: +1, -1, +1 -> 1/3 (the view review does not mention food); service: +1; ambiance: +1 ("view"
    # cue, "nice"); value, location: no review mentions them -> 0
    s = poi_aspect_sentiment(reviews)
    assert s == {"food": pytest.approx(1 / 3), "service": 1.0, "ambiance": 1.0, "value": 0.0, "location": 0.0}


def test_score_formula():
    w = {"food": 1.0, "service": 0.5, "ambiance": 0.0, "value": 1 / 3, "location": 0.0}
    s = {"food": 0.5, "service": -1.0, "ambiance": 1.0, "value": 0.9, "location": 1.0}
    assert aspect_score(w, s, stars=4.0) == pytest.approx(0.5 - 0.5 + 0.3 + 0.4)


@pytest.fixture
def abc_kb(tmp_path):
    pois = [poi("a", "Alpha", stars=3.0), poi("b", "Bravo", stars=5.0), poi("c", "Charlie", stars=4.0)]
    reviews = {"a": ["The food was delicious."], "b": ["The food was awful."], "c": ["Lovely view."]}
    return load_kb(tmp_path, pois, reviews)


def test_pipeline_ranks_by_hand_computed_scores(abc_kb):
    pipe = AspectBaseline(abc_kb)
    food = row(["Great food please, delicious dishes and a tasty menu"], candidates=("a", "b", "c"))
    # w_food = 1: a = 1 + 0.3 = 1.3, c = 0 + 0.4, b = -1 + 0.5 = -0.5
    inp = pipe.preprocess(food)
    assert pipe.score(inp) == {"a": pytest.approx(1.3), "b": pytest.approx(-0.5), "c": pytest.approx(0.4)}
    [pred] = pipe([food])
    assert pred["ranked_poi_ids"] == ["a", "c", "b"]
    assert pred["meta"] == {"aspect_weights": {"food": 1.0}}
    # no aspect words: 0.1 * stars only
    [plain] = pipe([row(["Hello there"], candidates=("a", "b", "c"))])
    assert plain["ranked_poi_ids"] == ["b", "c", "a"]
    assert "meta" not in plain


def test_pipeline_excludes_rejected_and_breaks_ties_by_id(tmp_path):
    pois = [poi("z", "Zed", stars=4.0), poi("m", "Em", stars=4.0), poi("a", "Ay", stars=4.0)]
    kb = load_kb(tmp_path, pois, {"z": ["ok place"], "m": ["ok place"], "a": ["ok place"]})
    pipe = AspectBaseline(kb)
    [pred] = pipe([row(["anything"], candidates=("z", "m", "a"))])
    assert pred["ranked_poi_ids"] == ["a", "m", "z"]
    [pred] = pipe([row(["anything"], candidates=("z", "m", "a"), rejected=("a",))])
    assert pred["ranked_poi_ids"] == ["m", "z"]


def test_parameters_are_config(abc_kb):
    pipe = AspectBaseline(abc_kb, hits_for_full_weight=1, stars_weight=0.0)
    assert pipe.get_config_dict() == {"hits_for_full_weight": 1, "stars_weight": 0.0}
    with pytest.raises(ValueError, match="hits_for_full_weight"):
        AspectBaseline(abc_kb, hits_for_full_weight=0)
    with pytest.raises(TypeError, match="unknown parameter"):
        AspectBaseline(abc_kb, alpha=1)
