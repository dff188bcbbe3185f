"""The job engine: stages run in order, done ones skipped, allowed failures collected; the settings record."""

from __future__ import annotations

import logging

import pytest

from trace_dataset.io import TraceDataError, read_json
from trace_harness.engine.settings import check_settings
from trace_harness.engine.stage import Stage, never, run_stages


def test_stages_run_in_order_and_a_done_one_is_skipped(caplog):
    ran: list[str] = []
    stages = [
        Stage("first", (), never, lambda: ran.append("first")),
        Stage("done already", (), lambda: True, lambda: ran.append("done already")),
        Stage("last", (), never, lambda: ran.append("last")),
    ]
    with caplog.at_level(logging.INFO):
        assert run_stages(stages) == {}
    assert ran == ["first", "last"]
    assert "[done already] already done, skipping" in caplog.text and "[last] done in" in caplog.text


def test_an_allowed_failure_is_collected_and_the_others_still_run():
    ran: list[str] = []

    def missing_package() -> None:
        raise ImportError("no module named sentence_transformers")

    stages = [
        Stage("dense", (), never, missing_package, may_fail=(ImportError,), failure="dense (closed)"),
        Stage("tfidf", (), never, lambda: ran.append("tfidf")),
    ]
    assert run_stages(stages) == {"dense (closed)": "ImportError: no module named sentence_transformers"}
    assert ran == ["tfidf"]


def test_any_other_failure_stops_the_job():
    def bug() -> None:
        raise KeyError("a bug")

    after: list[str] = []
    with pytest.raises(KeyError):
        run_stages(
            [
                Stage("buggy", (), never, bug, may_fail=(ImportError,)),
                Stage("x", (), never, lambda: after.append(1)),
            ]
        )
    assert after == []


def test_a_stage_of_parts_reports_its_parts_failures():
    stage = Stage(
        "side by side", (), never, lambda: {"dense (interactive)": "ImportError: x"}, parts_fail=True
    )
    assert run_stages([stage]) == {"dense (interactive)": "ImportError: x"}
    plain = Stage("returns a value", (), never, lambda: {"not": "a failure"})  # only parts_fail stages report
    assert run_stages([plain]) == {}


def test_the_settings_record_refuses_other_settings(tmp_path):
    path = tmp_path / "demo.json"
    check_settings(path, {"n": 120, "seed": 42}, what="demo")
    assert read_json(path) == {"n": 120, "seed": 42}
    check_settings(path, {"n": 120, "seed": 42}, what="demo")  # the same settings: a rerun resumes
    with pytest.raises(TraceDataError, match=r"a demo made with other settings \(n: 120 there, 100 now\)"):
        check_settings(path, {"n": 100, "seed": 42}, what="demo")
