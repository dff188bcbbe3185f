"""Every tab of the app after a small main job, in Debian's Chromium at 1,400 px: each shows something (no
placeholder headers, no empty plot, no always-empty column), a run made while the app serves shows up on
Refresh, the fonts hold every glyph the headers use, and the tables read cleanly (headers break between words
only, one number format per column, the Run column on screen, the gap plot's points and origin labels clear).

One small main job, one app and one browser for the module.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from tests.support.browser import CHROMIUM, chromium, chromium_page, served, wait_for_table

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not os.path.exists(CHROMIUM),
        reason=f"Chromium not found at {CHROMIUM} (apt-get install chromium; scripts/setup.sh test does it)",
    ),
]
FONTS = Path(__import__("gradio").__file__).parent / "templates" / "frontend" / "static" / "fonts"
# a number with its decimals (e.g. 0.972, 3.8, 0.4367): the format of each column is its count of decimals
NUMBER = re.compile(r"^-?\d+(?:\.(\d+))?$")


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """`trace-bench demo` at a small size: two baselines, teacher-forced and live (interactive stage)."""
    from trace_harness.main_job.job import run_demo
    from trace_harness.main_job.options import DemoConfig

    out = tmp_path_factory.mktemp("demo") / "demo"
    assert (
        run_demo(DemoConfig(out=out, n=120, scale=0.25, per_cell=12, baselines="popularity,tfidf", workers=1))
        == 0
    )
    return out


@pytest.fixture(scope="module")
def served_demo(demo, tmp_path_factory):
    from spaces_app.app import build_app
    from spaces_app.settings import Settings

    extra = tmp_path_factory.mktemp("later")
    settings = Settings.from_env(
        {},
        demo_dir=demo,
        interactive_dirs=(demo / "interactive", extra / "interactive"),
        core_dirs=(demo / "core", extra / "core"),
    )
    fonts: list[str] = []
    with served(build_app(settings)) as url, chromium() as browser, chromium_page(browser) as page:
        page.on("request", lambda r: fonts.append(r.url) if ".woff" in r.url else None)
        page.goto(url)
        wait_for_table(page, "TF-IDF")
        yield page, demo, extra, fonts


def _tab(page, name: str) -> None:
    page.get_by_role("tab", name=name).click()


TABLE_JS = """(sel) => [...document.querySelectorAll(sel)].map(t => ({
  heads: [...t.querySelectorAll('thead th')].map(th => th.innerText.trim()),
  rows: [...t.querySelectorAll('tbody tr')].map(tr => [...tr.querySelectorAll('td')].map(td => td.innerText.trim())),
  right: Math.max(...[...t.querySelectorAll('thead th')].map(th => th.getBoundingClientRect().right)),
}))"""
# words (spans kept whole) that a line break cut in two: none may be
BROKEN_WORDS_JS = """(sel) => [...document.querySelectorAll(sel)].filter(s => s.getClientRects().length > 1)
  .map(s => s.textContent)"""


def test_every_tab_shows_content_without_placeholders(served_demo):
    page, demo, _, _ = served_demo
    assert page.locator("#leaderboard-table tbody tr[data-system]").count() >= 2
    _tab(page, "Three-Competency Gap")
    page.wait_for_function(
        "() => { const p = document.querySelector('#gap-plot .js-plotly-plot');"
        " return p && p._fullData && p._fullData.some(t => t.x.length); }"
    )
    _tab(page, "Dialogues")
    page.wait_for_function("() => (document.querySelector('#dialogue-view') || {}).innerText?.length > 100")
    _tab(page, "Interactive")
    page.wait_for_selector("#interactive-board table.trace-board")
    [board] = page.evaluate(TABLE_JS, "#interactive-board table.trace-board")
    assert [r[0] for r in board["rows"]] == ["Popularity", "TF-IDF"]
    assert board["heads"][:6] == ["System", "Simulator", "Pool", "Split", "Turn budget", "Dialogues"]
    assert board["heads"][-1] == "Run" and board["right"] <= 1400  # the Run column on screen
    for i, head in enumerate(board["heads"]):
        cells = [r[i] for r in board["rows"]]
        assert any(cells), f"column {head!r} is empty in every row"
        decimals = {len(m.group(1) or "") for c in cells if (m := NUMBER.match(c))}
        assert len(decimals) <= 1, f"column {head!r} mixes number formats: {cells}"
    assert page.evaluate(BROKEN_WORDS_JS, "#interactive-board th .w, #interactive-board td .w") == []
    [turns] = page.evaluate(TABLE_JS, "#interactive-turns table")
    assert turns["rows"] and turns["heads"][:2] == ["Turn", "Hits@1"]
    assert page.locator("#interactive-log .trace-turn").count() > 2
    _tab(page, "CoRE")
    page.wait_for_function(
        "() => document.querySelector('#core-scores').innerText.includes('No CoRE ratings yet')"
    )
    assert "scripts/demo.sh --baselines all,llm" in page.inner_text("#core-scores")
    assert not page.locator("#core-agreement-plot").is_visible()  # no empty plot
    _tab(page, "About")
    page.wait_for_selector("#about table")
    # nowhere a table headed by placeholder numbers ("1 2 3" of an empty data grid)
    heads = page.eval_on_selector_all("th", "ths => ths.map(t => t.innerText.trim())")
    assert not [h for h in heads if re.fullmatch(r"\d+", h)]


def test_the_board_ranks_each_corpus_apart(served_demo):
    """The paper's rows (its own corpus) are a block of their own under a heading naming it, after the rows
    scored here: never ranked among them."""
    from tests.support.browser import SYSTEMS_JS

    page, _, _, _ = served_demo
    _tab(page, "Leaderboard")
    wait_for_table(page, "TF-IDF")
    paper = [name.endswith("(paper)") for name in page.evaluate(SYSTEMS_JS)]
    assert paper == sorted(paper) and any(paper) and not all(paper)
    headings = page.eval_on_selector_all(
        "#leaderboard-table tr.trace-corpus th", "ths => ths.map(t => t.innerText.trim())"
    )
    assert len(headings) == 2 and headings[0].startswith("Scored here (corpus ")
    assert headings[1].startswith("Reported in the Trace paper (corpus: paper (Yelp, 10,000 dialogues))")


def test_a_run_made_while_serving_shows_up_on_refresh(served_demo):
    from trace_dataset.io import write_json
    from trace_harness.protocols.interactive.run import run_interactive

    page, demo, extra, _ = served_demo
    _tab(page, "Interactive")
    page.wait_for_selector("#interactive-board table.trace-board")
    assert "Aspect" not in page.inner_text("#interactive-board")
    run_interactive(
        "aspect", demo / "hydrated", extra / "interactive" / "aspect", n=3, progress=False, n_boot=100
    )
    page.click("#interactive-refresh")
    page.wait_for_function("() => document.querySelector('#interactive-board').innerText.includes('Aspect')")
    _tab(page, "CoRE")
    summary = {
        "n_logs": 1,
        "factors": {"coherence": {"mean": 3.0, "n": 1, "n_missing": 0}},
        "factor_mean": {"mean": 3.0, "n": 1},
        "ratings": {"total": 1, "ok": 1, "missing": 0},
        "identity": {"source": {"system": "tfidf"}, "llm": {"model": "judge"}},
    }
    write_json(extra / "core" / "tfidf" / "summary.json", summary)
    page.click("#core-refresh")
    page.wait_for_function("() => document.querySelector('#core-scores table') !== null")
    assert "0 of 1" in page.inner_text("#core-scores")
    page.reload()  # a new page load reads the folders again too
    _tab(page, "Interactive")
    page.wait_for_function(
        "() => (document.querySelector('#interactive-board') || {}).innerText?.includes('Aspect')"
    )
    shutil.rmtree(extra / "interactive" / "aspect")


def test_fonts_hold_every_glyph_the_headers_use(served_demo):
    """The fonts the page loads have a glyph for every character of its headers, labels and tab names (Gradio's
    SemiBold file, a 55-glyph subset, is never loaded: semibold text drew "RᴀG")."""
    from fontTools.ttLib import TTFont

    page, _, _, fonts = served_demo
    _tab(page, "Leaderboard")
    wait_for_table(page, "TF-IDF")
    weight = page.eval_on_selector(
        "#leaderboard-table thead th.metric", "th => getComputedStyle(th).fontWeight"
    )
    family = page.eval_on_selector(
        "#leaderboard-table thead th.metric", "th => getComputedStyle(th).fontFamily"
    )
    assert int(weight) >= 600 and family.strip("'\"").startswith("Source Sans Pro"), (weight, family)
    loaded = sorted({u.split("/static/fonts/", 1)[1] for u in fonts if "/static/fonts/" in u})
    assert loaded and not [f for f in loaded if "SemiBold" in f], loaded
    text = page.evaluate(
        "() => [...document.querySelectorAll('th, h1, h2, h3, h4, button, label, .trace-fb')]"
        ".map(e => e.innerText).join('')"
    )
    used = {c for c in text if not c.isspace()}
    for name in loaded:
        if name.startswith("SourceSansPro/"):
            cmap = TTFont(FONTS / name).getBestCmap()
            missing = sorted(c for c in used if ord(c) not in cmap)
            assert not missing, f"{name} has no glyph for {missing}"


def test_leaderboard_headers_and_gap_plot_read_cleanly(served_demo):
    page, _, _, _ = served_demo
    _tab(page, "Leaderboard")
    wait_for_table(page, "TF-IDF")
    # one line per metric header ("BLEU-4", "ROUGE-L" never wrapped at their hyphen)
    lines = page.eval_on_selector_all(
        "#leaderboard-table thead th.metric",
        "ths => ths.map(t => { const s = getComputedStyle(t); return Math.round((t.getBoundingClientRect().height"
        " - parseFloat(s.paddingTop) - parseFloat(s.paddingBottom)) / parseFloat(s.lineHeight)); })",
    )
    assert lines and max(lines) <= 1, lines
    assert page.evaluate(BROKEN_WORDS_JS, "#leaderboard-table .w") == []
    _tab(page, "Three-Competency Gap")
    page.wait_for_function("() => document.querySelectorAll('#gap-plot .scatterlayer .point').length > 0")
    clear = page.evaluate("""() => {
      const plot = document.querySelector('#gap-plot .js-plotly-plot');
      const area = plot.querySelector('.nsewdrag').getBoundingClientRect();
      const inside = [...plot.querySelectorAll('.scatterlayer .point')].every(p => {
        const b = p.getBoundingClientRect();
        return b.left >= area.left - 0.5 && b.right <= area.right + 0.5 && b.top >= area.top - 0.5
          && b.bottom <= area.bottom + 0.5; });
      const zero = sel => [...plot.querySelectorAll(sel)].find(t => t.textContent.trim() === '0');
      const x0 = zero('.xtick text'), y0 = zero('.ytick text');
      const a = x0.getBoundingClientRect(), b = y0.getBoundingClientRect();
      const overlap = a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
      return {inside, overlap};
    }""")
    assert clear == {"inside": True, "overlap": False}
