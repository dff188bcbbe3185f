"""The leaderboard table as the app renders it: one number format, intervals and best marks, notes, names as
text, and rows the app cannot show skipped (never taking it down)."""

from __future__ import annotations

import html
import json
import logging
import re
from dataclasses import replace

import pytest

from spaces_app.board_html import render_board
from spaces_app.leaderboard import board_lines, clean_rows, collect_rows, leaderboard_frame
from spaces_app.store import LocalStore
from trace_metrics.tables import VIEWS, format_value, header

T5, T6, T9 = VIEWS


def _row(system, source="baseline", pool="closed", **metrics):
    return {
        "system": system,
        "pool": pool,
        "source": source,
        "family": "non-LLM",
        "metrics": metrics,
        "corpus_version": "a" * 64,
        "kb_version": "b" * 64,
        "description": "d",
    }


def _cells(page: str, system: str) -> dict[str, dict[str, str]]:
    """{column header: {"text", "title", "class"}} of one rendered row."""
    row = re.search(rf'<tr data-system="{re.escape(html.escape(system))}">(.*?)</tr>', page, re.S).group(1)
    out = {}
    for m in re.finditer(
        r'<td class="(metric[^"]*)" data-column="([^"]+)"(?: data-value="[^"]*")? '
        r'title="([^"]*)">(.*?)</td>',
        row,
    ):
        out[html.unescape(m.group(2))] = {
            "class": m.group(1),
            "title": html.unescape(m.group(3)),
            "text": re.sub(r"<[^>]+>", " ", m.group(4)).strip(),
        }
    return out


def test_every_metric_has_three_decimals():
    """ "0.13", "1" and "3" sat beside "0.533"."""
    assert [format_value(v) for v in (0.13, 1, 3, 0.5334, 4.02, 0.0)] == [
        "0.130",
        "1.000",
        "3.000",
        "0.533",
        "4.020",
        "0.000",
    ]
    rows = [
        _row("A", **{"recall@1": 0}),
        _row("LLM Zero-Shot (paper)", "paper", **{"recall@1": 0.533, "bleu4": 0.13, "tsr": 1, "t2r": 3}),
    ]
    page = render_board(board_lines(rows, T5), T5)
    cells = _cells(page, "LLM Zero-Shot (paper)")
    assert [cells[header(c)]["text"] for c in VIEWS[T5] if cells[header(c)]["text"]] == [
        "0.533",
        "0.130",
        "1.000",
        "3.000",
    ]
    numbers = re.findall(r'<td class="metric[^"]*"[^>]*>([^<]+)', page)
    assert numbers and all(re.fullmatch(r"\d+\.\d{3}", n) for n in numbers)


def test_intervals_on_hover_or_shown_and_best_marks():
    rows = [
        {
            **_row("Strong", **{"recall@1": 0.40, "cgs": 0.9}),
            "ci": {"recall@1": [0.36, 0.44], "cgs": [0.88, 0.92]},
            "tied_best": {"recall@1": True, "cgs": False},
        },
        {
            **_row("Close", **{"recall@1": 0.39, "cgs": 0.95}),
            "ci": {"recall@1": [0.35, 0.43], "cgs": [0.94, 0.96]},
            "tied_best": {"recall@1": True, "cgs": True},
        },
        {**_row("Weak", **{"recall@1": 0.10, "cgs": 0.5}), "ci": {"recall@1": [0.08, 0.12]}, "tied_best": {}},
        _row("TF-IDF (paper)", "paper", **{"recall@1": 0.257}),
    ]
    lines = board_lines(rows, T5)
    assert [line.system for line in lines] == ["Strong", "Close", "Weak", "TF-IDF (paper)"]  # by corpus
    page = render_board(lines, T5)
    strong, close, weak = (_cells(page, s) for s in ("Strong", "Close", "Weak"))
    r1, cgs = "Accuracy: R@1 ↑", "Grounding: CGS ↑"
    assert "95% cluster-bootstrap interval (dialogues resampled): 0.360 to 0.440" in strong[r1]["title"]
    assert strong[r1]["text"] == "0.400"  # on hover only
    assert strong[r1]["class"] == "metric best" and close[r1]["class"] == "metric best"
    assert strong[cgs]["class"] == "metric" and close[cgs]["class"] == "metric best"
    assert weak[r1]["class"] == "metric" and "not significantly different" not in weak[r1]["title"]
    assert "not significantly different from the best" in close[cgs]["title"]
    assert "interval" not in _cells(page, "TF-IDF (paper)")[r1]["title"]  # the paper's rows have none
    assert "Bold, shaded" in page and "Hover a value" in page
    shown = render_board(lines, T5, show_ci=True)
    assert _cells(shown, "Strong")[r1]["text"] == "0.400 0.360–0.440"
    frame = leaderboard_frame(rows, T5)  # the exported table keeps plain numbers
    assert frame.loc[frame["System"] == "Strong", r1].item() == 0.4


def test_rows_of_two_corpora_are_ranked_apart_under_their_corpus():
    """The paper's rows (its 10,000-dialogue corpus) never rank among the rows scored here: each corpus is a
    group under a heading naming it, the rows scored here first, each group ranked on its own."""
    rows = [
        _row("LLM Zero-Shot (paper)", "paper", **{"recall@1": 0.533}),
        _row("Knowledge-Enh.", **{"recall@1": 0.439}),
        {**_row("DST (paper)", "paper", **{"recall@1": 0.381}), "corpus_version": "paper (Yelp)"},
        _row("Mine", "submission", **{"recall@1": 0.6}),
        {**_row("Other data", **{"recall@1": 0.9}), "corpus_version": "c" * 64},
    ]
    rows[0]["corpus_version"] = "paper (Yelp)"
    lines = board_lines(rows, T5)
    assert [line.system for line in lines] == [
        "Other data",  # the groups scored here in the order of their best row
        "Mine",
        "Knowledge-Enh.",
        "LLM Zero-Shot (paper)",
        "DST (paper)",
    ]
    page = render_board(lines, T5)
    headings = re.findall(r'<tr class="trace-corpus"><th colspan="\d+">(.*?)</th></tr>', page)
    assert headings == [
        "Scored here (corpus cccccccccccc), ranked on their own",
        "Scored here (corpus aaaaaaaaaaaa), ranked on their own",
        "Reported in the Trace paper (corpus: paper (Yelp)): a reference, ranked on its own, not comparable "
        "with rows of another corpus",
    ]
    assert page.index(headings[1]) < page.index('data-system="Knowledge-Enh."') < page.index(headings[2])
    assert 'class="trace-corpus"' not in render_board(board_lines(rows[1:2] + rows[3:4], T5), T5)  # one: none
    assert list(leaderboard_frame(rows, T5)["System"]) == [line.system for line in lines]  # the export too


def test_open_pool_column_reads_the_open_rows_interval_and_mark():
    rows = [
        _row("A", **{"grounding_score": 1.0}),
        {
            **_row("A", pool="open", **{"recall@1": 0.12}),
            "ci": {"recall@1": [0.1, 0.14]},
            "tied_best": {"recall@1": True},
        },
    ]
    cells = _cells(render_board(board_lines(rows, T6), T6), "A")
    assert cells["Accuracy: R@1 Open ↑"]["class"] == "metric best"
    assert "0.100 to 0.140" in cells["Accuracy: R@1 Open ↑"]["title"]


def _rank_cell(page: str, system: str) -> tuple[str, str]:
    """(shown text, hover text) of a row's rank cell."""
    row = re.search(rf'<tr data-system="{re.escape(html.escape(system))}">(.*?)</tr>', page, re.S).group(1)
    m = re.search(r'<td class="rank"(?: data-rank="\d+")? title="([^"]*)">(.*?)</td>', row, re.S)
    return re.sub(r"<[^>]+>", " ", m.group(2)).strip(), html.unescape(m.group(1))


def test_rank_column_shows_the_sorted_columns_rank_and_its_interval():
    marks = {"test": "bootstrap", "correction": "holm", "family": "board", "alpha": 0.05}
    rows = [
        {
            **_row("Strong", **{"recall@1": 0.40, "cgs": 0.9}),
            "rank": {"recall@1": 1, "cgs": 2},
            "rank_ci": {"recall@1": [1, 2], "cgs": [1, 2]},
            "tied_best": {"recall@1": True, "cgs": True},
            "marks_method": {**marks, "family_size": {"recall@1": 2, "cgs": 2}},
        },
        {
            **_row("Close", **{"recall@1": 0.39, "cgs": 0.95}),
            "rank": {"recall@1": 2, "cgs": 1},
            "rank_ci": {"recall@1": [1, 2], "cgs": [1, 1]},
            "tied_best": {"recall@1": True, "cgs": True},
            "marks_method": {**marks, "family_size": {"recall@1": 2, "cgs": 2}},
        },
        _row("TF-IDF (paper)", "paper", **{"recall@1": 0.257}),
    ]
    page = render_board(board_lines(rows, T5), T5)  # sorted by the first column, R@1
    text, title = _rank_cell(page, "Close")
    assert text == "2" and "Rank 2 on Accuracy: R@1 ↑" in title and "95% bootstrap interval 1–2" in title
    assert _rank_cell(page, "TF-IDF (paper)")[0] == ""  # the paper's rows are not ranked
    by_cgs = render_board(board_lines(rows, T5, sort_by="Grounding: CGS ↑"), T5, show_ci=True)
    assert _rank_cell(by_cgs, "Close")[0] == "1 1–1" and _rank_cell(by_cgs, "Strong")[0] == "2 1–2"
    assert "Rank: on Grounding: CGS ↑" in by_cgs
    assert "Holm (family-wise error rate) over every pair of rows in every column of a pool" in page


def test_itinerary_says_why_it_ranks_as_tfidf(space_settings):
    rows = collect_rows(space_settings, LocalStore(space_settings.results_dir))
    rows.append({**_row("Itinerary", **{"recall@1": 0.3}), "baseline": "itinerary"})
    page = render_board(board_lines(rows, T5), T5)
    itinerary = re.search(r'<tr data-system="Itinerary">.*?</tr>', page, re.S).group(0)
    assert re.search(
        r'<sup class="trace-note" title="Itinerary ranks with TF-IDF&#x27;s ranking unchanged', itinerary
    )
    assert "<b>†</b> Itinerary ranks with TF-IDF" in page and page.count("<b>†</b>") == 1  # one footnote
    assert '<sup class="trace-note"' in re.search(
        r'<tr data-system="Itinerary \(paper\)">.*?</tr>', page, re.S
    ).group(0)
    assert "trace-note" not in re.search(r'<tr data-system="TF-IDF">.*?</tr>', page, re.S).group(0)


def test_no_match_says_so():
    page = render_board([], T5)
    assert "No system matches these filters." in page


EVIL = [
    "<img src=x onerror=alert(1)>",
    "$\\evilcmd$",
    "${alert(1)}",
    "{{constructor}}",
    "@children",
    "`x`",
    "&amp; \\ \u0000",
]


def test_names_and_descriptions_are_text():
    rows = [
        {**_row(name if "\u0000" not in name else "nul"), "description": name, "source": "submission"}
        for name in EVIL
    ]
    page = render_board(board_lines(rows, T5), T5)
    unwrapped = re.sub(r'<span class="w">|</span>', "", page)  # words are kept whole by spans of their own
    for name in EVIL[:-1]:
        assert (
            f"<bdi>{html.escape(name).replace('$', '&#36;').replace('{', '&#123;').replace('}', '&#125;')}".replace(
                "@", "&#64;"
            )
            .replace("`", "&#96;")
            .replace("\\", "&#92;")
            in unwrapped
        )
    body = page.split("</style>", 1)[1]
    assert "<img" not in body and not re.search(
        r"[$`@\\]|\{\{|\$\{", body
    )  # no markup, template or math syntax


def test_bad_rows_are_skipped_and_logged(space_settings, caplog):
    """One bad row must never take the app down: it is skipped, the others shown, and the log says why."""
    store = LocalStore(space_settings.results_dir)
    board = json.loads(space_settings.baselines_file.read_text())
    good = board["rows"]
    bad = [
        {**good[0], "system": "Bidi\u202eevil"},
        {**good[0], "system": "NaN metric", "metrics": {"recall@1": "0.5"}},
        {**good[0], "system": "Bad ci", "ci": {"recall@1": [0.1]}},
        {**good[0], "system": "Bad mark", "tied_best": {"recall@1": "yes"}},
        {**good[0], "system": "Bad text", "description": {"html": "<b>"}},
        {**good[0], "system": 42},
        "not a row",
    ]
    path = space_settings.results_dir.parent / "board.json"
    path.write_text(json.dumps({"rows": [*good, *bad]}))
    settings = replace(space_settings, baselines_file=path)
    with caplog.at_level(logging.WARNING, logger="spaces_app.leaderboard"):
        rows = collect_rows(settings, store)
    assert {r["system"] for r in rows if r.get("source") == "baseline"} == {r["system"] for r in good}
    for why in (
        "control character U+202E",
        "metrics are not all numbers",
        "ci is not",
        "tied_best is not",
        "text field",
        "no system name",
        "a row is a JSON object",
    ):
        assert why in caplog.text
    corrupt = replace(space_settings, baselines_file=space_settings.results_dir.parent / "corrupt.json")
    corrupt.baselines_file.write_text("{not json")
    assert {r["source"] for r in collect_rows(corrupt, store)} == {
        "paper"
    }  # logged, the paper rows still shown
    assert clean_rows(
        [{"system": "ok", "pool": "closed", "metrics": {"x": float("nan")}}], "t"
    )  # NaN: empty cell


def test_app_starts_with_hostile_rows_stored(space_settings):
    """The issue's failure: with a `$\\evilcmd$` row stored the app could not start."""
    from spaces_app.app import AppContext, build_app

    store = LocalStore(space_settings.results_dir)
    for i, name in enumerate(EVIL[:-1]):
        row = {
            "system": name,
            "pool": "closed",
            "source": "submission",
            "family": "submitted",
            "metrics": {"recall@1": 0.1 + i / 100, "cgs": 0.5, "rejection_recovery": 0.4},
        }
        (store.root / "results" / f"evil{i}__closed.json").write_text(json.dumps(row))
    (store.root / "results" / "bidi__closed.json").write_text(
        json.dumps({"system": "x\u202ey", "pool": "closed", "metrics": {"recall@1": 0.2}})
    )
    app = build_app(space_settings, store)
    assert app.title == "Trace leaderboard"
    ctx = AppContext(space_settings, store)
    page = ctx.table(T5, "closed", ["submitted"], True, "", "System", "best first", False)
    assert page.count("<tr data-system=") == len(EVIL) - 1  # the bidi row is skipped


def test_collect_rows_recomputes_best_marks_over_baselines_and_submissions(space_settings, monkeypatch):
    import trace_harness.leaderboard.build

    seen: list[list[str]] = []

    def mark_best(rows):
        seen.append([(r["system"], r["source"]) for r in rows])
        return [{**r, "tied_best": {"recall@1": r["source"] == "submission"}} for r in rows]

    monkeypatch.setattr(trace_harness.leaderboard.build, "mark_best", mark_best, raising=False)
    store = LocalStore(space_settings.results_dir)
    (store.root / "results" / "mine__closed.json").write_text(
        json.dumps({"system": "Mine", "pool": "closed", "source": "submission", "metrics": {"recall@1": 0.9}})
    )
    rows = collect_rows(space_settings, store)
    assert {s for s in seen[0]} >= {
        ("Popularity", "baseline"),
        ("TF-IDF", "baseline"),
        ("Mine", "submission"),
    }
    page = render_board(board_lines(rows, T5), T5)
    assert _cells(page, "Mine")["Accuracy: R@1 ↑"]["class"] == "metric best"
    assert _cells(page, "TF-IDF")["Accuracy: R@1 ↑"]["class"] == "metric"


@pytest.mark.parametrize("text", ["|gold ∩ top-1| / |gold|", "a_b_c *x* [Rn] <b> $x$ # ~"])
def test_about_cells_show_definitions_as_written(text):
    """`|gold ∩ top-1| / |gold|` showed as "/gold ∩ top-1/ / /gold/" (pipes replaced to protect the table)."""
    import markdown_it

    from spaces_app.about import md_text

    table = f"| a | b |\n|---|---|\n| {md_text(text)} | x |\n"
    rendered = markdown_it.MarkdownIt("commonmark").enable("table").render(table)
    cell = re.search(r"<td>(.*?)</td>", rendered).group(1)
    assert html.unescape(cell) == text


def test_submissions_get_intervals_and_marks_beside_the_baselines(
    space_settings, valid_predictions, monkeypatch
):
    """A submission is scored with its 95% intervals and compared with the baselines by the leaderboard's own
    rule; the marks are recomputed only when the rows change."""
    import trace_harness.leaderboard.build
    from spaces_app.app import AppContext
    from spaces_app.owners import Owner
    from spaces_app.submissions import submit

    calls: list[int] = []
    real = trace_harness.leaderboard.build.mark_best

    def counting(rows, **kw):
        calls.append(len(rows))
        return real(rows, **kw)

    monkeypatch.setattr(trace_harness.leaderboard.build, "mark_best", counting)
    ctx = AppContext(space_settings, LocalStore(space_settings.results_dir))
    ctx.rows()
    ctx.table(T5, "closed", ["non-LLM"], False, "", None, "best first", False)
    assert len(calls) == 1  # the same rows: the marks are reused
    submit(ctx.store, space_settings, valid_predictions, name="Mine", owner=Owner("token", token="t" * 20))
    rows = ctx.rows()
    assert len(calls) == 2
    mine = next(r for r in rows if r["system"] == "Mine")
    tfidf = next(r for r in rows if r["system"] == "TF-IDF" and r["pool"] == "closed")
    assert mine["ci"]["recall@1"] == pytest.approx(tfidf["ci"]["recall@1"])  # same file, same resampling
    assert mine["ci"]["recall@1"][0] < mine["metrics"]["recall@1"] < mine["ci"]["recall@1"][1]
    for metric in ("recall@1", "cgs", "t2r"):
        assert mine["tied_best"][metric] == tfidf["tied_best"][metric]  # identical predictions tie
    assert not any("tied_best" in r for r in rows if r["source"] == "paper")
    popularity = next(r for r in rows if r["system"] == "Popularity")
    assert "tied_best" in popularity and set(popularity["tied_best"]) >= {"recall@1", "cgs"}
    page = render_board(board_lines(rows, T5, families=["submitted"]), T5)
    assert "95% cluster-bootstrap interval" in _cells(page, "Mine")["Accuracy: R@1 ↑"]["title"]
    assert mine["rank"]["recall@1"] == tfidf["rank"]["recall@1"]  # ranked among the merged rows, tied
    assert mine["rank_ci"]["recall@1"][0] <= mine["rank"]["recall@1"] <= mine["rank_ci"]["recall@1"][1]
    assert mine["marks_method"]["correction"] == "holm" and "rank" not in next(
        r for r in rows if r["source"] == "paper"
    )
    assert _rank_cell(page, "Mine")[0] == str(mine["rank"]["recall@1"])
