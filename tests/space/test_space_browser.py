"""The leaderboard app in a real browser: Debian's Chromium driven by Playwright against 127.0.0.1.

One app and one browser for the module (startup is the slow part); every test gets a fresh page and an empty
results store.
"""

from __future__ import annotations

import json
import os
import shutil

import pytest
from space_browser import CHROMIUM, SYSTEMS_JS, chromium, chromium_page, served, systems, wait_for_table

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"Chromium not found at {CHROMIUM} "
                       "(apt-get install chromium; scripts/setup.sh test does it)"),
]


@pytest.fixture(scope="module")
def served_app(space_world, tmp_path_factory):
    from spaces_app.app import build_app
    from spaces_app.settings import Settings
    from spaces_app.store import LocalStore

    results = tmp_path_factory.mktemp("browser_results")
    settings = Settings(data_dir=space_world["data"], results_dir=results, runs_dir=space_world["runs"],
                        baselines_file=space_world["baselines"], split="test", max_upload_mb=5)
    store = LocalStore(results)
    app = build_app(settings, store)
    with served(app, max_file_size="5mb") as url, chromium() as browser:
        yield url, browser, store


@pytest.fixture()
def page_on_app(served_app):
    url, browser, store = served_app
    for folder in ("results", "requests"):
        shutil.rmtree(store.root / folder)
        (store.root / folder).mkdir()
    with chromium_page(browser) as page:
        page.goto(url)
        wait_for_table(page, "TF-IDF (paper)")
        yield page, store


def _upload(page, path) -> None:
    page.get_by_role("tab", name="Submit").click()
    page.set_input_files("#submit-file input[type=file]", str(path))
    page.wait_for_function("n => document.querySelector('#submit-file').innerText.includes(n)", arg=path.name)


def test_leaderboard_shows_every_row_with_versions(page_on_app, space_world):
    page, _ = page_on_app
    shown = systems(page)
    for system in ("Popularity", "TF-IDF", "TF-IDF (paper)", "LLM Zero-Shot (paper)"):
        assert system in shown
    text = page.inner_text("#leaderboard-table")
    for column in ("Accuracy: R@1 ↑", "Text: BLEU-4 ↑", "Grounding: CGS ↑", "Recovery: T2R ↓", "Corpus version",
                   "KB version"):
        assert column in text
    assert "paper (reported)" in text and "run here" in text
    kb = json.loads(space_world["baselines"].read_text())["rows"][0]["kb_version"][:12]
    assert kb in text


def test_views_filters_search_and_sort(page_on_app):
    page, _ = page_on_app
    page.locator("#view").get_by_text("Table 6: stress tests").click()
    wait_for_table(page, "Accuracy: R@1 Open ↑")
    assert "Recovery: Rej. Rec. ↑" in page.inner_text("#leaderboard-table")
    page.locator("#view").get_by_text("Table 9: practical value").click()
    wait_for_table(page, "Practical: Spatial Coh. ↑")
    page.locator("#show-paper").get_by_text("Paper reference rows").click()  # untick: only our runs
    wait_for_table(page, "(paper)", present=False)
    assert sorted(systems(page)) == ["Popularity", "TF-IDF"]
    page.locator("#families").get_by_text("non-LLM", exact=True).click()
    wait_for_table(page, "Popularity", present=False)
    assert systems(page) == []
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
    page.wait_for_function(f"() => {{ const s = ({SYSTEMS_JS})().map(x => x.toLowerCase()); "
                           "return s.length > 2 && s.every((x, i) => i === 0 || s[i - 1] <= x); }")
    shown = systems(page)
    assert shown == sorted(shown, key=str.lower)
    page.locator("#order").get_by_text("reversed").click()
    page.wait_for_function(f"() => {{ const s = ({SYSTEMS_JS})().map(x => x.toLowerCase()); "
                           "return s.length > 2 && s.every((x, i) => i === 0 || s[i - 1] >= x); }")
    shown = systems(page)
    assert shown == sorted(shown, key=str.lower, reverse=True)


def test_gap_plot_renders_for_both_axes(page_on_app):
    page, _ = page_on_app
    page.get_by_role("tab", name="Three-Competency Gap").click()
    img = page.wait_for_selector("#gap-plot img")
    src = img.get_attribute("src")
    assert src.startswith(("data:image/png", "http"))
    page.wait_for_function("() => document.querySelector('#gap-plot img').naturalWidth > 100")
    page.get_by_text("Rejection recovery", exact=True).click()
    page.wait_for_function("s => { const i = document.querySelector('#gap-plot img'); return i && i.src !== s "
                           "&& i.naturalWidth > 100; }", arg=src)


def test_valid_submission_appears_as_a_new_row_escaped(page_on_app, valid_predictions):
    page, store = page_on_app
    name = "<img src=x onerror=window.__x=1><script>window.__x=2</script>"
    _upload(page, valid_predictions)
    page.fill("#submit-name textarea, #submit-name input", name)
    page.fill("#submit-description textarea, #submit-description input", "<b>bold</b> [a](javascript:alert(1))")
    page.click("#submit-button")
    page.wait_for_function("document.querySelector('#submit-status').innerText.includes('Scored and added')",
                           timeout=120_000)
    assert [r["system"] for r in store.rows()] == [name]
    assert name in page.inner_text("#submit-status")  # shown as text
    page.get_by_role("tab", name="Leaderboard").click()
    wait_for_table(page, "<script>window.__x=2</script>")
    assert name in systems(page)
    assert "<b>bold</b>" in page.inner_text("#leaderboard-table")
    assert page.evaluate("document.querySelectorAll('#leaderboard-table img, #leaderboard-table script, "
                         "#leaderboard-table b, #submit-status img, #submit-status script').length") == 0
    assert page.evaluate("window.__x === undefined")  # nothing ran
    page.reload()  # a new visitor sees the row too
    wait_for_table(page, "<script>window.__x=2</script>")


def test_invalid_submission_shows_its_error_and_adds_nothing(page_on_app, invalid_predictions):
    page, store = page_on_app
    _upload(page, invalid_predictions)
    page.fill("#submit-name textarea, #submit-name input", "Broken")
    page.click("#submit-button")
    page.wait_for_function("document.querySelector('#submit-status').innerText.includes('Error')", timeout=120_000)
    status = page.inner_text("#submit-status")
    assert "invalid.jsonl: predictions do not match" in status and "3 missing" in status
    assert store.rows() == []
    page.get_by_role("tab", name="Leaderboard").click()
    assert "Broken" not in page.inner_text("#leaderboard-table")


def test_oversized_upload_is_refused(page_on_app, tmp_path):
    page, store = page_on_app
    big = tmp_path / "big.jsonl"
    big.write_bytes(b"\n" * (6 * 2**20))
    page.get_by_role("tab", name="Submit").click()
    page.set_input_files("#submit-file input[type=file]", str(big))
    page.wait_for_function("document.body.innerText.includes('exceed the maximum allowed size of 5.0 Mb')")
    page.fill("#submit-name textarea, #submit-name input", "Big")
    page.click("#submit-button")
    page.wait_for_function("document.querySelector('#submit-status').innerText.includes('Error')", timeout=60_000)
    assert "no predictions file uploaded" in page.inner_text("#submit-status")
    assert store.rows() == []


def test_dialogue_browser(page_on_app):
    page, _ = page_on_app
    page.get_by_role("tab", name="Dialogues").click()
    first_quote = page.wait_for_selector("#dialogue-view a.trace-quote-link")
    quote_text = first_quote.inner_text()
    target = first_quote.get_attribute("href")
    span = page.locator(f"#dialogue-view {target} mark.trace-span")
    assert span.inner_text() == quote_text  # the quote links to the very span of its review
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


def test_about_tab(page_on_app):
    page, _ = page_on_app
    page.get_by_role("tab", name="About").click()
    page.wait_for_selector("#about table")
    text = page.inner_text("#about")
    for needle in ("recall@1", "cgs", "rejection_recovery", "Dataset card", "Table 5: headline"):
        assert needle in text
