"""Exposure metrics exactly (hand-computed, and against an independent Gini formula), TopPop and RandRec exposure
figures on the real catalogue, and metrics.json's aggregation of per-query records."""

from __future__ import annotations

import math
import random

import pytest

from baselines.collab_rec.moderator import ModeratorConfig
from trace_harness.protocols.collab_rec.metrics import compute_metrics
from trace_metrics.lib._util import mean_or_none
from trace_metrics.lib.collab_rec import collab_rec_scores, early_stopping
from trace_metrics.lib.exposure import (
    coverage,
    exposure_counts,
    exposure_summary,
    gini,
    normalised_entropy,
    recs_per_covered_item,
)

approx = pytest.approx


def gini_mean_difference(counts):
    """Gini as the mean absolute difference over 2 * mean (an independent formula)."""
    n, mu = len(counts), sum(counts) / len(counts)
    return sum(abs(a - b) for a in counts for b in counts) / (2 * n * n * mu)


def test_hand_computed_exposure():
    counts = [0, 0, 1, 3]
    assert gini(counts) == approx(0.625) == gini_mean_difference(counts)
    assert normalised_entropy(counts) == approx(
        -(0.25 * math.log(0.25) + 0.75 * math.log(0.75)) / math.log(4)
    )
    assert coverage(counts) == 0.5 and recs_per_covered_item(counts) == 2.0
    assert gini([2, 2, 2]) == 0.0 and normalised_entropy([2, 2, 2]) == approx(1.0)
    assert gini([0, 0]) == 0.0 and normalised_entropy([0, 0]) == 0.0
    assert exposure_counts([["a", "x"], ["a"]], ["a", "b"]) == ([2, 0], 1)
    with pytest.raises(ValueError, match="non-negative"):
        gini([1, -1])


def test_toppop_and_randrec_exposure_figures():
    cities = [f"c{i:03d}" for i in range(200)]
    top = exposure_summary([cities[:10]] * 45, cities)
    assert top["gini"] == approx(1 - 10 / 200) and top["entropy"] == approx(math.log(10) / math.log(200))
    assert top["coverage"] == 0.05 and top["avg_recs_per_item"] == 45.0
    rng = random.Random(42)
    lists = [rng.sample(cities, 10) for _ in range(900)]
    counts, _ = exposure_counts(lists, cities)
    rand = exposure_summary(lists, cities)
    assert rand["gini"] == approx(gini_mean_difference(counts))
    assert rand["gini"] < 0.12 and rand["entropy"] > 0.98  # the paper's RandRec on 900 queries: 0.08 (0.99)


def test_real_catalogue_randrec_and_toppop(collab_rec_dir, tmp_path):
    from trace_harness.protocols.collab_rec.run import run_benchmark

    kb, queries = collab_rec_dir / "eu-cities-database.csv", collab_rec_dir / "queries.csv"
    top = run_benchmark("toppop", kb, queries, tmp_path / "tp", progress=False)["systems"]["TopPop"]
    assert top["gini"] == approx(0.95) and top["entropy"] == approx(math.log(10) / math.log(200))
    assert top["coverage"] == 0.05 and top["n"] == 45
    rr = run_benchmark("randrec", kb, queries, tmp_path / "rr", progress=False)["systems"]["RandRec"]
    again = run_benchmark("randrec", kb, queries, tmp_path / "rr2", progress=False)["systems"]["RandRec"]
    assert rr == again  # seeded by (seed, query id)
    assert (
        0 < rr["gini"] < top["gini"]
        and rr["coverage"] > 0.8
        and rr["avg_recs_per_item"] * rr["coverage"] * 200 == 450
    )


def _round(
    number: int, success: float, reliability: float, hallucination: float, invalid: dict | None = None
) -> dict:
    """One round of a per-query record, with its one agent "p" (whose success is the round's)."""
    agent = {
        "agent": "p",
        "success": success,
        "reliability": reliability,
        "hallucination": hallucination,
        "invalid": invalid or {},
    }
    return {"round": number, "success": success, "agents": [agent]}


def _per_query_records() -> list[dict]:
    """Two queries: q1 runs 3 rounds to t_max (one hallucinated name in round 2), q2 stops ideal in round 1."""
    return [
        {
            "query_id": "q1",
            "systems": {
                "M_1": {"round": 1, "offer": ["a", "b"], "success": 0.5, "fractions": [1, 0]},
                "M_early": {"round": 3, "offer": ["a", "c"], "success": 1.0, "fractions": [1, 1]},
            },
            "rounds": [
                _round(1, 0.5, 1.0, 0.0),
                _round(2, 0.5, 0.5, 0.1, {"zz": "out_of_catalogue"}),
                _round(3, 1.0, 0.7, 0.0),
            ],
            "stop": {"round": 3, "reason": "t_max"},
            "agent_calls": 3,
            "agent_failures": 0,
        },
        {
            "query_id": "q2",
            "systems": {
                "M_1": {"round": 1, "offer": ["c"], "success": 1.0, "fractions": [1]},
                "M_early": {"round": 1, "offer": ["c"], "success": 1.0, "fractions": [1]},
            },
            "rounds": [_round(1, 1.0, 1.0, 0.0)],
            "stop": {"round": 1, "reason": "ideal"},
            "agent_calls": 1,
            "agent_failures": 1,
        },
    ]


def test_metrics_json_aggregates_the_per_query_records():
    m = compute_metrics(_per_query_records(), ["a", "b", "c", "d"], ModeratorConfig())
    assert m["systems"]["M_1"]["moderator_success"] == approx(0.75)
    assert m["systems"]["M_early"]["coverage"] == 0.5 and m["systems"]["M_early"]["mean_round"] == 2.0
    assert m["agents"]["reliability"] == approx(0.6)  # rounds >= 2 only
    assert m["agents"]["hallucination_rate"] == approx(0.025)
    assert m["agents"]["per_round"]["moderator_success"] == [0.75, 0.5, 1.0]
    assert m["agents"]["per_round"]["queries_running"] == [2, 1, 1]
    assert m["early_stopping"] == {
        "system": "M_early",
        "success_rate_pct": 50.0,
        "avg_convergence_round": 3.0,
        "ties_pct": 50.0,
        "odds_ratio": None,
        "n": 2,
    }
    assert m["rounds"] == {"mean_rounds_run": 2.0, "stop_reasons": {"ideal": 1, "t_max": 1}}
    assert m["counts"] == {
        "queries": 2,
        "agent_calls": 4,
        "agent_calls_per_query": 2.0,
        "agent_failures": 1,
        "hallucinated_names": 1,
    }


def test_collab_rec_scores_edge_cases():
    assert early_stopping(_per_query_records(), "M_eq13") == {} and mean_or_none([None]) is None
    with pytest.raises(ValueError, match="one per list"):
        collab_rec_scores([["a"]], [], ["a"])


def test_tables_say_which_eq10_reading_each_row_used():
    from baselines.collab_rec.moderator import ModeratorConfig
    from trace_harness.protocols.collab_rec.tables import eq10_reading, table1, table3

    def run(config: ModeratorConfig, success: float) -> tuple[dict, dict]:
        system = {
            "moderator_success": success,
            "gini": 0.6,
            "entropy": 0.8,
            "coverage": 0.5,
            "avg_recs_per_item": 2.0,
        }
        return (
            {"strategy": "mami", "config": config.to_dict(), "llm": {"model": "org/m"}},
            {"systems": {"M_1": system, "M_eq13": system}},
        )

    printed, code = ModeratorConfig(), ModeratorConfig(code_behaviours={"mu2_is_mu1"})
    assert printed.to_dict()["eq10"] == "printed" and code.to_dict()["eq10"] == "code"
    assert (
        eq10_reading({"config": {"code_behaviours": ["mu2_is_mu1"]}}) == "code"
    )  # a run.json without "eq10"
    runs = [run(printed, 0.6), run(code, 0.7)]
    t1, t3 = table1(runs).splitlines(), table3(runs).splitlines()
    assert t1[0].startswith("| Model | Rej. | Eq. 10 | M_1 | M_eq13 |") and t3[0].startswith(
        "| Model | Rej. | Eq. 10 |"
    )
    assert "| m | A | code | 0.700 | 0.700 |" in t1[2] and "| m | A | printed | 0.600 | 0.600 |" in t1[3]
    assert [line.split(" | ")[2] for line in t3[2:]] == ["code", "printed"]
