"""The Space's Interactive tab: the leaderboard view of interactive runs, the per-turn table, and the logs in
the dialogue browser's style with every name escaped as data."""

from __future__ import annotations

import json

import pytest

from tests.support.interactive import HAND_POIS, Scripted, hand_goal
from trace_dataset.io import write_json
from trace_harness.interactive.loop import converse
from trace_harness.interactive.output import META_FILE, write_outputs
from trace_harness.interactive.report import build_metrics
from trace_harness.interactive.simulator.goal import World
from trace_harness.interactive.simulator.rules import RulesSimulator


@pytest.fixture
def runs_root(hand_kb, tmp_path):
    root = tmp_path / "interactive"
    world = World(hand_kb)
    for name, rankings in (("good", [["r1"]]), ("bad", [["r6"], ["r5"], ["r4"]])):
        lives = converse(Scripted(rankings), RulesSimulator(world), [hand_goal()], pool="closed", max_turns=4, seed=42,
                         metadata={"generator": "t", "backend": "rules", "model": "", "seed": 42, "kb_version": "x"})
        items = [{"record": x.record, "predictions": x.predictions, "traveler": {"turns": x.traveler_log}} for x in lives]
        names = {p["business_id"]: p["name"] for p in HAND_POIS}
        if name == "bad":
            names["r6"] = '<script>alert("x")</script> ${x}'
        write_outputs(root / name, items, names)
        write_json(root / name / META_FILE, {"complete": True})
        metrics = build_metrics(items, hand_kb, protocol="trace", run={"system": f"sys<{name}>", "simulator": "rules",
                                                                      "pool": "closed"}, n_boot=50)
        write_json(root / name / "metrics.json", metrics)
    (root / "broken").mkdir()
    (root / "broken" / "metrics.json").write_text(json.dumps({"not": "interactive"}))
    return root


def test_board_rows_and_turn_table(runs_root):
    from spaces_app.interactive_tab import BOARD_COLUMNS, board_rows, load_metrics, turn_rows_of

    rows = board_rows(runs_root)
    assert [r[-1] for r in rows] == ["bad", "good"]  # the broken folder is left out
    good = dict(zip(BOARD_COLUMNS, rows[1], strict=True))
    assert good["System"] == "sys<good>" and good["Success"] == 1.0 and good["Lost turns"] == "0 / 3"
    bad = dict(zip(BOARD_COLUMNS, rows[0], strict=True))
    assert bad["Success"] == 0.0 and bad["Rejection recovery"] == 0.0 and bad["TF TSR"] is None
    assert turn_rows_of(load_metrics(runs_root / "good"))[0][0] == 1


def test_logs_are_rendered_with_names_escaped(runs_root):
    from spaces_app.interactive_tab import RunLogs

    logs = RunLogs(runs_root / "bad")
    html = logs.render(logs.ids()[0])
    assert "<script>" not in html and "&lt;script&gt;" in html and "${x}" not in html
    assert "reject_and_refine" in html and "target at" in html
    assert logs.render("no-such-id") == "<p>Pick a conversation.</p>"


def test_the_tab_builds(runs_root, monkeypatch):
    gr = pytest.importorskip("gradio")
    from spaces_app.interactive_tab import INTERACTIVE_ENV, interactive_tab

    monkeypatch.setenv(INTERACTIVE_ENV, str(runs_root))
    with gr.Blocks():
        interactive_tab(None)
    monkeypatch.setenv(INTERACTIVE_ENV, str(runs_root / "nothing-here"))
    with gr.Blocks():
        interactive_tab(None)
