"""Hybrid-RRF: the fusion numbers, the stars+price ranker, 3-way fallback and 4-way with the real model."""

from __future__ import annotations

import pytest

import baselines.non_llm.hybrid_rrf as hybrid
from baselines.base import rank_by_score
from baselines.non_llm.aspect import AspectBaseline
from baselines.non_llm.hybrid_rrf import HybridRRFBaseline, rrf_fuse, stars_price_ranking
from baselines.non_llm.tfidf import TfidfBaseline
from baselines.toolkit.dense import DenseIndex, DenseUnavailable
from tests.support.non_llm import CELL_IDS, poi, row
from trace_dataset.records import Poi


def test_rrf_numbers_k60():
    fused = rrf_fuse({"r1": ["a", "b", "c"], "r2": ["b", "a", "c"], "r3": ["c", "b", "a"]})
    assert fused["a"] == pytest.approx(1 / 61 + 1 / 62 + 1 / 63)
    assert fused["b"] == pytest.approx(1 / 62 + 1 / 61 + 1 / 62)
    assert fused["c"] == pytest.approx(1 / 63 + 1 / 63 + 1 / 61)
    # b: 0.048654, a: 0.048519, c: 0.048139
    assert rank_by_score(["a", "b", "c"], fused) == ["b", "a", "c"]


def test_rrf_equal_rank_multisets_tie_exactly_and_go_by_id():
    # a has ranks (1, 2, 3) and b (3, 2, 1) in other orders: same sum, whatever the float addition order
    fused = rrf_fuse([["a", "c", "b"], ["c", "a", "b"], ["b", "c", "a"], ["c", "b", "a"]], k=60)
    assert fused["a"] == fused["b"]
    assert rank_by_score(["b", "a", "c"], fused) == ["c", "a", "b"]
    assert rrf_fuse([["x", "y"], ["y", "x"]], k=0) == {"x": 1.5, "y": 1.5}


def p(bid, stars, price, count=10) -> Poi:
    return Poi.from_dict(poi(bid, bid, stars=stars, price=price, review_count=count))


def test_stars_price_ranker():
    pois = [p("a", 4.5, 3), p("b", 4.0, 1), p("c", 4.5, 2), p("d", 5.0, None), p("e", 4.0, 1, count=50)]
    # no ceiling: stars desc, then cheaper, then more reviews, then id
    assert stars_price_ranking(pois, None) == ["d", "c", "a", "e", "b"]
    # ceiling $$: a ($$$) drops behind everything within budget; unknown price counts as within
    assert stars_price_ranking(pois, 2) == ["d", "c", "e", "b", "a"]


def test_three_way_when_dense_is_off(cell_kb):
    pipe = HybridRRFBaseline(cell_kb, use_dense=False)
    assert pipe.rankers == ("tfidf", "aspect", "stars_price")
    assert pipe.get_config_dict() == {
        "k": 60,
        "use_dense": False,
        "rankers": ["tfidf", "aspect", "stars_price"],
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "query_mode": "turn_mean",
        "precision": "fp32",
    }
    assert "variant" not in HybridRRFBaseline(cell_kb, use_dense=False, precision="bf16").describe()
    r = row(["Fresh oysters and seafood, good service, something cheap"], candidates=CELL_IDS)
    inp = pipe.preprocess(r)
    rankings = pipe.rankings(inp)
    # each component ranking is the standalone baseline's ranking
    assert rankings["tfidf"] == next(TfidfBaseline(cell_kb)([r]))["ranked_poi_ids"]
    assert rankings["aspect"] == next(AspectBaseline(cell_kb)([r]))["ranked_poi_ids"]
    assert rankings["stars_price"] == stars_price_ranking([cell_kb.pois[c] for c in CELL_IDS], 2)
    [pred] = pipe([r])
    assert pred["ranked_poi_ids"] == rank_by_score(list(CELL_IDS), rrf_fuse(rankings, 60))
    top = pred["ranked_poi_ids"][0]
    assert pred["meta"] == {"top_ranks": {name: rankings[name].index(top) + 1 for name in rankings}}


def test_falls_back_to_three_way_when_dense_is_unavailable(cell_kb, monkeypatch):
    def broken(*args, **kwargs):
        raise DenseUnavailable("no model here")

    monkeypatch.setattr(hybrid, "DenseIndex", broken)
    pipe = HybridRRFBaseline(cell_kb)
    assert pipe.rankers == ("tfidf", "aspect", "stars_price")
    config = pipe.get_config_dict()
    assert config["use_dense"] is None and config["dense_unavailable"] == "no model here"
    with pytest.raises(DenseUnavailable):
        HybridRRFBaseline(cell_kb, use_dense=True)


def test_parameter_checks(cell_kb):
    with pytest.raises(ValueError, match="k must be"):
        HybridRRFBaseline(cell_kb, k=-1, use_dense=False)
    with pytest.raises(ValueError, match="use_dense"):
        HybridRRFBaseline(cell_kb, use_dense="yes")
    with pytest.raises(ValueError, match="unknown precision 'int8'"):
        HybridRRFBaseline(cell_kb, use_dense=False, precision="int8")


def test_precision_reaches_the_dense_index(cell_kb, monkeypatch):
    made = []

    def recording(*args, **kwargs):
        made.append(kwargs["precision"])
        raise DenseUnavailable("no model here")

    monkeypatch.setattr(hybrid, "DenseIndex", recording)
    assert HybridRRFBaseline(cell_kb, precision="bf16").get_config_dict()["precision"] == "bf16"
    assert made == ["bf16"]


def test_k_trades_first_places_for_consistency():
    # two rankers: x is 1st and 4th, y is 2nd and 2nd. Small k rewards x's first place, large k y's consistency
    rankings = [["x", "y", "w", "z"], ["w", "y", "z", "x"]]
    assert rank_by_score(list("wxyz"), rrf_fuse(rankings, k=0))[:2] == ["w", "x"]  # 1 + 1/3 ties, w < x
    assert rrf_fuse(rankings, k=0)["x"] > rrf_fuse(rankings, k=0)["y"]  # 1.25 > 1.0
    assert rrf_fuse(rankings, k=60)["y"] > rrf_fuse(rankings, k=60)["x"]  # 2/62 > 1/61 + 1/64


@pytest.mark.slow
def test_four_way_with_the_real_model(tmp_path, cell_kb, minilm):
    index = DenseIndex(cell_kb, encoder=minilm, cache_dir=tmp_path / "c")
    pipe = HybridRRFBaseline(cell_kb, dense_index=index)
    assert pipe.rankers == ("tfidf", "aspect", "dense", "stars_price")
    r = row(["I want sushi and Japanese food"], candidates=CELL_IDS, rejected=("p_veg",))
    [pred] = pipe([r])
    rankings = pipe.rankings(pipe.preprocess(r))
    assert set(rankings) == {"tfidf", "aspect", "dense", "stars_price"}
    assert all("p_veg" not in ranking for ranking in rankings.values())
    assert pred["ranked_poi_ids"] == rank_by_score([c for c in CELL_IDS if c != "p_veg"], rrf_fuse(rankings))
    assert rankings["dense"][0] == "p_sus"
    bf16 = DenseIndex(cell_kb, encoder=minilm, cache_dir=tmp_path / "c", precision="bf16")
    fused = HybridRRFBaseline(cell_kb, dense_index=bf16)
    assert fused.precision == "bf16" and fused.describe()["variant"] == "bf16"
