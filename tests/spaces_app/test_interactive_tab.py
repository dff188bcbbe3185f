"""The Space's Interactive tab: the leaderboard view of interactive runs, the per-turn table, and the logs in
the dialogue browser's style with every name escaped as data."""

from __future__ import annotations

import json
import re
from html import unescape

import pytest

from tests.support.interactive import HAND_POIS, Scripted, hand_goal
from tests.support.tables import cells as row_cells
from tests.support.tables import headers
from trace_dataset.io import write_json
from trace_harness.protocols.interactive.loop import converse
from trace_harness.protocols.interactive.output import META_FILE, write_outputs
from trace_harness.protocols.interactive.report import build_metrics
from trace_harness.protocols.interactive.simulator.goal import World
from trace_harness.protocols.interactive.simulator.rules import RulesSimulator


@pytest.fixture
def runs_root(hand_kb, tmp_path):
    root = tmp_path / "interactive"
    world = World(hand_kb)
    for name, rankings in (("good", [["r1"]]), ("bad", [["r6"], ["r5"], ["r4"]])):
        lives = converse(
            Scripted(rankings),
            RulesSimulator(world),
            [hand_goal()],
            pool="closed",
            max_turns=4,
            seed=42,
            metadata={"generator": "t", "backend": "rules", "model": "", "seed": 42, "kb_version": "x"},
        )
        items = [
            {"record": x.record, "predictions": x.predictions, "traveler": {"turns": x.traveler_log}}
            for x in lives
        ]
        names = {p["business_id"]: p["name"] for p in HAND_POIS}
        if name == "bad":
            names["r6"] = '<script>alert("x")</script> ${x}'
        write_outputs(root / name, items, names)
        write_json(root / name / META_FILE, {"complete": True})
        metrics = build_metrics(
            items,
            hand_kb,
            protocol="trace",
            run={
                "system": f"sys<{name}>",
                "simulator": "rules",
                "pool": "closed",
                "split": "test",
                "turns": 4,
            },
            n_boot=50,
        )
        write_json(root / name / "metrics.json", metrics)
    (root / "broken").mkdir()
    (root / "broken" / "metrics.json").write_text(json.dumps({"not": "interactive"}))
    return root


def test_board_and_turn_table(runs_root):
    from spaces_app.interactive_tab import boards_html, load_metrics, read_board, turns_html

    board = read_board([runs_root, runs_root.parent / "not-yet"])  # a folder that does not exist yet: skipped
    assert [r["run"] for r in board.rows] == ["bad", "good"] and not board.warnings  # the broken one left out
    assert board.folders["good"] == runs_root / "good"
    html = boards_html(board)
    assert "sys&lt;good&gt;" in html and "<script>" not in html  # names as text
    heads = headers(html)
    assert (
        heads[:6] == ["System", "Simulator", "Pool", "Split", "Turn budget", "Dialogues"]
        and heads[-1] == "Run"
    )
    assert "TF TSR" not in heads  # a column empty in every row is left out
    [good] = [row for row in html.split("<tr") if "sys&lt;good&gt;" in row]
    cells = row_cells(good)
    assert cells[heads.index("Live success (TSR)")] == "1.000" and cells[heads.index("Lost turns")] == "0 / 3"
    assert cells[heads.index("Turn budget")] == "4" and cells[-1] == "good"
    turns = turns_html(load_metrics(runs_root / "good"))
    assert (
        "Hits@1" in unescape(turns)
        and re.search(r">1\.000<", turns)
        and turns_html(None).startswith("<p>No per-turn")
    )


def test_copies_of_one_run_are_named(runs_root, tmp_path):
    import shutil

    from spaces_app.interactive_tab import boards_html, read_board

    other = tmp_path / "elsewhere"
    shutil.copytree(runs_root / "good", other / "good")
    board = read_board([runs_root, other])
    assert sorted(board.folders) == [
        f"{other.as_posix()}/good",
        f"{runs_root.as_posix()}/bad",
        f"{runs_root.as_posix()}/good",
    ]  # unique labels across roots
    [warning] = board.warnings
    assert "copies of one run" in warning and f"{other.as_posix()}/good" in warning
    assert "Warning: " in boards_html(board)


def test_one_folder_named_twice_shows_its_runs_once(runs_root, tmp_path, monkeypatch):
    from spaces_app.interactive_tab import read_board

    (tmp_path / "link").symlink_to(runs_root)
    monkeypatch.chdir(tmp_path)
    board = read_board([runs_root, runs_root.relative_to(tmp_path), tmp_path / "link"])
    assert [r["run"] for r in board.rows] == ["bad", "good"] and not board.warnings


def test_logs_are_rendered_with_names_escaped(runs_root):
    from spaces_app.interactive_tab import RunLogs

    logs = RunLogs(runs_root / "bad")
    html = logs.render(logs.ids()[0])
    assert "<script>" not in html and "&lt;script&gt;" in html and "${x}" not in html
    assert "reject_and_refine" in html and "target at" in html
    assert logs.render("no-such-id") == "<p>Pick a conversation.</p>"


def test_the_tab_reads_its_folders_on_every_load(runs_root, tmp_path):
    gr = pytest.importorskip("gradio")
    from types import SimpleNamespace

    from spaces_app.interactive_tab import EMPTY, interactive_tab
    from spaces_app.settings import Settings

    later = tmp_path / "later"
    loaders = []
    ctx = SimpleNamespace(
        settings=Settings(interactive_dirs=(later,)),
        on_load=lambda fn, inputs, outputs: loaders.append((fn, inputs, outputs)),
    )
    with gr.Blocks():
        interactive_tab(ctx)
    [(view, _, outputs)] = loaders
    empty, board, run, *_ = view()
    assert empty["visible"] is True and board["visible"] is False and run["choices"] == []
    assert any(getattr(c, "value", None) == EMPTY for c in outputs)
    import shutil

    shutil.copytree(runs_root / "good", later / "good")  # a run made while the app serves
    empty, board, run, turns, dialogue, log = view()
    assert empty["visible"] is False and "sys&lt;good&gt;" in board["value"] and run["value"] == "good"
    assert (
        "Hits@1" in unescape(turns["value"])
        and dialogue["choices"]
        and 'class="trace-turn system"' in log["value"]
    )
