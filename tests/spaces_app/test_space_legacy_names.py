"""A row stored before invisible characters were refused (`Alice` + U+FE0F under a key of its own) stays its
owner's: the owner takes the look-alike name the checks accept and the old row leaves the board in the same
write (its history stays); anyone else is told whose row it is, with the invisible character named."""

from __future__ import annotations

import html
import json

import pytest

from spaces_app.owners import Owner, owner_record
from spaces_app.store import HISTORY_DIR, RESULTS_DIR, Checked, LocalStore
from spaces_app.submissions import SubmissionError, submit

OLD_NAME = "Alice\ufe0f"  # VARIATION SELECTOR-16: stored as a row of its own before the normalisation
OLD_KEY = "alice-fe0f__closed"
OWNER = Owner("token", token="legacy-owner-token-0123")
STRANGER = Owner("token", token="somebody-else-token-0123")


def _legacy_store(root) -> LocalStore:
    store = LocalStore(root)
    row = {
        "system": OLD_NAME,
        "pool": "closed",
        "source": "submission",
        "family": "submitted",
        "metrics": {"recall@1": 0.5},
        "version": 1,
        "request": f"requests/{OLD_KEY}/v0001.jsonl",
        "owner": owner_record(OWNER),
    }
    for path in (root / RESULTS_DIR / f"{OLD_KEY}.json", root / HISTORY_DIR / OLD_KEY / "v0001.json"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(row), encoding="utf-8")
    return store


def test_only_the_owner_of_an_old_invisible_name_takes_its_visible_name(space_settings, valid_predictions):
    store = _legacy_store(space_settings.results_dir)
    with pytest.raises(SubmissionError) as refused:
        submit(store, space_settings, valid_predictions, name="Alice", owner=STRANGER)
    message = str(refused.value)
    assert f"looks like the existing row {OLD_NAME!r}" in message
    assert (
        "invisible character (U+FE0F VARIATION SELECTOR-16)" in message and "only that row's owner" in message
    )
    assert [r["system"] for r in store.rows()] == [OLD_NAME]

    stored = submit(store, space_settings, valid_predictions, name="Alice", owner=OWNER)
    assert stored["system"] == "Alice" and stored["version"] == 1
    assert [r["system"] for r in store.rows()] == ["Alice"]  # the old row left the board ...
    assert not (store.root / RESULTS_DIR / f"{OLD_KEY}.json").exists()
    assert (store.root / HISTORY_DIR / OLD_KEY / "v0001.json").exists()  # ... its history stays
    again = submit(store, space_settings, valid_predictions, name="alice", owner=OWNER)
    assert again["version"] == 2


def test_the_submit_tab_names_the_old_row_and_its_invisible_character(space_settings, valid_predictions):
    from spaces_app.app import AppContext
    from spaces_app.submit_tab import submit_action

    ctx = AppContext(space_settings, _legacy_store(space_settings.results_dir))
    status = html.unescape(
        submit_action(ctx, str(valid_predictions), "Alice", "", "closed", token=STRANGER.token)
    )
    assert "Error" in status and "invisible character (U+FE0F VARIATION SELECTOR-16)" in status
    status = submit_action(ctx, str(valid_predictions), "Alice", "", "closed", token=OWNER.token)
    assert "Scored and added" in status and [r["system"] for r in ctx.store.rows()] == ["Alice"]


def test_the_hub_store_retires_the_old_row_in_the_same_commit(tmp_path):
    from spaces_app.store import HubStore
    from spaces_app.submissions import refuse_lookalike
    from tests.support.hub import FakeHub

    hub = FakeHub(tmp_path / "repo")
    _legacy_store(hub.root)  # the repository holds the old row
    store = HubStore("me/trace-results", api=hub, ttl=0)
    predictions = tmp_path / "p.jsonl"
    predictions.write_text("line\n")
    row = {"system": "Alice", "pool": "closed", "metrics": {"recall@1": 0.25}}
    with pytest.raises(SubmissionError, match="only that row's owner"):
        store.put(
            row,
            predictions,
            STRANGER,
            check=lambda rows: Checked(retire=refuse_lookalike("Alice", rows, (), STRANGER, "closed")),
        )
    store.put(
        row,
        predictions,
        OWNER,
        check=lambda rows: Checked(retire=refuse_lookalike("Alice", rows, (), OWNER, "closed")),
    )
    assert hub.commits[-1]["paths"][-1] == f"{RESULTS_DIR}/{OLD_KEY}.json"  # deleted in the row's commit
    assert [r["system"] for r in store.rows()] == ["Alice"]
