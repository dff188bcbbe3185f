"""Collab-REC's own tables show each LLM row's failed agent calls and mark a row over the documented share."""

from __future__ import annotations

from trace_harness.protocols.collab_rec.tables import table1, table3


def system(success: float) -> dict:
    return {
        "moderator_success": success,
        "gini": 0.95,
        "entropy": 1.2,
        "coverage": 0.1,
        "avg_recs_per_item": 3.0,
    }


def run(strategy: str, model: str, calls: int, failures: int) -> tuple[dict, dict]:
    systems = {"SASI": system(0.5)} if strategy == "sasi" else {"M_1": system(0.5), "M_early": system(0.5)}
    return (
        {"strategy": strategy, "llm": {"model": f"hub/{model}"}, "config": {"rejection": "aggressive"}},
        {"systems": systems, "counts": {"agent_calls": calls, "agent_failures": failures}},
    )


def test_a_row_whose_agent_calls_all_failed_is_marked_in_both_tables():
    runs = [run("sasi", "SmolLM2", 10, 10), run("mami", "SmolLM2", 30, 30), run("mami", "Qwen", 30, 1)]
    one, three = table1(runs), table3(runs)
    for text in (one, three):
        assert "| SmolLM2 † | A |" in text and "40/40 (100%)" in text  # SASI's calls count in its model's row
        assert "| Qwen | A |" in text and "1/30 (3%)" in text  # under the 10% share: its own result
        assert "more than 10% of the row's agent calls failed" in text
    assert "Failed calls" in one.splitlines()[0] and "Failed calls" in three.splitlines()[0]
    clean = table1([run("mami", "Qwen", 30, 0)])
    assert "0/30 (0%)" in clean and "†" not in clean
