"""The main job's opt-in LLM step fills the CoRE tab: CoRE rates the first dialogue of a retriever's and an LLM
baseline's runs (here against the scripted OpenAI-compatible stub server instead of the packaged model), and the
tab shows both systems with their missing ratings counted."""

from __future__ import annotations

import json

import pytest

from tests.support.core import scripted
from tests.support.stub_server import StubOpenAI
from tests.support.tables import cells
from trace_metrics.lib.toy import write_toy_data_dir, write_toy_predictions


@pytest.fixture
def server():
    with StubOpenAI(scripted({"Novelty": "no rating at all"})) as s:
        yield s


def test_the_core_step_writes_what_the_tab_shows(server, tmp_path, monkeypatch):
    import spaces_app.demo as demo
    from spaces_app.core_tab import scored_rows, scores_html
    from trace_metrics.core.runner import SUMMARY_FILE

    monkeypatch.setenv("TRACE_BENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setitem(demo.DEMO_LLM_SETTINGS, "llm", server.spec())
    data = write_toy_data_dir(tmp_path / "subset")
    runs = tmp_path / "llm_runs"
    for name in demo.DEMO_CORE_SYSTEMS:
        write_toy_predictions(runs / f"{name}.jsonl")
    assert demo.run_core_step(data, runs, tmp_path / "core", "test") == {}
    summaries = {
        name: json.loads((tmp_path / "core" / name / SUMMARY_FILE).read_text())
        for name in demo.DEMO_CORE_SYSTEMS
    }
    assert all(s["n_logs"] == demo.DEMO_CORE_SETTINGS["limit"] for s in summaries.values())
    assert all(s["ratings"]["missing"] == 1 for s in summaries.values())  # Novelty never parsed: counted
    sent = len(server.requests)
    assert (
        demo.run_core_step(data, runs, tmp_path / "core", "test") == {} and len(server.requests) == sent
    )  # resumes
    rows = scored_rows([tmp_path / "core"])
    assert sorted(r["folder"].name for r in rows) == sorted(demo.DEMO_CORE_SYSTEMS)
    html = scores_html(rows)
    assert cells(html).count("1 of 12 (8%)") == 2  # under NOT_OWN_SHARE (10%): no mark on the systems' table
    shown = cells(html)
    novelty = shown.index(next(c for c in shown if c.lower().startswith("novelty")))
    assert shown[novelty + 1 : novelty + 3] == [
        "- †",
        "- †",
    ]  # the factor never rated: over the limit, marked
    assert "more than 10% of these ratings are missing" in html
