"""Each table convention on a hand-computed case: CGS of means, Popularity, budget words, compare turns,
grounding turns."""

from __future__ import annotations

import pytest

from trace_dataset.io import write_jsonl
from trace_metrics.lib import conventions, grounding, selection, suite
from trace_metrics.lib.entailment import aggregate_entailment

REVIEW = "The seafood gumbo was rich and smoky, and the staff were quick."


# -- CGS of means vs mean of per-turn CGS -------------------------------------------------------------
def test_cgs_is_the_formula_on_the_means_and_differs_from_the_turn_mean():
    responses = [
        'Gumbo House: "The seafood gumbo was rich and smoky" [R1].',  # GS 1, CD 7/9, PC 1 -> CGS 1
        "Gumbo House is a fine choice.",  # GS 1 (no quote), CD 0, PC 1 -> CGS 0
    ]
    out = grounding.score(responses, [[REVIEW], [REVIEW]], return_per_item=True)
    assert out["citation_density_per_item"] == [pytest.approx(7 / 9), 0.0]  # 9 words without the label
    assert out["cgs_per_item"] == [1.0, 0.0]
    assert out["cgs_turn_mean"] == 0.5  # (1 + 0) / 2
    # the paper's tables: GS 1 x min(1, (7/18) / 0.05) x (0.5 + 0.5 x 1) = 1
    assert out["cgs"] == 1.0
    # with a stricter gate the mean pays too: 1 x ((7/18) / 0.5) x 1; per turn: (7/9) / 0.5 > 1 -> 1, and 0
    stricter = grounding.score(responses, [[REVIEW], [REVIEW]], cd_gate=0.5)
    assert stricter["cgs"] == pytest.approx(7 / 9) and stricter["cgs_turn_mean"] == 0.5


def test_cgs_ent_is_the_formula_on_the_means():
    results = [{"entailment": e, "n_claims": 1, "claims": []} for e in (0.5, 1.0, 0.0)]
    out = aggregate_entailment(results, [0.40, 0.02, 0.30], [1.0, 1.0, 0.0])
    assert out["cgs_ent_turn_mean"] == pytest.approx((0.5 + 0.4 + 0.0) / 3)
    assert out["cgs_ent"] == pytest.approx(0.5 * 1.0 * (0.5 + 0.5 * 2 / 3))


def test_suite_reports_both_and_the_paper_value_of_table_5():
    # Table 5/6 TF-IDF means: GS 0.998, CD 0.377, PC 0.555 -> the printed CGS 0.776
    assert grounding.of_means(0.998, 0.377, 0.555) == pytest.approx(0.776, abs=5e-4)
    assert grounding.of_means(None, 0.3, 1.0) is None


# -- Popularity ignores the dialogue, rejections included ----------------------------------------------
def _popularity_kb(tmp_path):
    from tests.support.baselines import poi, write_kb
    from trace_dataset.kb.store import KnowledgeBase

    pois = [
        poi("p_top", "Top Spot", stars=4.8),
        poi("p_mid", "Mid Spot", stars=4.2),
        poi("p_low", "Low Spot", stars=3.5),
    ]
    reviews = {p["business_id"]: ["Great food and a friendly staff all evening long."] for p in pois}
    return KnowledgeBase.load(write_kb(tmp_path / "kb", pois, reviews))


def test_popularity_keeps_a_rejected_poi_by_default(tmp_path):
    from baselines import pipeline
    from tests.support.baselines import row, turn

    kb = _popularity_kb(tmp_path)
    h = [
        turn(0, "user", "greet_and_seek", "Dinner please"),
        turn(1, "system", "recommend", "Try Top Spot.", refs=("p_top",)),
        turn(2, "user", "reject_and_refine", "Not Top Spot, too loud.", refs=("p_top",)),
    ]
    r = row(h, "recommend", candidates=("p_low", "p_top", "p_mid"), rejected=("p_top",))
    default = next(iter(pipeline("popularity", kb=kb)([r])))
    assert default["ranked_poi_ids"] == [
        "p_top",
        "p_mid",
        "p_low",
    ]  # no adaptation: the same ranking as before
    assert not default["response"].startswith("Understood")  # and no claim to have dropped it
    dropping = pipeline("popularity", kb=kb, drop_rejected=True)
    pred = next(iter(dropping([r])))
    assert pred["ranked_poi_ids"] == ["p_mid", "p_low"]
    assert pred["response"].startswith("Understood, Top Spot is off the list.")
    assert pipeline("popularity", kb=kb).get_config_dict() == {"drop_rejected": False}
    assert dropping.describe()["parameters"] == {"drop_rejected": True}
    from trace_harness.leaderboard.build import system_label

    assert system_label(dropping.describe()) == "Popularity [drops rejected]"  # the table says which reading
    assert system_label(pipeline("popularity", kb=kb).describe()) == "Popularity"  # the paper's, by default
    with pytest.raises(ValueError, match="drop_rejected"):
        pipeline("popularity", kb=kb, drop_rejected="yes")


# -- the budget word: one reading for the metric and the baselines --------------------------------------
@pytest.mark.parametrize(
    "texts, ceiling",
    [
        (["Something cheap, nothing upscale"], 4),  # the latest word wins, not the strictest
        (["Something upscale", "actually affordable is better"], 2),
        (["We are on a budget-friendly trip"], 2),  # "budget" stands whole before the hyphen
        (["A mid-range place", "or moderate"], 3),  # "mid-range": the generator's word beside "moderate"
        (["budgetary cheapness"], None),
        ([], None),
    ],
)
def test_price_ceiling_latest_word_shared_by_metric_and_dialogue_state(texts, ceiling):
    from baselines.toolkit.state import dialogue_state
    from tests.support.baselines import row, turn
    from trace_metrics.lib import practical

    assert conventions.price_ceiling(texts) == practical.price_ceiling(texts) == ceiling
    history = [turn(2 * i, "user", "provide_preference", t) for i, t in enumerate(texts)]
    assert dialogue_state(row(history), {}).price_ceiling == ceiling
    assert conventions.BUDGET_RULE == "latest"


# -- compare turns: top two, for hits and for practical value --------------------------------------------
def test_compare_turn_recommends_its_top_two():
    assert conventions.COMPARE_TOP_K == 2
    assert conventions.is_hit("compare", ["a", "g"], {"g"}) is True  # gold second: the comparison showed it
    assert conventions.is_hit("recommend", ["a", "g"], {"g"}) is False  # a recommend turn: top-1 only
    assert conventions.is_hit("compare", ["a", "b", "g"], {"g"}) is False
    assert conventions.recommended_by_turn("compare", ["a", "b", "c"], ["x"]) == ["a", "b", "x"]
    assert conventions.recommended_by_turn("recommend", ["a", "b"], ["x"]) == ["a", "x"]
    assert conventions.recommended_by_turn("farewell", ["a"]) == []
    with pytest.raises(ValueError, match="recommend/compare"):
        conventions.is_hit("farewell", ["a"], {"a"})


def test_compare_turn_in_recovery_and_practical_value():
    turn = selection.EvalTurn("d", 3, "compare", "", ("g",), (), ("a", "g", "b"), "", {})
    miss = selection.EvalTurn("d", 5, "recommend", "", ("g",), (), ("a", "g"), "", {})
    d = selection.EvalDialogue(
        "d",
        ("greet_and_seek", "ask_preference", "reject_and_refine", "compare", "x", "recommend"),
        (),
        (turn, miss),
        (3, 5),
    )
    assert selection.recovery_turns(d)[3] == ("compare", True) and selection.recovery_turns(d)[5] == (
        "recommend",
        False,
    )
    assert selection.recommended_pois(d.system_turns) == ["a", "g"]


def test_rejection_after_a_compare_turn_rejects_both_compared_pois():
    from baselines.toolkit.state import rejected_pois
    from tests.support.baselines import row, turn

    h = [
        turn(1, "system", "compare", "Smoky Pit BBQ or Harbor Fish House?", refs=("p_bbq", "p_sea")),
        turn(2, "user", "reject_and_refine", "Neither, something quieter."),
    ]
    assert rejected_pois(row(h), {}) == ["p_bbq", "p_sea"]
    h[0] = turn(1, "system", "recommend", "Smoky Pit BBQ", refs=("p_bbq",))
    assert rejected_pois(row(h), {}) == ["p_bbq"]


# -- grounding turns: recommend/compare (default) or every system turn ---------------------------------
def test_grounding_turns_switch_on_the_toy_corpus(data_dir, reference_rows, tmp_path):
    path = tmp_path / "preds.jsonl"
    write_jsonl(path, reference_rows)
    rec = suite.evaluate_run(data_dir, path)
    every = suite.evaluate_run(data_dir, path, grounding_turns="system")
    assert (
        rec["config"]["grounding"]["turns"] == "recommendation"
        and every["config"]["grounding"]["turns"] == "system"
    )
    # 6 recommend/compare turns of 10 system turns; the 4 others (ask_preference, farewell) quote nothing
    assert rec["n"]["grounding_score"] == 6 and every["n"]["grounding_score"] == 10
    assert every["values"]["grounding_score"] == 1.0  # vacuous GS of the quote-free turns
    assert every["values"]["citation_density"] == pytest.approx(rec["values"]["citation_density"] * 6 / 10)
    # App. J: a turn with no aspect mention that recommends nothing is left out of the PC mean
    items = every["per_item"]["system_turns"]
    left_out = [i for i, v in enumerate(items["provenance_coverage"]) if v is None]
    assert left_out and every["n"]["provenance_coverage"] == 10 - len(left_out)
    assert "grounding_score" not in every["per_item"]["recommendation_turns"]
    with pytest.raises(ValueError, match="grounding_turns"):
        suite.evaluate_run(data_dir, path, grounding_turns="all")
