"""The leaderboard's interactive view: `trace-bench leaderboard --interactive DIR` prints the interactive rows
(with their intervals) beside the teacher-forced rows of the same system, pool and corpus, writes them with
the other tables, and the Space's Interactive tab reads the file it writes."""

from __future__ import annotations

import csv
import io

import pytest

from trace_dataset.datadir import kb_dir
from trace_dataset.io import read_json
from trace_dataset.kb.store import KnowledgeBase
from trace_harness.leaderboard.interactive import (
    BOARD_FILE,
    format_interactive,
    interactive_rows,
    read_interactive,
)
from trace_harness.protocols.interactive.run import run_interactive

N = 4


@pytest.fixture(scope="module")
def board_dirs(small_corpus, tmp_path_factory):
    """Teacher-forced tfidf and popularity runs, interactive tfidf and aspect runs (aspect has no TF row)."""
    from trace_harness.protocols.teacher_forced.runner import run_baseline

    root = tmp_path_factory.mktemp("ia_board")
    kb = KnowledgeBase.load(kb_dir(small_corpus))
    for name in ("tfidf", "popularity"):
        run_baseline(name, small_corpus, root / "runs" / f"{name}.jsonl", kb=kb, progress=False)
    for name in ("tfidf", "aspect"):
        run_interactive(
            name, small_corpus, root / "interactive" / name, n=N, progress=False, n_boot=200, kb=kb
        )
    (root / "interactive" / "junk").mkdir()
    (root / "interactive" / "junk" / "metrics.json").write_text('{"not": "interactive"}')
    return root


def test_the_leaderboard_cli_prints_and_writes_the_interactive_view(
    small_corpus, board_dirs, tmp_path, capsys
):
    from trace_bench.cli import main

    out = tmp_path / "board"
    rc = main(
        [
            "-q",
            "leaderboard",
            "--data",
            str(small_corpus),
            "--runs",
            str(board_dirs / "runs"),
            "--interactive",
            str(board_dirs / "interactive"),
            "--out",
            str(out),
            "--n-boot",
            "200",
        ]
    )
    assert rc == 0
    printed = capsys.readouterr().out
    tf_at = printed.index("Table 5")
    live_at = printed.index("Interactive: a simulated traveler")
    assert tf_at < live_at  # after the teacher-forced tables
    live = printed[live_at:].splitlines()
    assert "Live success (TSR)↑" in live[1] and "TF TSR" in live[1]
    assert live[1].split()[:6] == ["System", "Simulator", "Pool", "Split", "Turns", "Dialogues"]
    tfidf = next(line for line in live if line.startswith("TF-IDF"))  # the leaderboard's names
    aspect = next(line for line in live if line.startswith("Aspect"))
    assert "±" in tfidf and tfidf.count(" - ") == 0  # every cell filled, with its interval
    assert " - " in aspect  # no teacher-forced row of aspect
    stored = read_json(out / BOARD_FILE)
    rows = {r["system"]: r for r in stored["rows"]}
    assert set(rows) == {"TF-IDF", "Aspect"}  # the junk folder is skipped
    lb = {r["system"]: r for r in read_json(out / "leaderboard.json")["rows"] if r["pool"] == "closed"}
    tf = rows["TF-IDF"]["teacher_forced"]
    assert (
        tf["metrics"]["tsr"] == lb["TF-IDF"]["metrics"]["tsr"]
        and tf["ci"]["tsr"] == lb["TF-IDF"]["ci"]["tsr"]
    )
    assert rows["Aspect"]["teacher_forced"] is None
    live_metrics = read_json(board_dirs / "interactive" / "tfidf" / "metrics.json")
    sr = live_metrics["dialogue"]["success_rate"]
    assert rows["TF-IDF"]["metrics"]["success"] == sr["mean"]
    assert rows["TF-IDF"]["ci"]["success"] == [sr["ci_low"], sr["ci_high"]]
    assert (
        rows["TF-IDF"]["metrics"]["rejection_recovery"]
        == live_metrics["trace"]["values"]["rejection_recovery"]
    )
    table = list(csv.DictReader(io.StringIO((out / "interactive_trace.csv").read_text())))
    assert [r["system"] for r in table] == ["TF-IDF", "Aspect"]  # Table 5's order
    assert float(table[0]["success_ci_low"]) == sr["ci_low"] and table[1]["tf_tsr"] == ""
    assert (table[0]["split"], table[0]["turns"], table[0]["fallback_share"]) == ("test", "8", "0.0")


def test_a_teacher_forced_row_of_another_corpus_is_not_put_beside(board_dirs):
    row = {
        "baseline": "tfidf",
        "pool": "closed",
        "split": "test",
        "source": "baseline",
        "system": "TF-IDF",
        "corpus_version": "another",
        "metrics": {"tsr": 0.5},
        "ci": {"tsr": [0.4, 0.6]},
    }
    [live] = [r for r in interactive_rows(board_dirs / "interactive", [row]) if r["baseline"] == "tfidf"]
    assert live["teacher_forced"] is None
    row["corpus_version"] = live["corpus_version"]
    [live] = [r for r in interactive_rows(board_dirs / "interactive", [row]) if r["baseline"] == "tfidf"]
    assert live["teacher_forced"] == {"system": "TF-IDF", "metrics": {"tsr": 0.5}, "ci": {"tsr": [0.4, 0.6]}}
    assert "0.500 ±0.100" in format_interactive([live])


def test_the_space_tab_reads_the_written_file(small_corpus, board_dirs, tmp_path):
    from spaces_app.interactive_tab import read_board
    from trace_bench.cli import main

    out = tmp_path / "board"
    assert (
        main(
            [
                "-q",
                "leaderboard",
                "--data",
                str(small_corpus),
                "--runs",
                str(board_dirs / "runs"),
                "--interactive",
                str(board_dirs / "interactive"),
                "--out",
                str(out),
                "--n-boot",
                "0",
            ]
        )
        == 0
    )
    from_file = read_board([out / BOARD_FILE])
    tfidf = next(r for r in from_file.rows if r["system"] == "TF-IDF")
    assert tfidf["teacher_forced"]["metrics"]["tsr"] is not None and tfidf["run"] == "tfidf"
    assert from_file.folders["tfidf"] == (board_dirs / "interactive" / "tfidf").absolute()
    assert (tfidf["split"], tfidf["turns"]) == ("test", 8)
    # the folder gives the same live cells, and the teacher-forced ones from the baseline rows it is given
    tf_rows = read_json(out / "leaderboard.json")["rows"]
    from_dir = next(
        r for r in read_board([board_dirs / "interactive"], tf_rows).rows if r["system"] == "TF-IDF"
    )
    assert from_dir["metrics"] == tfidf["metrics"] and from_dir["teacher_forced"] == tfidf["teacher_forced"]
    assert read_interactive(out / BOARD_FILE)[1][0]["run"] in {"aspect", "tfidf"}


def test_the_traveller_verdict_stands_beside_each_live_cell_and_bad_systems_stay_off(small_corpus, tmp_path):
    from spaces_app.interactive_tab import board_html, read_board
    from trace_harness.leaderboard.interactive import TRACE_COLUMNS, VERDICT_LEGEND, VERDICT_MARKS
    from trace_harness.protocols.interactive.validity.report import figures

    root = tmp_path / "interactive"
    # 2 system turns: tfidf wins no dialogue, so it cannot beat the bad systems (a margin of 0 at best)
    run_interactive(
        "tfidf", small_corpus, root / "tfidf", n=N, turns=2, progress=False, n_boot=200, counterfactual=True
    )
    run_interactive("contrary", small_corpus, root / "contrary", n=N, turns=2, progress=False, n_boot=200)
    rows = interactive_rows(root)
    assert [r["baseline"] for r in rows] == ["tfidf"]  # contrary's own run, and those under tfidf/, left off
    check = rows[0]["simulator_check"]
    report = read_json(root / "tfidf" / "simulator_report.json")
    assert check == {"verdict": report["verdict"], "figures": figures(report)}
    assert report["verdict"] != "reliable"
    text = format_interactive(rows)
    mark = VERDICT_MARKS[report["verdict"]]
    line = next(x for x in text.splitlines() if x.startswith("TF-IDF"))
    assert line.count(mark) >= len([c for c in TRACE_COLUMNS if c.metric in rows[0]["metrics"]])
    assert VERDICT_LEGEND in text
    html = board_html(read_board([root]).rows, "trace")
    assert "margin over the deliberately bad systems" in html and "simulator " + report["verdict"] in html
