"""Submissions against takeover and loss: the submitter token is shown before
the row is stored (a closed pipe or a kill cannot leave a row whose token exists nowhere), look-alike and
mixed-script names are refused against existing rows (Unicode TR39 skeletons), names in other scripts get a real
slug, and closed-pool predictions cannot become an open-pool row."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from functools import partial

import pytest

from spaces_app.names import lookalike_key, mixed_script_word, slug
from spaces_app.owners import Owner
from spaces_app.store import LocalStore
from spaces_app.submissions import SubmissionError
from spaces_app.submissions import submit as _submit
from trace_bench.cli import main

ALICE = Owner("token", token="alice-token-0123456789")
BOB = Owner("token", token="bob-token-0123456789xx")
submit = partial(_submit, owner=ALICE)


def _cli(space_settings, predictions, *more):
    return [
        "submit",
        str(predictions),
        "--data",
        str(space_settings.data_dir),
        "--results",
        str(space_settings.results_dir),
        *more,
    ]


def test_the_token_is_printed_before_the_row_is_stored(
    space_settings, valid_predictions, capsys, monkeypatch
):
    seen = {}
    put = LocalStore.put

    def spy(self, row, *args, **kwargs):
        seen["printed before the commit"] = capsys.readouterr().out
        return put(self, row, *args, **kwargs)

    monkeypatch.setattr(LocalStore, "put", spy)
    assert main(_cli(space_settings, valid_predictions, "--name", "Early token")) == 0
    assert seen["printed before the commit"].startswith("submitter token: ")


def _child(space_settings, predictions, name, *, block_commit: bool) -> subprocess.Popen:
    """`trace-bench submit` in a child process; with `block_commit` the commit never comes (a kill lands there)."""
    code = (
        "import sys, time\nfrom spaces_app.store import LocalStore\n"
        + ("LocalStore.put = lambda *a, **k: time.sleep(600)\n" if block_commit else "")
        + "from trace_bench.cli import main\nsys.exit(main(sys.argv[1:]))"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    return subprocess.Popen(
        [sys.executable, "-c", code, *_cli(space_settings, predictions, "--name", name)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def test_a_kill_between_token_and_commit_stores_nothing_and_the_token_still_claims_the_name(
    space_settings, valid_predictions, capsys
):
    child = _child(space_settings, valid_predictions, "Killed bot", block_commit=True)
    try:
        first = child.stdout.readline()  # the token comes first, before the commit (which never comes)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
    assert first.startswith("submitter token: ")
    token = first.split(": ", 1)[1].strip()
    assert LocalStore(space_settings.results_dir).rows() == []
    assert main(_cli(space_settings, valid_predictions, "--name", "Killed bot", "--token", token)) == 0
    assert "version 1" in capsys.readouterr().out
    assert main(_cli(space_settings, valid_predictions, "--name", "Killed bot")) == 2  # nobody else takes it
    assert "give the submitter token" in capsys.readouterr().err


def test_a_closed_pipe_before_the_token_stores_nothing(space_settings, valid_predictions):
    child = _child(space_settings, valid_predictions, "Piped bot", block_commit=False)
    child.stdout.close()  # `... | head -0`: the reader is gone before the token is written
    _, err = child.communicate(timeout=300)
    assert child.returncode == 2 and "could not be shown" in err and "nothing was stored" in err
    assert "Traceback" not in err
    assert LocalStore(space_settings.results_dir).rows() == []


def test_the_token_file_is_written_before_the_commit(space_settings, valid_predictions, tmp_path, capsys):
    token_file = tmp_path / "token.txt"
    assert (
        main(_cli(space_settings, valid_predictions, "--name", "Filed bot", "--token-file", str(token_file)))
        == 0
    )
    out = capsys.readouterr().out
    assert token_file.read_text().strip() in out and (token_file.stat().st_mode & 0o777) == 0o600


@pytest.mark.parametrize(
    ("existing", "lookalike"),
    [
        ("Alice bot", "AIice bot"),  # capital I for l
        ("Alice bot", "A1ice bot"),  # digit one for l
        ("Coca", "\u0421\u043e\u0441\u0430"),  # every letter Cyrillic: one script, the same look
        ("Bob", "B0b"),  # zero for o
        ("Model", "rnodel"),  # r n for m
    ],
)
def test_lookalikes_of_existing_rows_are_refused(space_settings, valid_predictions, existing, lookalike):
    store = LocalStore(space_settings.results_dir)
    submit(store, space_settings, valid_predictions, name=existing)
    with pytest.raises(SubmissionError, match=f"looks like the existing row '{existing}'"):
        _submit(store, space_settings, valid_predictions, name=lookalike, owner=BOB)
    assert [r["system"] for r in store.rows()] == [existing]
    again = submit(
        store, space_settings, valid_predictions, name=existing.upper()
    )  # the same system: its owner
    assert again["version"] == 2


def test_mixed_script_words_are_refused(space_settings, valid_predictions):
    store = LocalStore(space_settings.results_dir)
    with pytest.raises(SubmissionError, match=r"word '\u0410lice' mixes scripts \(Cyrillic and Latin\)"):
        submit(store, space_settings, valid_predictions, name="\u0410lice bot")  # a Cyrillic A
    assert store.rows() == []
    assert (
        mixed_script_word("GPT-4o \u6570\u636e") is None
        and mixed_script_word("\u30c7\u30fc\u30bf\u7cfb") is None
    )


def test_names_in_other_scripts_get_a_slug_of_their_own(space_settings, valid_predictions):
    store = LocalStore(space_settings.results_dir)
    han = submit(store, space_settings, valid_predictions, name="\u6570\u636e\u7cfb\u7edf")
    greek = submit(store, space_settings, valid_predictions, name="\u03a9\u03bc\u03ad\u03b3\u03b1")
    assert han["request"] == "requests/\u6570\u636e\u7cfb\u7edf__closed/v0001.jsonl"
    assert greek["request"] == "requests/\u03c9\u03bc\u03b5\u03b3\u03b1__closed/v0001.jsonl"
    assert sorted(r["system"] for r in store.rows()) == [
        "\u03a9\u03bc\u03ad\u03b3\u03b1",
        "\u6570\u636e\u7cfb\u7edf",
    ]
    assert slug("My System v2") == "my-system-v2" and slug("Caf\u00e9") == "cafe"  # ASCII slugs as before
    assert lookalike_key("Alice") == lookalike_key("\u0410lice") != lookalike_key("Alicia")


def test_a_row_stored_under_an_older_slug_cannot_be_taken_over(space_settings, valid_predictions):
    """Before, `Café` was stored as `caf`: a new submission of `Café` by someone else must not start a second
    row under the new slug `cafe`."""
    store = LocalStore(space_settings.results_dir)
    row = submit(store, space_settings, valid_predictions, name="Caf\u00e9")
    legacy = store.root / "results" / "caf__closed.json"
    (store.root / "results" / "cafe__closed.json").rename(legacy)
    legacy.write_text(legacy.read_text().replace("requests/cafe__closed/", "requests/caf__closed/"))
    assert row["request"].startswith("requests/cafe__closed/")
    with pytest.raises(SubmissionError, match="looks like the existing row 'Café'"):
        _submit(store, space_settings, valid_predictions, name="Caf\u00e9", owner=BOB)


def test_closed_pool_predictions_cannot_be_an_open_pool_row(space_settings, space_world, valid_predictions):
    store = LocalStore(space_settings.results_dir)
    with pytest.raises(SubmissionError, match="closed-pool predictions; submit them to the closed pool"):
        submit(store, space_settings, valid_predictions, name="Sneaky", pool="open")
    assert store.rows() == []
    assert submit(store, space_settings, space_world["open_runs"] / "tfidf.jsonl", name="Open", pool="open")
