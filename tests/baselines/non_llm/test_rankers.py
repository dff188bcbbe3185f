"""Each ranking formula on small hand-made knowledge bases, with hand-computed expectations."""

from __future__ import annotations

import math

import pytest

from baselines import pipeline
from baselines.toolkit.geo import haversine_m
from baselines.toolkit.tfidf import TfidfIndex, TfidfScorer, log_tf, smooth_idf
from tests.support.baselines import CITY, poi, row, turn, write_kb
from trace_dataset.kb.store import KnowledgeBase


# ---------------------------------------------------------------------------------------------------
# TF-IDF
# ---------------------------------------------------------------------------------------------------
def test_tfidf_weights_by_hand():
    assert log_tf(1) == 1.0
    assert log_tf(2) == pytest.approx(1.693147, abs=1e-6)
    assert smooth_idf(3, 2) == pytest.approx(math.log(4 / 3) + 1)  # 1.287682
    idx = TfidfIndex({"A": ["pizza", "pizza", "beer"], "B": ["pizza", "wine"], "C": ["sushi"]})
    q = idx.query_vector(["pizza", "unknown"])  # out-of-vocabulary terms are ignored
    assert q == {"pizza": pytest.approx(1.0)}
    # A = (pizza 1.693147 * 1.287682, beer 1 * 1.693147) / norm 2.760464 -> cosine 0.789807
    assert idx.score(q, "A") == pytest.approx(0.789807, abs=1e-6)
    # B = (pizza 1.287682, wine 1.693147) / 2.127175 -> 0.605349
    assert idx.score(q, "B") == pytest.approx(0.605349, abs=1e-6)
    assert idx.score(q, "C") == 0.0
    # a two-term query: q = (pizza 1.287682, beer 1.693147) / 2.127175
    q2 = idx.query_vector(["pizza", "beer"])
    expected = (2.180233 * 1.287682 + 1.693147 * 1.693147) / (2.760464 * 2.127175)
    assert idx.score(q2, "A") == pytest.approx(expected, abs=1e-5)


@pytest.fixture
def tfidf_kb(tmp_path):
    pois = [
        poi("t_a", "Alpha"),
        poi("t_b", "Bravo"),
        poi("t_c", "Charlie"),
        poi("t_h", "Hotel Zulu", poi_type="hotel", categories=("Hotels",)),
    ]
    reviews = {
        "t_a": ["pizza pizza and beer"],
        "t_b": ["pizza with wine"],
        "t_c": ["the sushi"],
        "t_h": ["pizza pizza pizza pizza"],
    }
    return KnowledgeBase.load(write_kb(tmp_path / "kb", pois, reviews))


def test_tfidf_document_is_name_categories_reviews_and_index_is_per_cell(tfidf_kb):
    scorer = TfidfScorer(tfidf_kb)
    idx = scorer.index(CITY, "restaurant")
    # n = 3 restaurants (the hotel lives in its own cell); "restaurants" (category) is in every document
    assert idx.n_docs == 3
    assert idx.idf["restaurants"] == pytest.approx(1.0)
    assert idx.idf["pizza"] == pytest.approx(math.log(4 / 3) + 1)
    assert "alpha" in idx.vector("t_a") and "and" not in idx.vector("t_a")  # stop word dropped
    assert scorer.index(CITY, "restaurant") is idx  # cached
    s = scorer.scores("I want pizza", ["t_a", "t_b", "t_c"])
    # Document A = alpha, restaurants, pizza x2, beer: weights alpha 1.693147, restaurants 1.0,
    # pizza 1.693147 * 1.287682, beer 1.693147
    a = [1.693147, 1.0, 1.693147 * 1.287682, 1.693147]
    assert s["t_a"] == pytest.approx(a[2] / math.sqrt(sum(w * w for w in a)), abs=1e-6)
    assert s["t_c"] == 0.0


def test_tfidf_ranking_ties_and_stop_words(tfidf_kb):
    p = pipeline("tfidf", kb=tfidf_kb)
    r = row([turn(0, "user", "greet_and_seek", "pizza")], candidates=("t_c", "t_b", "t_a"))
    assert next(iter(p([r])))["ranked_poi_ids"] == ["t_a", "t_b", "t_c"]
    # a query of stop words only matches nothing: all ties, broken by business_id
    r = row([turn(0, "user", "greet_and_seek", "the and of it")], candidates=("t_c", "t_b", "t_a"))
    assert next(iter(p([r])))["ranked_poi_ids"] == ["t_a", "t_b", "t_c"]


# ---------------------------------------------------------------------------------------------------
# Popularity
# ---------------------------------------------------------------------------------------------------
def test_popularity_stars_then_review_count_then_id(tmp_path):
    pois = [
        poi("x1", "One", stars=4.5, review_count=10),
        poi("x2", "Two", stars=4.5, review_count=30),
        poi("x3", "Three", stars=5.0, review_count=3),
        poi("x0", "Zero", stars=4.5, review_count=10),
        poi("x4", "Four", stars=2.0, review_count=999),
    ]
    kb = KnowledgeBase.load(
        write_kb(tmp_path / "kb", pois, {p["business_id"]: ["Nice place overall here."] for p in pois})
    )
    p = pipeline("popularity", kb=kb)
    h = [turn(0, "user", "greet_and_seek", "Anything with four stars")]
    r = row(h, candidates=("x4", "x1", "x2", "x3", "x0"))
    assert next(iter(p([r])))["ranked_poi_ids"] == ["x3", "x2", "x0", "x1", "x4"]
    # the dialogue does not matter
    r2 = row(
        [turn(0, "user", "greet_and_seek", "Four! Four! x4 Four")], candidates=("x4", "x1", "x2", "x3", "x0")
    )
    assert next(iter(p([r2])))["ranked_poi_ids"] == ["x3", "x2", "x0", "x1", "x4"]


# ---------------------------------------------------------------------------------------------------
# Spatial
# ---------------------------------------------------------------------------------------------------
def test_haversine_one_degree_of_latitude():
    assert haversine_m(0.0, 0.0, 1.0, 0.0) == pytest.approx(111_195, rel=1e-4)
    assert haversine_m(39.95, -75.16, 39.95, -75.16) == 0.0


@pytest.fixture
def spatial_kb(tmp_path):
    # Old City anchor (39.9522, -75.1440); three restaurants at growing distances east of it
    pois = [
        poi("s_near", "Near Place", lat=39.9522, lon=-75.1440),
        poi("s_mid", "Mid Place", lat=39.9522, lon=-75.1340),
        poi("s_far", "Far Place", lat=39.9522, lon=-75.1240),
        poi("s_nowhere", "Lost Place", lat=0.0, lon=0.0),
    ]
    reviews = {
        "s_near": ["good coffee here today"],
        "s_mid": ["great ramen ramen and coffee"],
        "s_far": ["ramen ramen ramen noodles"],
        "s_nowhere": ["ramen spot somewhere"],
    }
    return KnowledgeBase.load(write_kb(tmp_path / "kb", pois, reviews))


def test_spatial_blend_by_hand(spatial_kb):
    p = pipeline("spatial", kb=spatial_kb)
    h = [turn(0, "user", "greet_and_seek", "ramen near Old City")]
    r = row(h, candidates=("s_near", "s_mid", "s_far", "s_nowhere"))
    inp = p.preprocess(r)
    assert inp["state"].anchor == "Old City"
    scores = p.score(inp)
    text = TfidfScorer(spatial_kb).scores(inp["query"], inp["candidates"])
    top = max(text.values())
    anchor = (39.9522, -75.1440)
    d = {
        pid: haversine_m(*anchor, spatial_kb.pois[pid].latitude, spatial_kb.pois[pid].longitude)
        for pid in ("s_near", "s_mid", "s_far")
    }
    d_max = d["s_far"]
    for pid in ("s_near", "s_mid", "s_far"):
        assert scores[pid] == pytest.approx(0.7 * text[pid] / top + 0.3 * (1 - d[pid] / d_max))
    assert scores["s_nowhere"] == pytest.approx(0.7 * text["s_nowhere"] / top)  # no coordinates: spatial 0
    assert d["s_near"] == 0.0 and scores["s_far"] == pytest.approx(0.7 * text["s_far"] / top)
    out = next(iter(p([r])))
    assert out["meta"] == {"anchor": "Old City"}


def test_spatial_falls_back_to_the_city_centre(spatial_kb):
    p = pipeline("spatial", kb=spatial_kb, text_weight=0.0, spatial_weight=1.0)
    r = row([turn(0, "user", "greet_and_seek", "ramen please")], candidates=("s_near", "s_mid", "s_far"))
    inp = p.preprocess(r)
    assert p.anchor(inp) == ("city_centre", (39.9526, -75.1652))
    # pure distance to the centre (-75.1652): near (-75.1440) is closest
    assert next(iter(p([r])))["ranked_poi_ids"] == ["s_near", "s_mid", "s_far"]
    assert p.get_config_dict() == {"text_weight": 0.0, "spatial_weight": 1.0}
    resp = next(
        iter(
            p(
                [
                    row(
                        [turn(0, "user", "greet_and_seek", "ramen")],
                        "recommend",
                        candidates=("s_near", "s_mid"),
                    )
                ]
            )
        )
    )["response"]
    assert "from the centre of Philadelphia" in resp


# ---------------------------------------------------------------------------------------------------
# Itinerary
# ---------------------------------------------------------------------------------------------------
@pytest.fixture
def itin_kb(tmp_path):
    # metres east of (39.95, -75.15): 1e-3 degree of longitude ~ 85.3 m at this latitude
    def east(m):
        return -75.15 + m / 85_260.0

    pois = [
        poi("r_1", "Start Diner", lat=39.95, lon=east(0)),
        poi("r_2", "Other Diner", lat=39.95, lon=east(100)),  # same type: no edge
        poi("h_1", "Near Hotel", lat=39.95, lon=east(300), poi_type="hotel"),
        poi("h_2", "Far Hotel", lat=39.95, lon=east(450), poi_type="hotel"),
        poi("a_1", "Museum Two", lat=39.95, lon=east(700), poi_type="attraction"),  # 400 m from h_1
        poi("a_2", "Museum Far", lat=39.95, lon=east(5000), poi_type="attraction"),
        poi("r_3", "No Coords Diner", lat=0.0, lon=0.0),
    ]
    reviews = {
        p["business_id"]: [f"Lovely {p['name'].lower()} with friendly staff and fair prices."] for p in pois
    }
    return KnowledgeBase.load(write_kb(tmp_path / "kb", pois, reviews))


def test_itinerary_graph_and_greedy_tour(itin_kb):
    p = pipeline("itinerary", kb=itin_kb)
    g = p.graphs[CITY]
    assert [pid for _, pid in g.neighbours["r_1"]] == ["h_1", "h_2"]  # no same-type edge to r_2
    assert "a_1" not in [pid for _, pid in g.neighbours["r_1"]]  # 700 m > 500 m
    assert g.neighbours["a_2"] == []
    assert "r_3" not in g.neighbours  # not coordinate-valid
    tour = p.tour(["r_3", "r_1", "r_2"])  # starts at the first coordinate-valid POI
    assert [pid for pid, _ in tour] == ["r_1", "h_1", "a_1"]
    assert tour[1][1] == pytest.approx(300, abs=2) and tour[2][1] == pytest.approx(400, abs=2)
    # a rejected POI is never visited
    assert [pid for pid, _ in p.tour(["r_1"], rejected=("h_1",))] == ["r_1", "h_2", "a_1"]
    assert [pid for pid, _ in pipeline("itinerary", kb=itin_kb, max_stops=2).tour(["r_1"])] == ["r_1", "h_1"]


def test_itinerary_ranks_like_tfidf_and_annotates_distances(itin_kb):
    itin, tfidf = pipeline("itinerary", kb=itin_kb), pipeline("tfidf", kb=itin_kb)
    for text, top in (("the start diner please", "r_1"), ("the other diner please", "r_2")):
        r = row([turn(0, "user", "greet_and_seek", text)], candidates=("r_1", "r_2", "r_3"))
        a, b = next(iter(itin([r]))), next(iter(tfidf([r])))
        assert a["ranked_poi_ids"] == b["ranked_poi_ids"] and a["ranked_poi_ids"][0] == top
    r = row([turn(0, "user", "greet_and_seek", "the start diner please")], candidates=("r_1", "r_2", "r_3"))
    a = next(iter(itin([r])))
    assert a["meta"]["itinerary_poi_ids"] == ["r_1", "h_1", "a_1"]
    assert "walk 300 m to Near Hotel (hotel)" in a["response"] and "then 400 m to Museum Two" in a["response"]
    assert set(a["citations"].values()) == {"r_r_1_0", "r_h_1_0", "r_a_1_0"}
    # compare turns state how far apart the two POIs are
    c = next(iter(itin([row(r["history"], "compare", candidates=("r_1", "r_2"))])))
    assert c["response"].endswith("They are 100 m apart.")


def test_format_distance():
    from baselines.toolkit.responses import format_distance

    assert format_distance(0) == "0 m"
    assert format_distance(999.4) == "999 m"
    assert format_distance(999.6) == "1.0 km"
    assert format_distance(1549) == "1.5 km"
    assert format_distance(12_340) == "12.3 km"
