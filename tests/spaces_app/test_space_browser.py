"""The leaderboard app in a real browser: Debian's Chromium driven by Playwright against 127.0.0.1.

One app and one browser for the module (startup is the slow part); every test gets a fresh page and an empty
results store.
"""

from __future__ import annotations

import json
import os
import re
import shutil

import pytest

from tests.support.browser import (
    CHROMIUM,
    GAP_PLOT,
    SYSTEMS_JS,
    chromium,
    chromium_page,
    hover_point,
    served,
    systems,
    wait_for_table,
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not os.path.exists(CHROMIUM),
        reason=f"Chromium not found at {CHROMIUM} (apt-get install chromium; scripts/setup.sh test does it)",
    ),
]


def _board_with_intervals(space_world, folder):
    """The baseline rows with constructed intervals and best marks (what the statistics rows carry)."""
    doc = json.loads(space_world["baselines"].read_text())
    for r in doc["rows"]:
        r["ci"] = {k: [v - 0.01, v + 0.01] for k, v in r["metrics"].items()}
        r["tied_best"] = {"recall@1": r["system"] == "TF-IDF", "cgs": True}
        first = r["system"] == "TF-IDF"
        r["rank"] = {"recall@1": 1 if first else 2, "cgs": 1}
        r["rank_ci"] = {"recall@1": [1, 1] if first else [1, 2], "cgs": [1, 2]}
    path = folder / "leaderboard.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.fixture(scope="module")
def served_app(space_world, tmp_path_factory):
    import trace_harness.leaderboard.build
    from spaces_app.app import build_app
    from spaces_app.settings import Settings
    from spaces_app.store import LocalStore

    results = tmp_path_factory.mktemp("browser_results")
    with (
        pytest.MonkeyPatch.context() as mp
    ):  # the marks above, as given (the rule itself is tested elsewhere)
        mp.setattr(trace_harness.leaderboard.build, "mark_best", lambda rows: rows, raising=False)
        settings = Settings(
            data_dir=space_world["data"],
            results_dir=results,
            runs_dir=space_world["runs"],
            baselines_file=_board_with_intervals(space_world, tmp_path_factory.mktemp("board")),
            split="test",
            max_upload_mb=5,
            interactive_dirs=(results / "interactive",),  # never the checkout's runs/interactive
            core_dirs=(results / "core",),
        )
        store = LocalStore(results)
        app = build_app(settings, store)
        with served(app, max_file_size="5mb") as url, chromium() as browser:
            yield url, browser, store


@pytest.fixture()
def page_on_app(served_app):
    url, browser, store = served_app
    for folder in ("results", "requests", "history"):
        shutil.rmtree(store.root / folder)
        (store.root / folder).mkdir()
    with chromium_page(browser) as page:
        page.goto(url)
        wait_for_table(page, "TF-IDF (paper)")
        yield page, store


def _choose(page, path) -> None:
    page.get_by_role("tab", name="Submit").click()
    with page.expect_file_chooser() as chooser:
        page.click("#submit-file button.upload-container")
    chooser.value.set_files(str(path))


def _upload(page, path) -> None:
    """Upload `path` as a user does: click the drop zone, pick the file, wait for the server to take it.

    Clicking (rather than setting the hidden input directly) waits until the component can open a file chooser,
    so a file is never handed to a component that is not listening yet.
    """
    with page.expect_response(lambda r: "/upload" in r.url and r.request.method == "POST") as sent:
        _choose(page, path)
    assert sent.value.ok, f"the upload of {path.name} was answered {sent.value.status}"
    # the name is shown as two spans (stem, extension) whose innerText depends on the styles; the cell's label
    # carries it whole
    page.wait_for_selector(f'#submit-file td.filename[aria-label="{path.name}"]')


def _headers(page) -> list[str]:
    return page.eval_on_selector_all(
        "#leaderboard-table th[data-column]", "ths => ths.map(t => t.dataset.column)"
    )


def test_leaderboard_shows_every_row_with_versions(page_on_app, space_world):
    page, _ = page_on_app
    shown = systems(page)
    for system in ("Popularity", "TF-IDF", "TF-IDF (paper)", "LLM Zero-Shot (paper)"):
        assert system in shown
    assert _headers(page) == [
        "Accuracy: R@1 ↑",
        "Accuracy: R@3 ↑",
        "Accuracy: MRR ↑",
        "Text: BLEU-4 ↑",
        "Text: ROUGE-L ↑",
        "Grounding: CGS ↑",
        "Grounding: Cite. D. ↑",
        "Recovery: TSR ↑",
        "Recovery: T2R ↓",
    ]
    text = page.inner_text("#leaderboard-table")
    assert "Versions" in text and "paper (reported)" in text and "run here" in text
    kb = json.loads(space_world["baselines"].read_text())["rows"][0]["kb_version"][:12]
    assert kb in text


LAYOUT_JS = """() => {
  const board = document.querySelector('#leaderboard-table');
  const scrollers = [board, ...board.querySelectorAll('*')].filter(e => {
    const s = getComputedStyle(e);
    return /(auto|scroll)/.test(s.overflowY) && e.scrollHeight > e.clientHeight + 1; });
  const table = board.querySelector('table.trace-board');
  const rect = el => el.getBoundingClientRect();
  const lines = el => { const r = document.createRange(); r.selectNodeContents(el);
    return new Set([...r.getClientRects()].map(x => Math.round(x.top))).size; };
  const metrics = [...table.querySelectorAll('thead th.metric')];
  const ver = table.querySelector('thead th.ver');
  return {
    scrollers: scrollers.map(e => e.tagName + '.' + e.className),
    rows: table.querySelectorAll('tbody tr[data-system]').length,
    visibleRows: [...table.querySelectorAll('tbody tr[data-system]')].filter(r => rect(r).height > 0).length,
    familyLines: [...table.querySelectorAll('td.fam')].map(lines),
    metricRight: Math.max(...metrics.map(m => rect(m).right)),
    versionLeft: rect(ver).left,
    tableOverflow: table.parentElement.scrollWidth - table.parentElement.clientWidth,
    viewport: window.innerWidth,
    numbers: [...table.querySelectorAll('td.metric')].map(td => td.childNodes.length ? td.childNodes[0].textContent : ''),
  };
}"""


def test_table_layout_at_1400px(page_on_app):
    """Every row without an inner scroll box, Family on one line ("submitte/d" wrapped), the metrics on screen
    before the version columns, every number with three decimals."""
    page, store = page_on_app
    row = {
        "system": "A submitted system with a rather long name",
        "pool": "closed",
        "source": "submission",
        "family": "submitted",
        "metrics": {"recall@1": 0.13, "tsr": 1, "t2r": 3},
        "description": "x " * 200,
    }
    (store.root / "results" / "long__closed.json").write_text(json.dumps(row))
    page.click("#refresh-button")
    wait_for_table(page, "A submitted system")
    layout = page.evaluate(LAYOUT_JS)
    assert layout["viewport"] == 1400
    assert layout["scrollers"] == []  # no inner scroll box
    assert layout["rows"] == layout["visibleRows"] == len(systems(page)) > 15
    assert set(layout["familyLines"]) == {1}
    assert layout["metricRight"] <= 1400 and layout["metricRight"] <= layout["versionLeft"]
    assert layout["tableOverflow"] <= 1  # nothing pushed off to the right
    numbers = [n for n in layout["numbers"] if n]
    assert numbers and all(re.fullmatch(r"\d+\.\d{3}", n) for n in numbers), numbers
    assert {"0.130", "1.000", "3.000"} <= set(numbers)


def test_intervals_best_marks_and_the_itinerary_note(page_on_app):
    page, _ = page_on_app
    cell = page.locator('#leaderboard-table tr[data-system="TF-IDF"] td[data-column="Accuracy: R@1 ↑"]')
    title = cell.get_attribute("title")
    assert "95% cluster-bootstrap interval" in title and "best, or not significantly different" in title
    assert cell.evaluate("td => getComputedStyle(td).fontWeight") == "700"  # marked
    other = page.locator('#leaderboard-table tr[data-system="Popularity"] td[data-column="Accuracy: R@1 ↑"]')
    assert other.evaluate("td => getComputedStyle(td).fontWeight") != "700"
    assert page.locator("#leaderboard-table .ci").count() == 0
    page.locator("#show-ci").get_by_text("Show 95% intervals").click()
    page.wait_for_selector("#leaderboard-table span.ci")
    low, high = (float(x) for x in cell.locator("span.ci").inner_text().split("–"))
    assert high - low == pytest.approx(0.02, abs=0.0015)
    note = page.locator('#leaderboard-table tr[data-system="Itinerary (paper)"] sup.trace-note')
    assert "ranks with TF-IDF's ranking unchanged" in note.get_attribute("title")
    assert "Itinerary ranks with TF-IDF's ranking" in page.inner_text("#leaderboard-table .trace-board-notes")


def test_rank_column_with_its_interval_onhover_point(page_on_app):
    page, _ = page_on_app
    rank = page.locator('#leaderboard-table tr[data-system="Popularity"] td.rank')
    assert rank.inner_text().strip() == "2"
    assert "Rank 2 on Accuracy: R@1 ↑; 95% bootstrap interval 1–2" in rank.get_attribute("title")
    assert (
        page.locator('#leaderboard-table tr[data-system="TF-IDF (paper)"] td.rank').inner_text().strip() == ""
    )
    assert page.locator("#leaderboard-table thead th.rank").inner_text().strip() == "Rank"
    assert "Rank: on Accuracy: R@1 ↑" in page.inner_text("#leaderboard-table .trace-board-notes")


def test_views_filters_search_and_sort(page_on_app):
    page, _ = page_on_app
    page.locator("#view").get_by_text("Table 6: stress tests").click()
    page.wait_for_function(
        "() => document.querySelector('#leaderboard-table th[data-column=\"Accuracy: R@1 Open ↑\"]')"
    )
    assert "Recovery: Rej. Rec. ↑" in _headers(page)
    page.locator("#view").get_by_text("Table 9: practical value").click()
    page.wait_for_function(
        "() => document.querySelector('#leaderboard-table th[data-column=\"Practical: Spatial Coh. ↑\"]')"
    )
    page.locator("#show-paper").get_by_text("Paper reference rows").click()  # untick: only our runs
    wait_for_table(page, "(paper)", present=False)
    assert sorted(systems(page)) == ["Popularity", "TF-IDF"]
    page.locator("#families").get_by_text("non-LLM", exact=True).click()
    wait_for_table(page, "Popularity", present=False)
    assert systems(page) == [] and "No system matches these filters." in page.inner_text("#leaderboard-table")
    page.locator("#families").get_by_text("non-LLM", exact=True).click()
    page.locator("#show-paper").get_by_text("Paper reference rows").click()
    wait_for_table(page, "(paper)")
    page.fill("#search textarea, #search input", "tf-idf")
    wait_for_table(page, "Popularity", present=False)
    assert sorted(systems(page)) == ["TF-IDF", "TF-IDF (paper)"]
    page.fill("#search textarea, #search input", "")
    wait_for_table(page, "Popularity")
    page.locator("#sort-by input").click()
    page.get_by_role("option", name="System", exact=True).click()
    page.wait_for_function(SORTED_BY_CORPUS_JS, arg=1)
    here, paper = _by_corpus(systems(page))
    assert here == sorted(here, key=str.lower) and paper == sorted(paper, key=str.lower)
    page.locator("#order").get_by_text("reversed").click()
    page.wait_for_function(SORTED_BY_CORPUS_JS, arg=-1)
    here, paper = _by_corpus(systems(page))
    assert here == sorted(here, key=str.lower, reverse=True) and paper == sorted(
        paper, key=str.lower, reverse=True
    )


# the rows scored here, then the paper's, each group sorted by name (order 1: A-Z, -1: Z-A)
SORTED_BY_CORPUS_JS = f"""(order) => {{ const s = ({SYSTEMS_JS})().map(x => x.toLowerCase());
  const paper = s.map(x => x.endsWith('(paper)'));
  const sorted = g => g.every((x, i) => i === 0 || (order > 0 ? g[i - 1] <= x : g[i - 1] >= x));
  return s.length > 2 && paper.every((p, i) => i === 0 || paper[i - 1] <= p)
    && sorted(s.filter((x, i) => !paper[i])) && sorted(s.filter((x, i) => paper[i])); }}"""


def _by_corpus(shown: list[str]) -> tuple[list[str], list[str]]:
    """The rows scored here and the paper's, asserting that no paper row comes before a row scored here."""
    paper = [name.endswith("(paper)") for name in shown]
    assert paper == sorted(paper)
    return [n for n, p in zip(shown, paper, strict=True) if not p], [
        n for n, p in zip(shown, paper, strict=True) if p
    ]


def test_gap_plot_is_interactive(page_on_app):
    page, _ = page_on_app
    page.get_by_role("tab", name="Three-Competency Gap").click()
    page.wait_for_function(
        f"() => document.querySelector('{GAP_PLOT}') && document.querySelector('{GAP_PLOT}')._fullData"
    )
    hover = hover_point(page, "non-LLM", "scored here")
    assert re.search(r"(Popularity|TF-IDF) \(non-LLM\)", hover) and "Recall@1 0." in hover
    assert "95% CI" in hover and "CGS (grounding) 0." in hover
    bars = page.evaluate(
        f"() => document.querySelector('{GAP_PLOT}')._fullData"
        ".filter(t => t.name === 'scored here').map(t => t.error_y.visible)"
    )
    assert bars == [True]  # error bars from the intervals
    page.locator("#gap-plot .legend .traces").filter(has_text="scored here").first.click()
    page.wait_for_function(
        f"() => document.querySelector('{GAP_PLOT}')._fullData.filter(t => t.legendgroup === "
        "'non-LLM').every(t => t.visible === 'legendonly')"
    )
    assert page.evaluate(
        f"() => document.querySelector('{GAP_PLOT}')._fullData.filter(t => t.legendgroup === 'LLM')"
        ".every(t => t.visible === true)"
    )
    page.locator("#gap-y").get_by_text("Rejection recovery", exact=True).click()
    page.wait_for_function(
        f"() => document.querySelector('{GAP_PLOT}').layout.yaxis.title.text === 'Rejection recovery'"
    )


NAME = "<img src=x onerror=window.__x=1>$\\evilcmd$${window.__y=1}"


def test_valid_submission_appears_as_a_new_row_as_text(page_on_app, valid_predictions):
    page, store = page_on_app
    _upload(page, valid_predictions)
    page.fill("#submit-name textarea, #submit-name input", NAME)
    page.fill(
        "#submit-description textarea, #submit-description input",
        "<b>bold</b> [a](javascript:alert(1)) $$x$$",
    )
    page.click("#submit-button")  # no token yet: one is issued into the field and nothing is stored
    page.wait_for_function(
        "document.querySelector('#submit-status').innerText.includes('Nothing stored yet')", timeout=120_000
    )
    assert store.rows() == []
    token = re.search(r"Your submitter token: (\S+) ", page.inner_text("#submit-status")).group(1)
    assert page.input_value("#submit-token input") == token
    page.click("#submit-button")  # the row is stored under the token the browser already holds
    page.wait_for_function(
        "document.querySelector('#submit-status').innerText.includes('Scored and added')", timeout=120_000
    )
    assert [r["system"] for r in store.rows()] == [NAME]
    assert NAME in page.inner_text("#submit-status")  # shown as text
    page.get_by_role("tab", name="Leaderboard").click()
    wait_for_table(page, "window.__y=1")
    assert NAME in systems(page)
    assert "<b>bold</b> [a](javascript:alert(1)) $$x$$" in page.inner_text("#leaderboard-table")
    assert (
        page.evaluate(
            "document.querySelectorAll('#leaderboard-table img, #leaderboard-table script, "
            "#leaderboard-table b:not(.trace-board-notes b), #submit-status img, #submit-status script, "
            "#leaderboard-table .katex').length"
        )
        == 0
    )
    page.get_by_role("tab", name="Three-Competency Gap").click()
    page.wait_for_function(
        f"() => {{ const gd = document.querySelector('{GAP_PLOT}'); return gd && gd._fullData && "
        "gd._fullData.some(t => t.legendgroup === 'submitted'); }"
    )
    assert hover_point(page, "submitted", "scored here").startswith(
        NAME
    )  # the hover text shows the name as written
    assert page.evaluate("window.__x === undefined && window.__y === undefined")  # nothing ran
    page.reload()  # a new visitor sees the row too
    wait_for_table(page, "window.__y=1")
    # replacing the row: refused without the token, accepted with it
    _upload(page, valid_predictions)
    page.fill("#submit-name textarea, #submit-name input", NAME)
    page.click("#submit-button")
    page.wait_for_function(
        "document.querySelector('#submit-status').innerText.includes('Error')", timeout=120_000
    )
    assert "give the submitter token" in page.inner_text("#submit-status")
    page.fill("#submit-token input", token)
    page.click("#submit-button")
    page.wait_for_function(
        "document.querySelector('#submit-status').innerText.includes('version 2')", timeout=120_000
    )
    assert [r["version"] for r in store.rows()] == [2]


def test_invalid_submission_shows_its_error_and_adds_nothing(page_on_app, invalid_predictions):
    page, store = page_on_app
    _upload(page, invalid_predictions)
    page.fill("#submit-name textarea, #submit-name input", "Broken")
    page.fill("#submit-token input", "browser-test-token-0123")  # a token: the file itself is checked
    page.click("#submit-button")
    page.wait_for_function(
        "document.querySelector('#submit-status').innerText.includes('Error')", timeout=120_000
    )
    status = page.inner_text("#submit-status")
    assert "invalid.jsonl: predictions do not match" in status and "3 missing" in status
    assert store.rows() == []
    page.get_by_role("tab", name="Leaderboard").click()
    assert "Broken" not in page.inner_text("#leaderboard-table")


def test_oversized_upload_is_refused(page_on_app, tmp_path):
    page, store = page_on_app
    big = tmp_path / "big.jsonl"
    big.write_bytes(b"\n" * (6 * 2**20))
    _choose(page, big)
    page.wait_for_function("document.body.innerText.includes('exceed the maximum allowed size of 5.0 Mb')")
    page.fill("#submit-name textarea, #submit-name input", "Big")
    page.click("#submit-button")
    page.wait_for_function(
        "document.querySelector('#submit-status').innerText.includes('Error')", timeout=60_000
    )
    assert "no predictions file uploaded" in page.inner_text("#submit-status")
    assert store.rows() == []


QUOTES_JS = """() => [...document.querySelectorAll('#dialogue-view a.trace-quote-link, #dialogue-answers mark.trace-quote')]
  .map(el => { const mark = el.tagName === 'A' ? el.querySelector('mark') : el;
    const s = getComputedStyle(el), m = getComputedStyle(mark);
    return [el.getBoundingClientRect().width - mark.getBoundingClientRect().width,
            s.paddingLeft, s.paddingRight, m.paddingLeft, m.paddingRight, s.marginLeft, s.marginRight]; })"""


def test_dialogue_browser(page_on_app):
    page, _ = page_on_app
    page.get_by_role("tab", name="Dialogues").click()
    first_quote = page.wait_for_selector("#dialogue-view a.trace-quote-link")
    quote_text = first_quote.inner_text()
    target = first_quote.get_attribute("href")
    span = page.locator(f"#dialogue-view {target} mark.trace-span")
    assert span.inner_text() == quote_text  # the quote links to the very span of its review
    # the quote marks hug the highlighted quote: no padding or margin inside them
    turn = first_quote.evaluate("a => a.parentElement.textContent")
    assert f'"{quote_text}"' in turn
    for gap, *paddings in page.evaluate(QUOTES_JS):
        assert abs(gap) < 0.5 and set(paddings) == {"0px"}
    first_quote.click()
    assert page.evaluate("location.hash") == target
    answers = page.inner_text("#dialogue-answers")
    for text in ("Popularity", "TF-IDF", "Hit@1", "CGS", "BLEU-4"):
        assert text in answers
    # pick by tier: the dialogue shown changes to one of that tier
    page.locator("#dialogue-tier input").click()
    page.get_by_role("option", name="Expert", exact=True).click()
    page.wait_for_function("document.querySelector('#dialogue-view').innerText.includes('tier Expert')")
    # pick a system turn: the answers follow
    page.locator("#dialogue-turn input").click()
    page.get_by_role("option").filter(has_text="farewell").first.click()
    page.wait_for_function("document.querySelector('#dialogue-answers').innerText.includes('(farewell)')")
    assert "Hit@1" not in page.inner_text("#dialogue-answers")
    # a filter that matches nothing says so
    page.fill("#dialogue-search textarea, #dialogue-search input", "no-such-dialogue")
    page.press("#dialogue-search textarea, #dialogue-search input", "Enter")
    page.wait_for_function(
        "document.querySelector('#dialogue-view').innerText.includes('No dialogue matches')"
    )
    assert "tier Expert" in page.inner_text("#dialogue-view") and "no-such-dialogue" in page.inner_text(
        "#dialogue-view"
    )


WORDS_JS = """() => {  // [word, lines] of every word of the About tables that a line break cuts
  const out = [];
  for (const td of document.querySelectorAll('#about table td, #about table th')) {
    const walker = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const m of node.textContent.matchAll(/[A-Za-z0-9_@.]+/g)) {
        const r = document.createRange(); r.setStart(node, m.index); r.setEnd(node, m.index + m[0].length);
        const tops = new Set([...r.getClientRects()].filter(x => x.width > 0).map(x => Math.round(x.top)));
        if (tops.size > 1) out.push([m[0], tops.size]);
      }
    }
  }
  return out;
}"""


def test_about_tab(page_on_app):
    page, _ = page_on_app
    page.get_by_role("tab", name="About").click()
    page.wait_for_selector("#about table")
    text = page.inner_text("#about")
    for needle in (
        "recall@1",
        "cgs",
        "rejection_recovery",
        "Dataset card",
        "Table 5: headline",
        "|gold ∩ top-1| / |gold|",
        "|gold ∩ top-3| / |gold|",
        "reject_and_refine",
        "[Rn]",
        "Itinerary",
    ):
        assert needle in text, needle
    assert "/gold" not in text
    assert page.evaluate(WORDS_JS) == []  # no word broken mid-way
