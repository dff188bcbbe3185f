"""Submissions: validated like `trace-bench evaluate`, scored, stored; refused without changing anything."""

from __future__ import annotations

import gzip
import html
import json
import tracemalloc
from dataclasses import replace
from functools import partial

import pytest

from spaces_app.leaderboard import collect_rows, leaderboard_frame, reserved_names
from spaces_app.owners import Owner
from spaces_app.store import LocalStore
from spaces_app.submissions import SubmissionError
from spaces_app.submissions import submit as _submit
from trace_bench.cli import main
from trace_dataset.datadir import iter_dialogues
from trace_metrics.lib.suite import evaluate_run

ALICE = Owner("token", token="alice-token-0123456789")
submit = partial(_submit, owner=ALICE)


def _snapshot(store: LocalStore) -> dict[str, bytes]:
    return {
        str(p.relative_to(store.root)): p.read_bytes()
        for p in sorted(store.root.rglob("*"))
        if p.is_file() and p.name != ".lock"
    }


def test_valid_submission_is_scored_like_evaluate_and_appears(space_settings, valid_predictions):
    store = LocalStore(space_settings.results_dir)
    row = submit(
        store, space_settings, valid_predictions, name="My <b>System</b>", description="tf-idf again"
    )
    assert (row["family"], row["source"], row["split"], row["pool"]) == (
        "submitted",
        "submission",
        "test",
        "closed",
    )
    expected = evaluate_run(space_settings.data_dir, valid_predictions, split="test", pool="closed")["values"]
    assert row["metrics"] == {k: v for k, v in expected.items() if v is not None}
    assert row["corpus_version"] and row["kb_version"]
    assert [r["system"] for r in store.rows()] == ["My <b>System</b>"]
    assert row["request"] == "requests/my-b-system-b__closed/v0001.jsonl" and row["version"] == 1
    assert store.request_file(row).read_bytes() == valid_predictions.read_bytes()
    frame = leaderboard_frame(
        collect_rows(space_settings, store), "Table 5: headline", "closed", ["submitted"]
    )
    assert list(frame["System"]) == [
        "My <b>System</b>"
    ]  # the raw text: the table shows it as text, never HTML
    assert list(frame["Source"]) == ["submission"] and list(frame["Description"]) == ["tf-idf again"]


def test_resubmission_replaces_the_row_only_after_scoring(
    space_settings, valid_predictions, other_predictions, invalid_predictions
):
    store = LocalStore(space_settings.results_dir)
    first = submit(store, space_settings, valid_predictions, name="Keeper", description="v1")
    before = _snapshot(store)
    with pytest.raises(SubmissionError, match="missing"):
        submit(store, space_settings, invalid_predictions, name="Keeper", description="v2")
    assert _snapshot(store) == before  # a failed resubmission changes nothing
    bob = Owner("token", token="bob-token-0123456789ab")
    with pytest.raises(SubmissionError, match="belongs to another submitter"):
        submit(store, space_settings, other_predictions, name="KEEPER!", description="hijack", owner=bob)
    assert _snapshot(store) == before  # another submitter's same-slug name changes nothing
    second = submit(store, space_settings, other_predictions, name="keeper", description="v2")  # same slug
    rows = store.rows()
    assert len(rows) == 1 and rows[0]["description"] == "v2" and rows[0]["system"] == "keeper"
    assert rows[0]["metrics"] == second["metrics"] != first["metrics"]
    assert [v["description"] for v in store.versions(second)] == ["v1", "v2"]  # the first version is kept
    assert store.request_file(store.versions(second)[0]).read_bytes() == valid_predictions.read_bytes()


def test_invalid_file_shows_the_validators_message_without_server_paths(space_settings, invalid_predictions):
    store = LocalStore(space_settings.results_dir)
    with pytest.raises(SubmissionError) as e:
        submit(store, space_settings, invalid_predictions, name="Broken")
    message = str(e.value)
    assert message.startswith("invalid.jsonl: predictions do not match the") and "3 missing" in message
    assert str(invalid_predictions.parent) not in message
    assert store.rows() == [] and _snapshot(store) == {}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"dialogue_id": "x"\n', "bad.jsonl:1: not valid JSON"),
        ("[1, 2]\n", "expected a JSON object"),
        (
            '{"dialogue_id": "crs_yelp_99999", "turn_id": 1, "ranked_poi_ids": [], "response": "", "citations": {}}\n',
            "unknown",
        ),
    ],
)
def test_malformed_files(space_settings, tmp_path, content, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(SubmissionError, match=message):
        submit(LocalStore(space_settings.results_dir), space_settings, path, name="Bad")


def test_out_of_pool_pois_are_refused(space_settings, valid_predictions, space_world):
    """The same pool check as `trace-bench evaluate`: a closed-pool file ranks only the 8 candidates."""
    lines = [json.loads(x) for x in valid_predictions.read_text(encoding="utf-8").splitlines()]
    dialogue = next(iter_dialogues(space_world["data"], "test"))
    outside = next(p for p in dialogue["open_set_poi_ids"] if p not in dialogue["candidate_poi_ids"])
    row = next(r for r in lines if r["dialogue_id"] == dialogue["dialogue_id"])
    row["ranked_poi_ids"] = [outside, *row["ranked_poi_ids"]]
    valid_predictions.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    with pytest.raises(SubmissionError, match="pool"):
        submit(LocalStore(space_settings.results_dir), space_settings, valid_predictions, name="Leaky")
    open_row = submit(
        LocalStore(space_settings.results_dir),
        space_settings,
        space_world["open_runs"] / "tfidf.jsonl",
        name="Open one",
        pool="open",
    )
    assert open_row["pool"] == "open"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("", "required"),
        ("x" * 65, "at most 64"),
        ("!!!", "no letters"),
        ("TF-IDF", "belongs to a baseline"),
        ("tf-idf (PAPER)", "belongs to a baseline"),
    ],
)
def test_bad_and_reserved_names(space_settings, valid_predictions, name, message):
    store = LocalStore(space_settings.results_dir)
    reserved = reserved_names(collect_rows(space_settings, store))
    with pytest.raises(SubmissionError, match=message):
        submit(store, space_settings, valid_predictions, name=name, reserved=reserved)


def test_other_refusals(space_settings, valid_predictions, tmp_path):
    store = LocalStore(space_settings.results_dir)
    with pytest.raises(SubmissionError, match="at most 500"):
        submit(store, space_settings, valid_predictions, name="A", description="d" * 501)
    with pytest.raises(SubmissionError, match="unknown pool 'pool_16'"):
        submit(store, space_settings, valid_predictions, name="A", pool="pool_16")
    with pytest.raises(SubmissionError, match="absent.jsonl: no such file"):
        submit(store, space_settings, tmp_path / "absent.jsonl", name="A")
    with pytest.raises(SubmissionError, match="no predictions file uploaded"):
        submit(store, space_settings, None, name="A")
    (tmp_path / "empty.jsonl").write_bytes(b"")
    with pytest.raises(SubmissionError, match="empty"):
        submit(store, space_settings, tmp_path / "empty.jsonl", name="A")
    with pytest.raises(SubmissionError, match="no data directory"):
        submit(store, replace(space_settings, data_dir=None), valid_predictions, name="A")
    assert store.rows() == []


def test_upload_size_limit(space_settings, tmp_path):
    big = tmp_path / "big.jsonl"
    big.write_bytes(b" " * (5 * 2**20 + 1))
    with pytest.raises(SubmissionError, match="the limit is 5 MB"):
        submit(LocalStore(space_settings.results_dir), space_settings, big, name="Big")


def test_submit_command(space_settings, space_world, valid_predictions, invalid_predictions, capsys):
    results = space_settings.results_dir
    base = [
        "submit",
        "--data",
        str(space_world["data"]),
        "--results",
        str(results),
        "--baselines",
        str(space_world["baselines"]),
    ]
    assert main([*base, str(valid_predictions), "--name", "CLI bot", "--description", "from the shell"]) == 0
    out = capsys.readouterr().out
    assert "stored 'CLI bot' (closed pool, test split, version 1)" in out and "recall@1=" in out
    token = next(line for line in out.splitlines() if line.startswith("submitter token: ")).split(": ", 1)[1]
    assert main([*base, str(invalid_predictions), "--name", "CLI bot", "--token", token]) == 2
    assert "submission refused: invalid.jsonl: predictions do not match" in capsys.readouterr().err
    assert main([*base, str(valid_predictions), "--name", "Popularity"]) == 2  # a baseline's name
    assert "belongs to a baseline" in capsys.readouterr().err
    assert main([*base, str(valid_predictions), "--name", "cli-BOT"]) == 2  # no token: not the owner
    assert "give the submitter token" in capsys.readouterr().err
    assert (
        main([*base, str(valid_predictions), "--name", "CLI bot", "--token", token, "--description", "v2"])
        == 0
    )
    assert "version 2" in capsys.readouterr().out
    rows = LocalStore(results).rows()
    assert [(r["system"], r["description"]) for r in rows] == [("CLI bot", "v2")]


# -- uploads: format from the bytes, bounded memory -------------------------------------------------------
def test_gzip_upload_is_stored_as_gzip_and_rescores(space_settings, valid_predictions, tmp_path):
    """A valid .gz was saved under a .jsonl name holding gzip bytes, and rescoring it gave a traceback."""
    store = LocalStore(space_settings.results_dir)
    packed = tmp_path / "preds.jsonl.gz"
    packed.write_bytes(gzip.compress(valid_predictions.read_bytes(), mtime=0))
    row = submit(store, space_settings, packed, name="Zipped")
    assert row["request"].endswith("/v0001.jsonl.gz")
    assert store.request_file(row).read_bytes() == packed.read_bytes()
    again = evaluate_run(space_settings.data_dir, store.request_file(row), split="test", pool=row["pool"])
    assert {k: v for k, v in again["values"].items() if v is not None} == row["metrics"]
    misnamed = tmp_path / "gzip-inside.jsonl"  # gzip bytes under a plain name: stored as what they are
    misnamed.write_bytes(packed.read_bytes())
    assert submit(store, space_settings, misnamed, name="Misnamed")["request"].endswith(".jsonl.gz")
    plain = tmp_path / "plain-inside.gz"  # plain text under a .gz name
    plain.write_bytes(valid_predictions.read_bytes())
    stored = submit(store, space_settings, plain, name="Plain")
    assert stored["request"].endswith("/v0001.jsonl") and stored["metrics"] == row["metrics"]


def _gzip_bomb(path, line_bytes: int, newline_every: int | None = None) -> None:
    chunk = (
        b"a" * 2**20
        if newline_every is None
        else (b"a" * (newline_every - 1) + b"\n") * (2**20 // newline_every)
    )
    with gzip.GzipFile(path, "wb", compresslevel=9, mtime=0) as f:
        for _ in range(line_bytes // len(chunk)):
            f.write(chunk)


def test_gzip_bomb_is_refused_in_bounded_memory(space_settings, tmp_path):
    """A 194 KB .gz expanding to one 200 MB line grew the server from 265 to 879 MB."""
    bomb = tmp_path / "bomb.jsonl.gz"
    _gzip_bomb(bomb, 200 * 2**20)
    assert bomb.stat().st_size < 400_000
    store = LocalStore(space_settings.results_dir)
    tracemalloc.start()
    try:
        with pytest.raises(SubmissionError, match="bomb.jsonl.gz:1: a line longer than 1,024 KB"):
            submit(store, space_settings, bomb, name="Bomb")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * 2**20, f"peak {peak / 2**20:.1f} MB while refusing a gzip bomb"
    many = tmp_path / "many.jsonl.gz"  # short lines, but more than the limit (5 MB here) once decompressed
    _gzip_bomb(many, 8 * 2**20, newline_every=512)
    with pytest.raises(
        SubmissionError, match="more than 5 MB of predictions once decompressed; the limit is 5 MB"
    ):
        submit(store, space_settings, many, name="Many")
    assert store.rows() == [] and not list(space_settings.results_dir.rglob("*.jsonl*"))


BAD_FILES = {
    "deep.jsonl": (b"[" * 200_000 + b"]" * 200_000 + b"\n", "deep.jsonl:1:"),
    "binary.jsonl": (b'{"dialogue_id": "\xff\xfe\x00\x81"}\n', "binary.jsonl:1: not UTF-8 text"),
    "huge.jsonl": (b'{"turn_id": ' + b"9" * 5000 + b"}\n", "huge.jsonl:1:"),
    "truncated.jsonl.gz": (
        gzip.compress(b'{"a": 1}\n' * 1000)[:60],
        "truncated.jsonl.gz: not a readable gzip file",
    ),
    "nul.jsonl": (b"\x00" * 100, "nul.jsonl:1:"),
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_hostile_files_get_one_line_refusals(space_settings, tmp_path, name, capsys):
    content, message = BAD_FILES[name]
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(SubmissionError) as e:
        submit(LocalStore(space_settings.results_dir), space_settings, path, name="Hostile")
    assert str(e.value).startswith(message) and "\n" not in str(e.value) and str(tmp_path) not in str(e.value)
    code = main(
        [
            "submit",
            str(path),
            "--name",
            "Hostile",
            "--data",
            str(space_settings.data_dir),
            "--results",
            str(space_settings.results_dir),
        ]
    )
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert captured.err.count("\n") == 1
    assert captured.err.startswith(f"trace-bench: error: submission refused: {message}")
    assert "Traceback" not in captured.err


# -- the Submit tab's handler: OAuth profile on a Hub Space, submitter tokens elsewhere ---------------------
class Profile:
    """What Gradio injects for a logged-in visitor (gr.OAuthProfile has these fields)."""

    def __init__(self, username: str):
        self.username, self.name = username, username.title()


def _ctx(settings):
    from spaces_app.app import AppContext

    return AppContext(settings, LocalStore(settings.results_dir))


def test_submit_tab_with_hugging_face_login(space_settings, valid_predictions, other_predictions):
    from spaces_app.submit_tab import submit_action as action

    def submit_action(*args, **kwargs):
        return html.unescape(action(*args, **kwargs))

    ctx = _ctx(replace(space_settings, auth="oauth"))
    refused = submit_action(ctx, str(valid_predictions), "Mine", "", "closed", profile=None)
    assert "Error" in refused and "sign in with Hugging Face" in refused and ctx.store.rows() == []
    ok = submit_action(ctx, str(valid_predictions), "Mine", "first", "closed", profile=Profile("alice"))
    assert "Scored and added" in ok and "version 1" in ok and "token" not in ok
    assert ctx.store.rows()[0]["owner"] == {"kind": "hf", "user": "alice"}
    taken = submit_action(ctx, str(other_predictions), "MINE", "hijack", "closed", profile=Profile("mallory"))
    assert "belongs to another submitter (@alice)" in taken
    again = submit_action(ctx, str(other_predictions), "mine", "second", "closed", profile=Profile("alice"))
    assert "version 2" in again
    assert [v["description"] for v in ctx.store.versions(ctx.store.rows()[0])] == ["first", "second"]


def test_submit_tab_with_submitter_tokens(space_settings, valid_predictions, other_predictions):

    from spaces_app.submit_tab import submit_action, submit_step

    ctx = _ctx(space_settings)
    # a first click without a token stores nothing: it issues one for the field, shown in the status
    status, token = submit_step(ctx, str(valid_predictions), "Tokened", "", "closed")
    assert "Nothing stored yet" in status and f"Your submitter token: {token} " in html.unescape(status)
    assert ctx.store.rows() == [] and token is not None
    first = submit_action(ctx, str(valid_predictions), "Tokened", "", "closed", token=token)  # the field's
    assert "Scored and added" in first and "Your submitter token" not in first
    assert ctx.store.rows()[0]["owner"]["kind"] == "token" and token not in json.dumps(ctx.store.rows())
    taken = html.unescape(submit_action(ctx, str(other_predictions), "TOKENED", "", "closed"))
    assert "is taken; to replace your own row, give the submitter token" in taken
    assert len(ctx.store.rows()) == 1
    wrong = submit_action(ctx, str(other_predictions), "Tokened", "", "closed", token="x" * 20)
    assert "the token does not match" in wrong
    assert "version 2" in submit_action(ctx, str(other_predictions), "tokened", "", "closed", token=token)
    assert "no predictions file uploaded" in submit_action(ctx, None, "Tokened", "", "closed", token=token)


def test_new_submitter_tokens_are_usable_on_the_command_line():
    """`trace-bench submit ... --token TOKEN` as printed: a token starting with "-" would read as an option."""
    from spaces_app.owners import MIN_TOKEN_CHARS, owner_from_token

    tokens = [
        owner_from_token(None).token for _ in range(2000)
    ]  # a url-safe alphabet starts 1 in 64 with "-"
    assert all(t[0].isalnum() and len(t) >= MIN_TOKEN_CHARS for t in tokens) and len(set(tokens)) == 2000
