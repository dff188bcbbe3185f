"""End to end: a hand-made data directory, a perturbed system, every value checked by hand."""

from __future__ import annotations

import importlib.util
import json

import pytest

from tests.support.llm import ScriptedLLM
from trace_dataset.constants import REVIEWS_FILE
from trace_dataset.io import TraceDataError, write_json, write_jsonl
from trace_dataset.schema import DIALOGUE_FEATURES
from trace_metrics.lib import practical, suite, text
from trace_metrics.lib.toy import _POIS, toy_dialogues
from trace_metrics.specs import MODEL_FREE_METRIC_IDS


def _pt(pid):
    _, lat, lon, price, poi_type = _POIS[pid]
    return practical.PoiPoint(lat, lon, price, poi_type)


def perturbed(rows):
    """The reference system with three top-1 misses and one response citing a label it does not define."""
    by_key = {(r["dialogue_id"], r["turn_id"]): r for r in rows}

    by_key[("toy_00001", 3)]["ranked_poi_ids"] = ["r02", "r01", "r03"]  # gold r01 second
    by_key[("toy_00002", 1)]["ranked_poi_ids"] = [
        "r03",
        "r04",
        "r05",
    ]  # compare: gold r04 second, alternative r03 first
    by_key[("toy_00003", 1)]["ranked_poi_ids"] = ["r05", "r09"]  # gold r09 second
    by_key[("toy_00003", 3)]["response"] = 'Frenchmen Oysters: "Raw oysters were briny and fresh" [R2].'
    return rows


@pytest.fixture
def run(data_dir, reference_rows, tmp_path):
    path = tmp_path / "preds.jsonl"
    write_jsonl(path, perturbed(reference_rows))
    return path


def test_toy_dialogues_follow_the_schema():
    for d in toy_dialogues():
        DIALOGUE_FEATURES.encode_example(d)  # raises on a wrong field or type


def test_hand_computed_values(data_dir, run):
    r = suite.evaluate_run(data_dir, run, split="test", pool="closed")
    v, n = r["values"], r["n"]
    # accuracy over the 6 recommend/compare turns: hits at D1t5, D2t3, D3t3; golds missed are ranked second
    assert v["recall@1"] == 0.5 and v["recall@3"] == 1.0 and v["mrr"] == 0.75 and v["hit@5"] == 1.0
    assert v["mr_recall@1"] == pytest.approx(4 / 6)  # D2t1's top-1 r03 is an acceptable alternative
    assert n["recall@1"] == 6
    # grounding: D3t3 quotes a review through [R2], which the row does not define -> GS 0, CD 0, CGS 0;
    # cgs, the formula on the means: 5/6 x min(1, CD mean / 0.05) x (0.5 + 0.5 x 1) with CD mean >= 0.05
    assert v["grounding_score"] == pytest.approx(5 / 6) and v["cgs"] == pytest.approx(5 / 6)
    assert v["provenance_coverage"] == 1.0 and r["counts"]["unresolved_labels"] == 1
    # recovery: D1 and D3 hit at their second recommendation; D2's compare turn puts its top two forward
    # (conventions.is_hit) and r04 (gold) is second: a hit at the first; both rejections are followed by a hit
    assert (v["tsr"], v["t2r"], v["rejection_recovery"]) == (1.0, pytest.approx(5 / 3), 1.0)
    assert (n["tsr"], n["t2r"], n["rejection_recovery"]) == (3, 3, 2)
    # practical: recommended = top-1 (top-2 for compare), then the POIs whose reviews the response cites.
    # D1 ranks r02 first but its response cites r01's review -> [r02, r01] (about 0.1 km apart);
    # D2 compares r03, r04 then recommends r10; D3 ranks r05 first, cites r09 (about 1.8 km) -> [r05, r09]
    d1, d2, d3 = [_pt("r02"), _pt("r01")], [_pt("r03"), _pt("r04"), _pt("r10")], [_pt("r05"), _pt("r09")]
    assert practical.spatial_coherence(d2, 2.0) == pytest.approx(1 / 3)
    assert practical.spatial_coherence(d1, 2.0) == practical.spatial_coherence(d3, 2.0) == 1.0
    assert v["spatial_coherence@2km"] == pytest.approx((1 + 1 / 3 + 1) / 3)
    assert n["spatial_coherence@2km"] == 3
    routes = [practical.route_length_km(d) for d in (d1, d2, d3)]
    assert v["route_efficiency_km"] == pytest.approx(sum(routes) / 3)
    # budgets: D1 "cheap" ($$; r02 $$, r01 $), D2 "upscale" then "affordable": the latest -> $$ (r04 is $$$), D3 none
    assert v["price_alignment"] == pytest.approx((1 + 2 / 3) / 2) and n["price_alignment"] == 2
    assert v["itinerary_diversity"] == pytest.approx(1 / 3)
    # text: every system turn; only D3t3 differs from the reference
    items = r["per_item"]["system_turns"]
    assert n["bleu4"] == len(items["bleu4"]) == 10
    changed = items["turn_id"].index(3, 7)
    assert items["rouge_l"][changed] < 1.0 and items["rouge_l"].count(1.0) == 9
    assert items["bleu4"][changed] == text.bleu4(
        'Frenchmen Oysters: "Raw oysters were briny and fresh" [R2].',
        'Frenchmen Oysters: "Raw oysters were briny and fresh" [R1].',
    )
    assert set(v) == set(MODEL_FREE_METRIC_IDS)
    assert v["cgs_turn_mean"] == pytest.approx(5 / 6)  # per-turn CGS 1, 1, 1, 1, 1, 0 (CD >= 0.05, PC 1)


def test_result_shape_std_and_per_item(data_dir, run):
    r = suite.evaluate_run(data_dir, run, split="test", pool="closed")
    assert list(r) == [
        "values",
        "n",
        "std",
        "aggregates",
        "counts",
        "versions",
        "config",
        "models",
        "per_item",
    ]
    assert set(r["std"]) == set(r["values"]) and r["std"]["cgs"] is None  # a formula of means has no item sd
    assert r["std"]["recall@1"] == pytest.approx(0.5)  # population std of [0, 1, 0, 1, 0, 1]
    rec = r["per_item"]["recommendation_turns"]
    assert rec["dialogue_id"] == ["toy_00001"] * 2 + ["toy_00002"] * 2 + ["toy_00003"] * 2
    assert rec["turn_id"] == [3, 5, 1, 3, 1, 3] and rec["recall@1"] == [0.0, 1.0, 0.0, 1.0, 0.0, 1.0]
    assert r["per_item"]["rejection_episodes"] == {
        "dialogue_id": ["toy_00001", "toy_00002"],
        "turn_id": [4, 2],
        "rejection_recovery": [1.0, 1.0],
    }
    assert r["per_item"]["dialogues"]["spatial_coherence@2km"] == [1.0, pytest.approx(1 / 3), 1.0]
    assert r["versions"]["corpus"] == "toy-corpus-1" and r["versions"]["kb"] == "toy-kb-1"
    assert r["config"]["predictions"]["file"] == "preds.jsonl" and r["config"]["grounding"]["cd_gate"] == 0.05
    assert (
        r["counts"]["dialogues_with_budget"] == 2 and r["counts"]["rejection_episodes_without_followup"] == 0
    )


def test_deterministic(data_dir, run):
    a = json.dumps(suite.evaluate_run(data_dir, run, sweeps=True), sort_keys=False)
    b = json.dumps(suite.evaluate_run(data_dir, run, sweeps=True), sort_keys=False)
    assert a == b


def test_sweeps(data_dir, run):
    s = suite.evaluate_run(data_dir, run, sweeps=True)["sweeps"]
    assert set(s) == {"n", "fuzzy_threshold", "cd_gate", "pc_window", "cgs_variants", "spatial_radius_km"}
    assert list(s["cgs_variants"]) == [
        "cgs",
        "threshold_0.03",
        "threshold_0.10",
        "no_pc_floor",
        "sqrt_pc",
        "geometric",
        "harmonic",
        "additive",
        "gs0",
    ]
    assert s["fuzzy_threshold"]["exact"]["grounding_score"] == pytest.approx(5 / 6)
    assert s["spatial_radius_km"]["spatial_coherence@5km"]["value"] == 1.0


def test_options_change_keys_and_values(data_dir, run):
    r = suite.evaluate_run(data_dir, run, radius_km=5.0, cd_gate=0.5)
    assert r["values"]["spatial_coherence@5km"] == 1.0 and "spatial_coherence@2km" not in r["values"]
    assert r["values"]["cgs"] < 5 / 6  # CD below the stricter gate now costs credit


def test_convention_switches_change_recovery_and_nothing_else(data_dir, run):
    """--compare-hit top1 and --t2r turn_index (trace_metrics/lib/conventions.py) by hand on the perturbed run:
    D1 hits at its second recommendation (turn 5), D2's compare turn (turn 1) has gold r04 second, so it hits
    with top-2 hits and misses with top-1 ones (D2 then hits at turn 3), D3 hits at turn 3."""
    base = suite.evaluate_run(data_dir, run)
    cases = {
        ("top2", "count"): 5 / 3,
        ("top2", "turn_index"): (5 + 1 + 3) / 3,
        ("top1", "count"): 2.0,
        ("top1", "turn_index"): (5 + 3 + 3) / 3,
    }
    for (compare_hit, t2r), expected in cases.items():
        r = suite.evaluate_run(data_dir, run, compare_hit=compare_hit, t2r=t2r)
        assert r["values"]["t2r"] == pytest.approx(expected), (compare_hit, t2r)
        assert (r["values"]["tsr"], r["values"]["rejection_recovery"]) == (1.0, 1.0)  # D2 recovers either way
        others = {m for m in base["values"] if m != "t2r"}
        assert {m: r["values"][m] for m in others} == {m: base["values"][m] for m in others}
        assert r["config"]["conventions"] == {
            **base["config"]["conventions"],
            "compare_hit": compare_hit,
            "t2r": t2r,
        }
    with pytest.raises(ValueError, match="compare_hit"):
        suite.evaluate_run(data_dir, run, compare_hit="top3")
    with pytest.raises(ValueError, match="t2r"):
        suite.evaluate_run(data_dir, run, t2r="turns")


def test_top1_compare_hits_change_success_and_recovery():
    """A compare turn whose gold is second: a hit for the default reading, a miss with compare_hit="top1"."""
    from trace_metrics.lib.conventions import is_hit, recommended_by_turn
    from trace_metrics.lib.recovery import score

    assert is_hit("compare", ["a", "g"], ["g"]) and not is_hit("compare", ["a", "g"], ["g"], "top1")
    assert is_hit("recommend", ["g", "a"], ["g"], "top1") and not is_hit("recommend", ["a", "g"], ["g"])
    assert recommended_by_turn("compare", ["a", "g", "b"]) == [
        "a",
        "g",
    ]  # practical value keeps both either way
    dialogue = [("greet_and_seek", None), ("recommend", False), ("reject_and_refine", None)]
    for compare_hit, expected in (("top2", (1.0, 2.0, 1.0)), ("top1", (0.0, None, 0.0))):
        turns = [*dialogue, ("compare", is_hit("compare", ["a", "g"], ["g"], compare_hit))]
        out = score([turns])
        assert (out["tsr"], out["t2r"], out["rejection_recovery"]) == expected
    assert score([[*dialogue, ("compare", True)]], t2r_reading="turn_index")["t2r"] == 3.0


def test_run_metadata_is_carried(data_dir, run):
    write_json(run.with_name(run.name + ".meta.json"), {"baseline": "tfidf", "family": "non-LLM"})
    assert suite.evaluate_run(data_dir, run)["run"] == {"baseline": "tfidf", "family": "non-LLM"}


def test_not_hydrated_is_a_clear_error(data_dir, run):
    (data_dir / "knowledge_base" / REVIEWS_FILE).unlink()
    with pytest.raises(TraceDataError, match="not-hydrated release|non-hydrated release"):
        suite.evaluate_run(data_dir, run)


def test_unknown_review_is_counted(data_dir, reference_rows, tmp_path):
    reference_rows[1]["citations"] = {"R1": "no_such_review"}
    path = tmp_path / "p.jsonl"
    write_jsonl(path, reference_rows)
    r = suite.evaluate_run(data_dir, path)
    assert r["counts"]["unknown_review_ids"] == 1 and r["values"]["grounding_score"] == pytest.approx(5 / 6)


def test_missing_split_file(data_dir, run):
    (data_dir / "data" / "validation.jsonl.gz").unlink()
    with pytest.raises(TraceDataError, match="missing data/validation.jsonl.gz"):
        suite.evaluate_run(data_dir, run, split="validation")


def test_leaderboard_row_is_flat(data_dir, run):
    row = suite.leaderboard_row(suite.evaluate_run(data_dir, run))
    assert row["recall@1"] == 0.5 and row["recall@1_n"] == 6 and row["n_dialogues"] == 3
    assert not any(isinstance(x, (dict, list)) for x in row.values())


class FakeScorer:
    """Stands in for the NLI scorer (`trace_metrics.lib.entailment.NLIScorer`): every pair is entailed."""

    threshold = 0.5

    def entailment_probs(self, pairs):
        return [0.9] * len(pairs)

    def describe(self):
        return {"model": "fake"}


def test_nli_wiring(data_dir, run):
    r = suite.evaluate_run(data_dir, run, nli=FakeScorer(), sweeps=True)
    # every cited response is entailed; D3t3 cites nothing resolvable -> 0
    assert r["values"]["entailment"] == pytest.approx(5 / 6) and r["values"]["cgs_ent"] == pytest.approx(
        5 / 6
    )
    assert r["models"]["nli"] == {"model": "fake"} and r["n"]["entailment"] == 6
    assert r["aggregates"]["nli_threshold_sweep"]["0.7"] == pytest.approx(5 / 6)


def test_judge_wiring(data_dir, run):
    judge = ScriptedLLM(
        lambda conversation: {
            "relevance": 4,
            "informativeness": 3,
            "grounding": 5,
            "flow": 2,
            "justification": 1,
        }
    )
    r = suite.evaluate_run(data_dir, run, judge=judge)
    assert (r["values"]["judge_relevance"], r["values"]["judge_justification"]) == (4.0, 1.0)
    assert r["n"]["judge_flow"] == 6 and r["models"]["judge"]["n_failed"] == 0
    assert (
        r["models"]["judge"]["backend"] == "scripted"
        and r["models"]["judge"]["prompt"]["file"] == "judge.txt"
    )


def test_cyclic_gc_is_paused_only_while_scoring(data_dir, run, monkeypatch):
    import gc

    from trace_dataset.datadir import iter_dialogues
    from trace_metrics.lib import grounding

    seen: list[bool] = []
    analyse = grounding.analyse

    def spy(*args, **kwargs):
        seen.append(gc.isenabled())
        return analyse(*args, **kwargs)

    monkeypatch.setattr(grounding, "analyse", spy)
    assert gc.isenabled()
    suite.evaluate_run(data_dir, run)
    assert seen and not any(seen) and gc.isenabled()  # paused while scoring, restored after
    with pytest.raises(TraceDataError, match="missing field or prediction"):  # restored after an error too
        suite.evaluate_predictions(list(iter_dialogues(data_dir, "test")), {}, suite.load_kb(data_dir))
    assert gc.isenabled()
    gc.disable()  # a caller's choice is kept
    try:
        suite.evaluate_run(data_dir, run)
        assert not gc.isenabled()
    finally:
        gc.enable()
    if importlib.util.find_spec("trace_metrics.lib.entailment") is not None:
        seen.clear()
        suite.evaluate_run(data_dir, run, nli=FakeScorer())  # a model runs: never paused
        assert seen and all(seen)


# -- adding a metric: one declaration plus its per-item function (docs/development.md, "Adding a metric") ---
def cited_reviews(item) -> float:
    """Distinct reviews a recommend/compare turn cites (a metric declared in this test only)."""
    return float(len(set(item.turn.citations.values())))


def supported_quotes(item, *, fuzzy_threshold) -> float | None:
    """Quotes the cited reviews support at the fuzzy threshold; None without quotes (left out of the mean)."""
    supports = item.analysis.supports
    return float(sum(s >= fuzzy_threshold for s in supports)) if supports else None


def _declared(id, item=None, level="recommendation_turn", **fields):
    from trace_metrics.specs import MetricSpec

    return MetricSpec(
        id=id,
        label=id,
        benchmark="trace",
        family="grounding",
        higher_is_better=True,
        range=(0.0, None),
        level=level,
        description="(test)",
        paper="(test)",
        item=item,
        **fields,
    )


def test_a_declaration_added_in_a_test_is_computed_by_the_suite(data_dir, run, monkeypatch):
    from trace_metrics import specs

    cited = _declared("cited_reviews", cited_reviews)
    supported = _declared("supported_quotes", supported_quotes, "grounded_turn")
    metrics = (*specs.SUITE_METRICS, cited, supported)
    r = suite.evaluate_run(data_dir, run, metrics=metrics, fuzzy_threshold=0.9)
    rec = r["per_item"]["recommendation_turns"]
    assert rec["cited_reviews"] == [1.0, 1.0, 2.0, 1.0, 1.0, 1.0]  # D2t1, a compare turn, cites two reviews
    assert r["values"]["cited_reviews"] == pytest.approx(7 / 6) and r["n"]["cited_reviews"] == 6
    assert r["std"]["cited_reviews"] == pytest.approx((5 / 36) ** 0.5)
    assert list(r["values"])[-2:] == ["cited_reviews", "supported_quotes"]  # after the registry's, in order
    # its option reached it (fuzzy 0.9); D3t3 quotes through [R2], which its row does not define: 0 supported
    assert rec["supported_quotes"] == [1.0, 1.0, 2.0, 1.0, 1.0, 0.0]
    assert r["values"]["supported_quotes"] == 1.0
    # grounded turns follow grounding_turns: on every system turn, those without quotes have no value
    system = suite.evaluate_run(data_dir, run, metrics=(supported,), grounding_turns="system")
    assert list(system["values"]) == ["supported_quotes"] and system["n"]["supported_quotes"] == 6
    per_turn = system["per_item"]["system_turns"]["supported_quotes"]
    assert per_turn == [None, 1.0, 1.0, None, 2.0, 1.0, None, 1.0, 0.0, None]
    # declared in the registry, the default run computes it too: no second list of ids anywhere
    monkeypatch.setattr(specs, "SUITE_METRICS", (*specs.SUITE_METRICS, cited))
    assert suite.evaluate_run(data_dir, run)["values"]["cited_reviews"] == pytest.approx(7 / 6)
    # what the suite cannot compute is refused, naming the metric
    with pytest.raises(ValueError, match="'odd': keyword"):
        suite.evaluate_run(data_dir, run, metrics=(_declared("odd", lambda item, *, alpha: 1.0),))
    with pytest.raises(ValueError, match="combines \\['cited_reviews'\\]"):
        suite.evaluate_run(data_dir, run, metrics=(_declared("both", components=("cited_reviews",)),))
