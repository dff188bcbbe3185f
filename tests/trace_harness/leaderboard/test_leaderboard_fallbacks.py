"""Fallbacks and failures reach every table that shows a run: constructed runs with known fallback shares, the
not-own rule (over NOT_OWN_SHARE of the answers not the system's own), copies of one run, and rows scored on one
dialogue."""

from __future__ import annotations

import copy
import csv
import json
import logging

import pytest

from tests.support.leaderboard import write_run
from trace_dataset.constants import NOT_OWN_SHARE
from trace_harness import fallbacks as fb
from trace_harness.leaderboard.build import build_leaderboard, mark_best, write_leaderboard
from trace_harness.leaderboard.render import format_tables


@pytest.mark.parametrize(
    ("counts", "share", "own", "mark"),
    [
        ({}, 0.0, True, ""),
        ({"memory_hits": 9, "quote_retries": 4}, 0.0, True, ""),  # not fallbacks: not counted
        ({"unknown_labels": 4}, 0.0, True, ""),  # counted and shown in the report, no fallback: no mark
        ({"fallback_popularity": 1}, 0.1, True, " [fb 10%]"),  # exactly the limit: still its own
        ({"fallback_popularity": 2}, 0.2, False, " [fb 20%: not own]"),  # over NOT_OWN_SHARE (10%)
        (
            {"quote_check_failed": 3},
            0.3,
            True,
            " [fb 30%]",
        ),  # a failure of its own answer: marked, still its own
        (
            {"dst_extraction_failed": 9, "empty_response": 1},
            0.9,
            False,
            " [fb 90%: not own]",
        ),  # the largest kind
        (
            {"agent_failures": 3, "agent_calls": 4},
            0.75,
            False,
            " [fb 75%: not own]",
        ),  # per call, not per turn
        ({"quote_fallbacks": 25}, 1.0, True, " [fb 100%]"),  # capped at all turns
    ],
)
def test_share_and_mark(counts, share, own, mark):
    field = fb.report_of(counts, 10)
    assert field["share"] == pytest.approx(share) and field["own_result"] is own
    assert fb.mark({"fallbacks": field}) == mark and fb.own_result({"fallbacks": field}) is own
    assert field["rows"] == 10 and field["threshold"] == NOT_OWN_SHARE == 0.1


def test_reading_the_run_metadata():
    """The leaderboard's field is the run summary's report (the runner stores the same dict)."""
    meta = {"n_rows": 28, "summary": {"rows": {"fallback_popularity": 28, "unknown_labels": 3}}}
    field = fb.run_fallbacks(meta)
    assert field == fb.fallback_report(meta)
    assert field["share"] == field["replaced_share"] == 1.0 and field["own_result"] is False
    assert field["kinds"]["unknown_labels"] == {
        "count": 3,
        "of": 28,
        "share": 0.1071,
        "per": "system turn",
        "what": "response citing a label never shown",
        "marked": False,
        "replaces": False,
    }
    assert fb.csv_fields({"fallbacks": field}) == [1.0, 1.0, "fallback_popularity=28", 0]
    assert fb.run_fallbacks({"n_rows": 5})["share"] == 0.0  # a run that counted nothing
    assert fb.run_fallbacks({}) is None  # unknown: no field, no mark
    assert fb.mark({}) == "" and fb.own_result({}) is True and fb.csv_fields({}) == [None] * 4
    text = fb.describe({"fallbacks": field})
    assert (
        "answered by the Popularity fallback: 28 of 28 system turns" in text
        and "not the system's own" in text
    )
    assert "label never shown" not in text  # not a fallback: in the CSV/JSON counts, not in the mark
    assert fb.share_text(0.004) == "<1%" and fb.share_text(1.0) == "100%"


@pytest.fixture
def fallback_runs(data_dir, reference_rows, tmp_path):
    """TF-IDF (the reference answers, no counts); an LLM baseline with the same answers but every turn from
    the Popularity fallback; DST with 30% failed extractions and worse answers; RAG-Citation with the reference
    answers, 30% failed quote checks (its own failure) and 10% Popularity fallbacks (the limit)."""
    runs = tmp_path / "runs"
    n = len(reference_rows)
    write_run(runs, "tfidf", reference_rows, n_rows=n)
    write_run(
        runs,
        "llm_zero_shot",
        reference_rows,
        family="LLM",
        n_rows=n,
        summary={"rows": {"fallback_popularity": n}},
    )
    worse = copy.deepcopy(reference_rows)
    for r in worse:
        r["ranked_poi_ids"] = r["ranked_poi_ids"][::-1]
    write_run(runs, "dst", worse, family="LLM", n_rows=n, summary={"rows": {"dst_extraction_failed": 3}})
    counts = {"quote_check_failed": 3, "fallback_popularity": 1}
    write_run(runs, "rag_citation", reference_rows, family="LLM", n_rows=n, summary={"rows": counts})
    return runs


def test_rows_tables_and_files_carry_the_fallbacks(data_dir, fallback_runs, reference_rows, tmp_path):
    rows = build_leaderboard(data_dir, fallback_runs, split="test", n_boot=300)
    by = {r["baseline"]: r for r in rows}
    assert (
        by["llm_zero_shot"]["fallbacks"]["own_result"] is False
        and by["llm_zero_shot"]["fallbacks"]["share"] == 1
    )
    assert (
        by["dst"]["fallbacks"]["share"] == pytest.approx(0.3)
        and by["dst"]["fallbacks"]["own_result"] is False
    )
    rag = by["rag_citation"]["fallbacks"]
    assert (
        rag["share"] == pytest.approx(0.3)
        and rag["replaced_share"] == pytest.approx(0.1)
        and rag["own_result"]
    )
    assert by["tfidf"]["fallbacks"]["share"] == 0.0
    # the fallback's numbers are the best on the board, but a row that is not its own is marked against nothing
    assert "tied_best" not in by["llm_zero_shot"] and by["tfidf"]["tied_best"]["recall@1"] is True
    assert (
        "tied_best" not in mark_best(rows, n_boot=300)[[r["baseline"] for r in rows].index("llm_zero_shot")]
    )
    text = format_tables(rows)
    assert (
        "LLM Zero-Shot [fb 100%: not own]" in text and "DST [fb 30%: not own]" in text and fb.LEGEND in text
    )
    assert f"{by['rag_citation']['system']} [fb 30%] " in text and "TF-IDF [fb" not in text
    paths = write_leaderboard(rows, tmp_path / "board")
    with open(paths["table5_closed"], newline="") as f:
        table = {r["system"]: r for r in csv.DictReader(f)}
    assert table["LLM Zero-Shot"]["fallback_share"] == "1.0" and table["LLM Zero-Shot"]["own_result"] == "0"
    assert table["LLM Zero-Shot"]["fallbacks"] == f"fallback_popularity={len(reference_rows)}"
    assert table["DST"]["own_result"] == "0" and table["TF-IDF"]["fallbacks"] == ""
    rag = table[by["rag_citation"]["system"]]
    assert (rag["fallback_share"], rag["replaced_share"], rag["own_result"]) == ("0.3", "0.1", "1")
    assert rag["fallbacks"] == "fallback_popularity=1;quote_check_failed=3"
    with open(paths["json"]) as f:  # the JSON carries the run summary's report as it is
        stored = {r["baseline"]: r.get("fallbacks") for r in json.load(f)["rows"]}
    assert stored["rag_citation"] == by["rag_citation"]["fallbacks"] and stored["tfidf"]["share"] == 0.0


def test_the_space_shows_the_marks(data_dir, fallback_runs):
    from spaces_app.board_html import render_board
    from spaces_app.gap import NOT_OWN_NAME, gap_figure
    from spaces_app.leaderboard import board_lines, clean_rows

    rows = clean_rows(build_leaderboard(data_dir, fallback_runs, split="test", n_boot=0), "test")
    assert len(rows) == 4  # the field passes the app's row check
    view = "Table 5: headline"
    html = render_board(board_lines(rows, view), view)
    assert 'class="not-own"' in html and ">fb 100%: not own</span>" in html and ">fb 30%</span>" in html
    assert "answered by the Popularity fallback: 10 of 10 system turns" in html
    fig = gap_figure(rows, "closed", "cgs")
    [not_own] = [t for t in fig.data if t.name == NOT_OWN_NAME]
    assert not_own.marker.symbol == "circle-x-open" and "Popularity fallback" in not_own.customdata[0][4]
    hostile = {**rows[0], "fallbacks": {"share": "all", "counts": {}}}
    assert clean_rows([hostile], "test") == []  # a malformed field is refused, not shown


def test_two_copies_of_one_run_are_named(data_dir, reference_rows, tmp_path, caplog):
    runs = tmp_path / "runs"
    first = write_run(runs, "tfidf", reference_rows)
    second = write_run(runs / "copy", "tfidf", reference_rows)
    with caplog.at_level(logging.WARNING, logger="trace_harness.leaderboard.build"):
        rows = build_leaderboard(data_dir, runs, split="test", n_boot=0)
    assert len(rows) == 2
    [warning] = [r.message for r in caplog.records if "rows named" in r.message]
    assert "copies of one run" in warning and str(first) in warning and str(second) in warning


def test_one_dialogue_gives_no_interval_and_no_mark(caplog):
    from tests.support.leaderboard import fake_result
    from trace_harness.leaderboard.build import result_row

    def row(name, recall):
        per_item = {"recommendation_turns": {"dialogue_id": ["d1", "d1"], "recall@1": recall}}
        return result_row(fake_result(per_item), system=name, family="non-LLM", source="baseline", n_boot=200)

    from spaces_app.board_html import ONE_DIALOGUE_LABEL, render_board
    from spaces_app.leaderboard import board_lines

    with caplog.at_level(logging.WARNING):
        rows = mark_best([row("A", [1.0, 1.0]), row("B", [0.0, 1.0])], n_boot=200)
    assert all(not r.get("ci") and "tied_best" not in r for r in rows)
    assert any("resampling has no variance" in r.message for r in caplog.records)
    table = format_tables(rows).split("Table 5: headline — pool: closed\n", 1)[1].split("\n\n", 1)[0]
    assert "1.000" in table and "0.500" in table and "±" not in table and "*" not in table  # bare values
    html = render_board(board_lines(rows, "Table 5: headline"), "Table 5: headline")
    assert ONE_DIALOGUE_LABEL.split(" (")[0] in html and "interval (dialogues resampled):" not in html


def test_rows_of_two_corpora_get_a_table_each():
    """`trace-bench leaderboard`'s tables never rank rows of two corpora together: one table per corpus, its
    heading naming it; with one corpus, one line names it."""
    from tests.support.leaderboard import fake_result
    from trace_harness.leaderboard.build import result_row

    def row(name, recall, corpus):
        result = fake_result({"recommendation_turns": {"dialogue_id": ["d1", "d2"], "recall@1": recall}})
        result["versions"]["corpus"] = corpus
        return result_row(result, system=name, family="non-LLM", source="baseline", intervals=False)

    rows = [row("A", [0.0, 1.0], "a" * 64), row("B", [1.0, 1.0], "b" * 64), row("C", [0.0, 0.0], "a" * 64)]
    text = format_tables(rows)
    first, second = text.split("Table 5: headline — pool: closed — corpus aaaaaaaaaaaa\n")[1].split(
        "Table 5: headline — pool: closed — corpus bbbbbbbbbbbb\n"
    )
    assert "A " in first and "C " in first and "B " not in first.split("\n\n")[0]
    assert "B " in second.split("\n\n")[0] and "A " not in second.split("\n\n")[0]
    assert "Every row scored on corpus" not in text
    assert "Every row scored on corpus aaaaaaaaaaaa" in format_tables([rows[0], rows[2]])
