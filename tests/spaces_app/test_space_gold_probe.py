"""Looking for the blind gold from outside, as a submitter can: the app's own API (gradio_client: every endpoint
it lists, the submission endpoint with files built to make the validation name a gold POI), its HTTP routes
(config, API info, file downloads of the gold folder) and a browser (every tab, the blind track, a refused
submission). The app serves the blind period only, no public data: a gold POI id anywhere in a response is a
leak, and so is the gold folder's path or its secret seed."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from tests.support.browser import CHROMIUM, chromium_page, served
from tests.support.space_blind import SECRET_SEED, gold_poi_ids, write_gold
from trace_dataset.datadir import iter_dialogues, split_file

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=f"Chromium not found at {CHROMIUM}"),
]
TRACK = "blind 2026-12"


@pytest.fixture(scope="module")
def probe(space_world, tmp_path_factory):
    from spaces_app.app import build_app
    from spaces_app.settings import Settings

    root = tmp_path_factory.mktemp("probe")
    gold = write_gold(space_world["data"], root / "gold")
    settings = Settings(
        results_dir=root / "results",
        split="test",
        max_upload_mb=5,
        blind_dirs=(gold,),
        interactive_dirs=(root / "interactive",),
        core_dirs=(root / "core",),
    )
    files = _probe_files(space_world, gold, root)
    with served(build_app(settings)) as url:
        yield url, gold, files


def _probe_files(space_world, gold, root):
    """A valid file, and files whose every ranking is another dialogue's gold (outside its candidates) or a
    gold POI twice, or whose rows are cut short."""
    rows = [json.loads(line) for line in (space_world["runs"] / "tfidf.jsonl").read_text().splitlines()]
    gold_of = {
        d["dialogue_id"]: [p for t in d["turns"] for p in t.get("gold_poi_ids") or ()]
        for d in iter_dialogues(gold, "test")
    }
    ids = list(gold_of)
    variants = {
        "swapped": [
            {**r, "ranked_poi_ids": gold_of[ids[(ids.index(r["dialogue_id"]) + 1) % len(ids)]]} for r in rows
        ],
        "twice": [{**r, "ranked_poi_ids": gold_of[r["dialogue_id"]] * 2} for r in rows],
        "short": rows[:-1],
    }
    out = {"valid": root / "valid.jsonl"}
    shutil.copyfile(space_world["runs"] / "tfidf.jsonl", out["valid"])
    for name, content in variants.items():
        out[name] = root / f"{name}.jsonl"
        out[name].write_text("".join(json.dumps(r) + "\n" for r in content))
    return out


def _secrets(gold) -> list[str]:
    return [*sorted(gold_poi_ids(gold)), str(gold), str(SECRET_SEED)]


def _leaks(text: str, gold) -> list[str]:
    return [s for s in _secrets(gold) if s in text]


def test_the_api_and_the_routes_give_no_path_to_the_gold(probe):
    import httpx
    from gradio_client import Client, handle_file

    url, gold, files = probe
    seen: list[str] = []
    for route in ("config", "gradio_api/info", "gradio_api/openapi.json", ""):
        response = httpx.get(url + route, timeout=60)
        seen.append(response.text)
    for path in (split_file(gold, "test"), gold / "period.json", gold / "corpus.json"):
        for route in (f"gradio_api/file={path}", f"file={path}", f"gradio_api/file/{path}"):
            response = httpx.get(url + route, timeout=60)
            assert response.status_code >= 400 or path.read_bytes() not in response.content, route
            seen.append(response.text.replace(str(path), "<the path asked for>"))  # a refusal repeats it
    client = Client(url, verbose=False)
    api = client.view_api(return_format="dict", print_info=False)
    seen.append(json.dumps(api))
    [submit] = [name for name in api["named_endpoints"] if "submit" in name]
    for name, path in files.items():
        for pool in ("closed", "open"):
            status, token = client.predict(
                handle_file(str(path)), f"Probe {name}", "", pool, TRACK, None, "t" * 20, api_name=submit
            )
            assert not isinstance(token, str)  # the token was given: none is issued (the field is left as is)
            seen.append(status)
            if name == "valid" and pool == "closed":
                assert "Scored and added" in status, status
            elif name in ("swapped", "short"):
                assert "Error" in status, (name, pool, status)
    assert "the details would name the hidden gold" in "".join(seen)
    for name in api["named_endpoints"]:  # every endpoint that needs no input: the board, the tabs' readers
        if not api["named_endpoints"][name]["parameters"]:
            seen.append(json.dumps(client.predict(api_name=name), default=str))
    assert [(leak, text[:300]) for text in seen for leak in _leaks(text, gold)] == []


def test_a_browser_finds_no_path_to_the_gold(probe):
    url, gold, files = probe
    with chromium_page() as page:
        page.goto(url)
        page.wait_for_selector("#leaderboard-table")
        page.locator("#track").get_by_label(TRACK).check()
        page.wait_for_selector('.trace-period[data-period="2026-12"]')
        pages = [page.content()]
        for tab in ("Three-Competency Gap", "Dialogues", "Interactive", "Submit", "CoRE", "About"):
            page.get_by_role("tab", name=tab).click()
            page.wait_for_timeout(500)
            pages.append(page.content())
        page.get_by_role("tab", name="Submit").click()
        with page.expect_file_chooser() as chooser:
            page.click("#submit-file button.upload-container")
        chooser.value.set_files(str(files["swapped"]))
        page.wait_for_selector('#submit-file td.filename[aria-label="swapped.jsonl"]')
        page.fill("#submit-name textarea, #submit-name input", "Browser probe")
        page.locator("#submit-track").get_by_label(TRACK).check()
        page.click("#submit-button")  # no token yet: one is issued into the field and nothing is stored
        page.wait_for_function(
            "document.querySelector('#submit-status').innerText.includes('Nothing stored yet')",
            timeout=120_000,
        )
        page.click("#submit-button")  # scored under the token the browser now holds
        page.wait_for_function("document.querySelector('#submit-status').innerText.includes('Error')")
        assert "the details would name the hidden gold" in page.inner_text("#submit-status")
        pages.append(page.content())
        for path in (split_file(gold, "test"), gold / "period.json"):
            response = page.goto(f"{url}gradio_api/file={path}")
            assert response.status >= 400, path
            pages.append(page.content().replace(str(path), "<the path asked for>"))
    assert [leak for text in pages for leak in _leaks(text, gold)] == []
