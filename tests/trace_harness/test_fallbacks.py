"""fallback_report: a run's fallbacks and failures per kind, as counts and shares, in the one shape the tables
read; the mark of a run that is not the system's own result."""

from __future__ import annotations

from trace_dataset.constants import NOT_OWN_SHARE
from trace_harness.fallbacks import fallback_line, fallback_report


def meta(rows: dict, usage: dict | None = None, n_rows: int = 20) -> dict:
    summary = {"rows": rows, "usage": {}, "usage_all_invocations": {"llm_usage": usage} if usage else {}}
    return {"n_rows": n_rows, "summary": summary}


def test_shares_per_kind_and_the_own_result_mark():
    report = fallback_report(
        meta(
            {"fallback_popularity": 3, "empty_response": 1},
            {
                "requests": 40,
                "json_failures": 3,
                "json_repairs": 6,
                "dialect_fallbacks": 40,
                "constrained": 0,
                "constraint_violations": 0,
            },
        )
    )
    kinds = report["kinds"]
    assert kinds["fallback_popularity"]["share"] == 0.15 and kinds["fallback_popularity"]["replaces"]
    assert kinds["empty_response"] == {
        "count": 1,
        "of": 20,
        "share": 0.05,
        "per": "system turn",
        "what": "empty response",
        "marked": True,
        "replaces": False,
    }
    assert (
        kinds["dialect_fallbacks"]["share"] == 1.0 and kinds["json_repairs"]["of"] == 40
    )  # answers: sent + cached
    assert kinds["constraint_violations"]["share"] is None  # nothing was constrained
    assert (
        report["replaced_share"] == report["share"] == 0.15 > NOT_OWN_SHARE and report["own_result"] is False
    )
    assert not kinds["json_failures"]["marked"]  # the turns it touched are counted as fallback_popularity
    line = fallback_line(report)
    assert "fallback_popularity 3/20 (15%)" in line and "NOT THE SYSTEM'S OWN RESULT" in line


def test_agent_failures_are_shared_over_agent_calls_and_a_clean_run_is_its_own():
    report = fallback_report(meta({"agent_calls": 60, "agent_failures": 6, "rounds": 9}))
    assert (
        report["kinds"]["agent_failures"]["share"] == 0.1 and report["own_result"] is True
    )  # 10% is allowed
    assert "agent_calls" not in report["kinds"] and "rounds" not in report["kinds"]
    assert fallback_line(fallback_report(meta({}))) == "none"
    unknown = fallback_report(meta({"new_kind_of_failure": 2}))  # a kind counted by a newer system: shown too
    assert unknown["kinds"]["new_kind_of_failure"]["count"] == 2 and unknown["own_result"]
