"""Significance marks on a constructed leaderboard whose answer is known; rows, files and the command."""

from __future__ import annotations

import copy
import csv
import json

import pytest

from tests.support.leaderboard import fake_result, write_run
from trace_harness.leaderboard.build import (
    PER_DIALOGUE_FILE,
    add_intervals,
    build_leaderboard,
    mark_best,
    read_leaderboard,
    result_row,
    write_leaderboard,
)
from trace_harness.leaderboard.render import format_tables
from trace_metrics.lib import intervals as iv

N = 200  # dialogues, two recommendation turns each


def _per_item(recall, t2r, ids=None):
    ids = ids or [f"d{i:03d}" for i in range(N)]
    turn_ids = [d for d in ids for _ in range(2)]
    return {
        "dialogues": {"dialogue_id": list(ids), "t2r": list(t2r)},
        "recommendation_turns": {"dialogue_id": turn_ids, "recall@1": list(recall)},
    }


def _row(name, recall, t2r, pool="closed", split="test", ids=None, source="baseline"):
    return result_row(
        fake_result(_per_item(recall, t2r, ids), pool=pool, split=split),
        system=name,
        family="non-LLM",
        source=source,
        n_boot=2000,
    )


@pytest.fixture(scope="module")
def board():
    """A: 90% hits, t2r 1. B: A with two hits lost and one dialogue at t2r 2 (indistinguishable from A).
    C: 50% hits, t2r 3 (clearly worse on both). D: the open pool, alone there."""
    a_recall = [0.0 if i % 10 == 0 else 1.0 for i in range(2 * N)]
    b_recall = list(a_recall)
    b_recall[1] = b_recall[3] = 0.0
    c_recall = [float(i % 2) for i in range(2 * N)]
    return [
        _row("A", a_recall, [1.0] * N),
        _row("B", b_recall, [2.0] + [1.0] * (N - 1)),
        _row("C", c_recall, [3.0] * N),
        _row("D", c_recall, [3.0] * N, pool="open"),
    ]


def test_marks_known_answer(board):
    marked = mark_best(board, n_boot=2000)
    marks = {r["system"]: r["tied_best"] for r in marked}
    assert marks["A"] == {"recall@1": True, "t2r": True}  # best on both
    assert marks["B"] == {"recall@1": True, "t2r": True}  # not significantly different from A
    assert marks["C"] == {"recall@1": False, "t2r": False}  # significantly worse on both
    assert marks["D"] == {"recall@1": True, "t2r": True}  # alone in the open pool: its own best


def test_lower_is_better_columns_pick_the_lowest(board):
    # give C the lowest t2r: it becomes the best of that column, and A/B (t2r 1 < 3) stop being best
    c = copy.deepcopy(board[2])
    low = _row("C2", [float(i % 2) for i in range(2 * N)], [0.5] * N)
    marks = {r["system"]: r["tied_best"] for r in mark_best([board[0], board[1], c, low], n_boot=2000)}
    assert marks["C2"]["t2r"] is True and marks["A"]["t2r"] is False and marks["C"]["t2r"] is False


def test_mark_best_is_pure_and_skips_rows_without_data(board):
    paper = {
        "system": "TF-IDF (paper)",
        "family": "non-LLM",
        "source": "paper",
        "pool": "closed",
        "split": "all",
        "metrics": {"recall@1": 0.257},
        "tied_best": {"recall@1": True},
    }  # a stale mark
    rows = [*board, paper]
    before = copy.deepcopy(rows)
    marked = mark_best(rows, n_boot=500)
    assert rows == before  # inputs untouched
    assert "tied_best" not in marked[-1] and "ci" not in marked[-1]


def test_a_damaged_stored_row_gets_no_marks_and_breaks_nothing(board, caplog):
    broken = copy.deepcopy(board[2])
    broken["per_dialogue"]["data"] = "not base64 at all!"
    marked = mark_best([board[0], board[1], broken], n_boot=500)
    assert "tied_best" not in marked[2] and marked[0]["tied_best"]["recall@1"] is True
    assert "unreadable per-dialogue data" in caplog.text


def test_rows_scored_at_different_times_merge(board):
    """A submission scored later on the same dialogues is compared with the stored baseline rows."""
    stored = [json.loads(json.dumps(r)) for r in board]  # as read back from JSON
    later = _row("S", [1.0] * (2 * N), [1.0] * N, source="submission")
    marks = {r["system"]: r["tied_best"] for r in mark_best([*stored, later], n_boot=2000)}
    assert marks["S"]["recall@1"] is True and marks["A"]["recall@1"] is False  # S (100%) beats A (90%)
    # another split (other dialogues) is its own comparison group
    other = _row("E", [0.0] * (2 * N), [3.0] * N, split="train", ids=[f"x{i:03d}" for i in range(N)])
    assert mark_best([*stored, other], n_boot=500)[-1]["tied_best"] == {"recall@1": True, "t2r": True}


def test_result_row_carries_intervals_and_per_dialogue_data(board):
    a = board[0]
    assert set(a["ci"]) == set(a["metrics"]) and a["ci_method"] == {
        "method": "percentile",
        "resample": "dialogues",
        "level": 0.95,
        "n_boot": 2000,
        "seed": 42,
    }
    ci = iv.intervals(iv.decode(a["per_dialogue"]), n_boot=2000)
    assert a["ci"]["recall@1"] == list(ci["recall@1"])
    low, high = a["ci"]["recall@1"]
    assert low < a["metrics"]["recall@1"] < high
    # batched over all rows at once: the same intervals as one row alone (same draws), plus marks
    batched = add_intervals(board, n_boot=2000)
    assert [r["ci"] for r in batched] == [r["ci"] for r in board] and "tied_best" in batched[0]
    assert "tied_best" not in board[0]


def test_write_and_read_leaderboard_round_trip(board, tmp_path):
    rows = mark_best(board, n_boot=500)
    paths = write_leaderboard(rows, tmp_path)
    doc = json.loads(paths["json"].read_text())
    assert all(
        "data" not in r["per_dialogue"] and r["per_dialogue"]["file"] == PER_DIALOGUE_FILE
        for r in doc["rows"]
    )
    assert paths["per_dialogue"].name == PER_DIALOGUE_FILE
    assert read_leaderboard(paths["json"]) == json.loads(json.dumps(rows))
    paths["per_dialogue"].unlink()  # without the side file: rows keep their intervals, marks are not possible
    bare = read_leaderboard(paths["json"])
    assert bare[0]["ci"] == rows[0]["ci"] and "tied_best" not in mark_best(bare, n_boot=100)[0]


def test_tables_and_csv_show_intervals_and_marks(board, tmp_path):
    rows = mark_best(board, n_boot=500)
    text = format_tables(rows)
    a_low, a_high = rows[0]["ci"]["recall@1"]
    assert f"{rows[0]['metrics']['recall@1']:.3f} ±{(a_high - a_low) / 2:.3f}*" in text
    assert "half the width of the 95% cluster-bootstrap interval" in text
    paths = write_leaderboard(rows, tmp_path)
    with open(paths["table5_closed"], newline="") as f:
        table = list(csv.DictReader(f))
    assert [r["system"] for r in table] == ["A", "B", "C"]
    assert float(table[0]["recall@1_ci_low"]) == a_low and table[2]["recall@1_tied_best"] == "0"
    assert table[0]["t2r_tied_best"] == "1" and table[0]["bleu4"] == "" and table[0]["bleu4_ci_low"] == ""


def test_build_leaderboard_and_the_command(data_dir, reference_rows, tmp_path, capsys):
    from trace_bench.cli import main

    runs = tmp_path / "runs"
    write_run(runs, "tfidf", reference_rows)
    worse = copy.deepcopy(reference_rows)
    for r in worse:
        if r["ranked_poi_ids"]:
            r["ranked_poi_ids"] = r["ranked_poi_ids"][::-1]
    write_run(runs, "popularity", worse)
    rows = build_leaderboard(data_dir, runs, split="test", n_boot=300)
    assert [r["system"] for r in rows] == ["Popularity", "TF-IDF"]
    assert all(r["ci"] and r["tied_best"] for r in rows)
    assert rows[1]["tied_best"]["recall@1"] is True
    out = tmp_path / "board"
    assert (
        main(
            [
                "leaderboard",
                "--data",
                str(data_dir),
                "--runs",
                str(runs),
                "--out",
                str(out),
                "--n-boot",
                "300",
                "--grounding-turns",
                "system",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "Table 5: headline — pool: closed" in printed and "±" in printed and PER_DIALOGUE_FILE in printed
    board_rows = read_leaderboard(out / "leaderboard.json")
    assert (
        board_rows[0]["config"]["grounding"]["turns"] == "system"
        and board_rows[0]["ci_method"]["n_boot"] == 300
    )
    assert board_rows[0]["config"]["conventions"]["t2r"] == "count"  # the default reading
    assert (
        main(
            [
                "leaderboard",
                "--data",
                str(data_dir),
                "--runs",
                str(runs),
                "--out",
                str(tmp_path / "b2"),
                "--n-boot",
                "0",
                "--t2r",
                "turn_index",
                "--compare-hit",
                "top1",
            ]
        )
        == 0
    )
    switched = read_leaderboard(tmp_path / "b2" / "leaderboard.json")
    assert {r["config"]["conventions"]["t2r"] for r in switched} == {"turn_index"}
    assert {r["config"]["conventions"]["compare_hit"] for r in switched} == {"top1"}
    with pytest.raises(SystemExit) as refused:  # refused while the options are parsed
        main(["leaderboard", "--data", str(data_dir), "--runs", str(runs), "--n-boot", "-1"])
    assert refused.value.code == 2
