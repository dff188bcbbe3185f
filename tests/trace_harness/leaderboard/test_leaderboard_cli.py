"""`trace-bench leaderboard`: every complete run scored by the metrics suite, printed and written as the paper's
tables (leaderboard.json for the Space, one CSV per table and pool)."""

from __future__ import annotations

import csv
import json
import shutil

from trace_bench.cli import main
from trace_harness.leaderboard.build import find_runs
from trace_metrics.lib.suite import evaluate_run
from trace_metrics.tables import TABLE5, TABLE6


def test_leaderboard_command_prints_and_writes_the_tables(space_world, tmp_path, capsys):
    runs = space_world["runs"].parent  # closed/ and open/
    out = tmp_path / "board"
    args = ["leaderboard", "--data", str(space_world["data"]), "--runs", str(runs), "--split", "test"]
    assert main([*args, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    for text in (
        "Table 5: headline — pool: closed",
        "Table 6: stress tests — pool: closed",
        "Table 9: practical value — pool: open",
        "Popularity",
        "TF-IDF",
        f"wrote {out / 'leaderboard.json'}",
    ):
        assert text in printed
    rows = json.loads((out / "leaderboard.json").read_text())["rows"]
    assert sorted((r["system"], r["pool"]) for r in rows) == [
        ("Popularity", "closed"),
        ("TF-IDF", "closed"),
        ("TF-IDF", "open"),
    ]
    tfidf = next(r for r in rows if r["system"] == "TF-IDF" and r["pool"] == "closed")
    expected = evaluate_run(
        space_world["data"], space_world["runs"] / "tfidf.jsonl", split="test", pool="closed"
    )
    assert tfidf["metrics"] == {k: v for k, v in expected["values"].items() if v is not None}
    assert (
        tfidf["kb_version"] == expected["versions"]["kb"]
        and tfidf["corpus_version"] == expected["versions"]["corpus"]
    )
    assert (
        set(tfidf["std"]) <= set(tfidf["metrics"]) and tfidf["std"]
    )  # per-turn/dialogue spread for the paper
    with open(out / "table5_closed.csv", encoding="utf-8") as f:
        table = list(csv.reader(f))
    suffixes = ("", "_ci_low", "_ci_high", "_tied_best")  # each value with its interval and best mark
    fallbacks = [
        "fallback_share",
        "replaced_share",
        "fallbacks",
        "own_result",
    ]  # then what the run did not answer itself, and how the marks were made
    assert table[0] == [
        "system",
        "family",
        *(c.metric + x for c in TABLE5 for x in suffixes),
        *fallbacks,
        "marks",
    ]
    line = next(x for x in table[1:] if x[0] == "TF-IDF")
    assert [float(v) for v in line[2:-5:4]] == [tfidf["metrics"][c.metric] for c in TABLE5]
    assert [float(v) for v in line[3:-5:4]] == [tfidf["ci"][c.metric][0] for c in TABLE5]
    assert line[-5:-1] == ["0.0", "0.0", "", "1"]  # a retriever that counted no fallback
    assert line[-1] == "test=bootstrap;correction=holm;family=board;alpha=0.05"
    with open(out / "table6_closed.csv", encoding="utf-8") as f:
        table6 = {x[0]: x for x in csv.reader(f)}
    assert table6["system"][2:-5:4] == [c.metric for c in TABLE6]
    open_row = next(r for r in rows if r["system"] == "TF-IDF" and r["pool"] == "open")
    assert float(table6["TF-IDF"][2]) == open_row["metrics"]["recall@1"]  # open:recall@1 from the open run
    assert table6["Popularity"][2] == ""  # no open run of popularity
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [
            "leaderboard.json",
            "leaderboard.per_dialogue.jsonl",
            *(f"table{t}_{pool}.csv" for t in (5, 6, 9) for pool in ("closed", "open")),
        ]
    )


def test_incomplete_runs_are_skipped_and_no_runs_is_an_error(space_world, tmp_path, capsys):
    runs = tmp_path / "runs"
    shutil.copytree(space_world["runs"], runs)
    meta = runs / "popularity.jsonl.meta.json"
    meta.write_text(json.dumps({**json.loads(meta.read_text()), "complete": False}))
    assert [p.name for p in find_runs(runs)] == ["tfidf.jsonl"]
    (runs / "tfidf.jsonl.meta.json").unlink()
    assert main(["leaderboard", "--data", str(space_world["data"]), "--runs", str(runs)]) == 1
    assert "no complete runs" in capsys.readouterr().out
    assert main(["leaderboard", "--data", str(space_world["data"]), "--runs", str(tmp_path / "absent")]) != 0
