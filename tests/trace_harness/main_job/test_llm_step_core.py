"""The main job's opt-in LLM step fills the CoRE tab: CoRE rates the first dialogue of a retriever's and an LLM
baseline's runs (here against the scripted OpenAI-compatible stub server instead of the packaged model), and the
tab shows both systems with their missing ratings counted."""

from __future__ import annotations

import json

import pytest

from tests.support.core import scripted
from tests.support.stub_server import StubOpenAI
from tests.support.tables import cells
from trace_dataset.io import write_json
from trace_harness.engine.stage import run_stages
from trace_harness.main_job.layout import demo_layout
from trace_harness.main_job.llm_step import core_stages
from trace_harness.protocols.teacher_forced.runner import meta_path
from trace_harness.reproduce.config import load_example
from trace_harness.reproduce.jobs import Context, build_jobs, closed_run
from trace_metrics.lib.toy import write_toy_data_dir, write_toy_predictions


@pytest.fixture
def server():
    with StubOpenAI(scripted({"Novelty": "no rating at all"})) as s:
        yield s


def test_the_core_step_writes_what_the_tab_shows(server, tmp_path, monkeypatch):
    from spaces_app.core_tab import scored_rows, scores_html
    from trace_metrics.core.runner import SUMMARY_FILE

    monkeypatch.setenv("TRACE_BENCH_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "demo"
    write_toy_data_dir(out / "llm_subset")
    config = load_example(
        "demo_llm", {"data": str(out / "llm_subset"), "out": str(out), "models": {"core": server.spec()}}
    )
    for name in config.core.systems:  # the runs the step made (toy predictions, complete)
        write_toy_predictions(closed_run(config, name))
        write_json(meta_path(closed_run(config, name)), {"complete": True})
    ctx = Context(config)
    try:
        assert run_stages(core_stages(ctx, build_jobs(config))) == {}
        summaries = {
            name: json.loads((out / "core" / name / SUMMARY_FILE).read_text()) for name in config.core.systems
        }
        assert all(s["n_logs"] == config.core.limit for s in summaries.values())
        assert all(s["ratings"]["missing"] == 1 for s in summaries.values())  # Novelty never parsed: counted
        sent = len(server.requests)
        assert (
            run_stages(core_stages(ctx, build_jobs(config))) == {} and len(server.requests) == sent
        )  # resumes
    finally:
        ctx.close()
    rows = scored_rows([demo_layout(out)["core_dir"]])
    assert sorted(r["folder"].name for r in rows) == sorted(config.core.systems)
    html = scores_html(rows)
    assert cells(html).count("1 of 12 (8%)") == 2  # under NOT_OWN_SHARE (10%): no mark on the systems' table
    shown = cells(html)
    novelty = shown.index(next(c for c in shown if c.lower().startswith("novelty")))
    assert shown[novelty + 1 : novelty + 3] == [
        "- †",
        "- †",
    ]  # the factor never rated: over the limit, marked
    assert "more than 10% of these ratings are missing" in html
