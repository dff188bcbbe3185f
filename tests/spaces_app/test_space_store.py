"""The results stores (local folder, Hub dataset repo without network) and the settings from the environment."""

from __future__ import annotations

import json
import multiprocessing
import threading
import time
from pathlib import Path

import pytest

from spaces_app.owners import Owner, OwnerError, owner_from_profile, owner_from_token, owner_record, owns
from spaces_app.settings import Settings
from spaces_app.store import (
    HubStore,
    LocalStore,
    check_description,
    check_name,
    history_path,
    open_store,
    request_path,
    result_path,
    slugify,
)
from tests.support.hub import FakeHub

ALICE = Owner("token", token="alice-token-0123456789")
BOB = Owner("token", token="bob-token-0123456789ab")


def _row(system: str, value: float, pool: str = "closed") -> dict:
    return {
        "system": system,
        "pool": pool,
        "source": "submission",
        "family": "submitted",
        "metrics": {"recall@1": value},
    }


def _predictions(tmp_path: Path, text: str = '{"x": 1}\n') -> Path:
    path = tmp_path / "p.jsonl"
    path.write_text(text, encoding="utf-8")
    return path


# -- names and layout -------------------------------------------------------------------------------------
def test_slugs_and_names():
    assert slugify("My <b>System</b> v2") == "my-b-system-b-v2"
    assert slugify("TF-IDF (paper)") == "tf-idf-paper"
    with pytest.raises(ValueError, match="no letters or digits"):
        slugify("!!!")
    assert check_name("  spaced  ") == "spaced"
    for bad, message in [
        ("", "required"),
        (None, "required"),
        ("x" * 65, "at most 64"),
        ("a\x00b", "U\\+0000"),
        ("a\nb", "U\\+000A"),
        ("***", "no letters"),
    ]:
        with pytest.raises(ValueError, match=message):
            check_name(bad)
    row = _row("My System", 0.5, "open")
    assert result_path(row) == "results/my-system__open.json"
    assert request_path(row, 3) == "requests/my-system__open/v0003.jsonl"
    assert request_path(row, 1, ".jsonl.gz") == "requests/my-system__open/v0001.jsonl.gz"
    assert history_path(row, 12) == "history/my-system__open/v0012.json"


@pytest.mark.parametrize(
    "char",
    [
        "\u202e",
        "\u202d",
        "\u2066",
        "\u2069",
        "\u200e",
        "\u200b",
        "\x85",
        "\x9b",
        "\x80",
        "\u2028",
        "\ufeff",
        "\ue000",
    ],
)
def test_bidi_overrides_c1_controls_and_invisible_characters_are_refused(char):
    """The probe's 'evil\u202eLIAME' passed before: only C0 controls and DEL were refused."""
    with pytest.raises(ValueError, match=f"U\\+{ord(char):04X}"):
        check_name(f"evil{char}name")
    with pytest.raises(ValueError, match="control or formatting"):
        check_description(f"text {char} here")
    assert check_description("two\nlines\tand a tab") == "two\nlines\tand a tab"
    assert check_name("Café 🧭 v2 – ünï") == "Café 🧭 v2 – ünï"  # letters, emoji and dashes are fine


# -- local folder -----------------------------------------------------------------------------------------
def test_local_store_put_replace_keep_versions_and_layout(tmp_path):
    store = LocalStore(tmp_path / "store")
    assert store.rows() == []
    first = store.put(_row("A", 0.1), _predictions(tmp_path, "first\n"), ALICE)
    second = store.put(_row("A", 0.2), _predictions(tmp_path, "second\n"), ALICE)  # same owner: replaced
    store.put(_row("A", 0.3, "open"), _predictions(tmp_path, "open\n"), ALICE, suffix=".jsonl.gz")
    rows = store.rows()
    assert [(r["pool"], r["metrics"]["recall@1"], r["version"]) for r in rows] == [
        ("closed", 0.2, 2),
        ("open", 0.3, 1),
    ]
    assert (first["version"], second["version"]) == (1, 2)
    assert store.request_file(second).read_text() == "second\n"
    assert [(v["version"], v["metrics"]["recall@1"]) for v in store.versions(second)] == [(1, 0.1), (2, 0.2)]
    assert store.request_file(store.versions(second)[0]).read_text() == "first\n"  # earlier versions kept
    assert sorted(
        str(p.relative_to(tmp_path / "store")) for p in (tmp_path / "store").rglob("*") if p.is_file()
    ) == [
        ".lock",
        "history/a__closed/v0001.json",
        "history/a__closed/v0002.json",
        "history/a__open/v0001.json",
        "requests/a__closed/v0001.jsonl",
        "requests/a__closed/v0002.jsonl",
        "requests/a__open/v0001.jsonl.gz",
        "results/a__closed.json",
        "results/a__open.json",
    ]
    record = rows[0]["owner"]
    assert record["kind"] == "token" and ALICE.token not in json.dumps(rows)  # only a salted hash is stored


def test_only_the_owner_replaces_a_row(tmp_path):
    """Rows were keyed by slug only: anyone could replace another's row with a name of the same slug."""
    store = LocalStore(tmp_path / "store")
    store.put(_row("My System", 0.5), _predictions(tmp_path, "mine\n"), ALICE)
    before = sorted(p.read_bytes() for p in (tmp_path / "store").rglob("*.json*"))
    with pytest.raises(OwnerError, match="belongs to another submitter"):
        store.put(_row("my-system!", 0.9), _predictions(tmp_path, "theirs\n"), BOB)  # same slug, other owner
    with pytest.raises(OwnerError, match="give the submitter token"):
        store.put(_row("MY SYSTEM", 0.9), _predictions(tmp_path, "theirs\n"), owner_from_token(None))
    assert sorted(p.read_bytes() for p in (tmp_path / "store").rglob("*.json*")) == before  # nothing changed
    assert store.put(_row("my system", 0.7), _predictions(tmp_path), ALICE)["version"] == 2
    legacy = tmp_path / "store/results/old__closed.json"  # stored before rows had owners
    legacy.write_text(json.dumps(_row("Old", 0.1)))
    with pytest.raises(OwnerError, match="before rows had owners"):
        store.put(_row("old", 0.2), _predictions(tmp_path), ALICE)
    (tmp_path / "store/results/broken__closed.json").write_text("{not json")
    with pytest.raises(OwnerError, match="unreadable"):
        store.put(_row("Broken", 0.2), _predictions(tmp_path), ALICE)


def test_owners():
    alice_hf = owner_from_profile(type("Profile", (), {"username": "alice"})())
    assert alice_hf == Owner("hf", user="alice") and owns(alice_hf, owner_record(alice_hf))
    assert not owns(Owner("hf", user="bob"), owner_record(alice_hf))
    assert not owns(ALICE, owner_record(alice_hf)) and not owns(alice_hf, owner_record(ALICE))
    record = owner_record(ALICE)
    assert owns(ALICE, record) and not owns(BOB, record)
    assert (
        owner_record(ALICE)["salt"] != record["salt"]
    )  # salted: the same token hashes differently each time
    assert (
        not owns(ALICE, {**record, "digest": "0" * 64})
        and not owns(ALICE, {"kind": "token"})
        and not owns(ALICE, None)
    )
    new = owner_from_token("")
    assert new.token_is_new and len(new.token) >= 16 and new.token not in repr(new)
    for bad in ("short", "has a space in the middle of it"):
        with pytest.raises(OwnerError, match="at least 16"):
            owner_from_token(bad)
    with pytest.raises(OwnerError, match="sign in"):
        owner_from_profile(None)


def test_local_store_skips_corrupt_and_malformed_results(tmp_path, caplog):
    store = LocalStore(tmp_path)
    store.put(_row("Good", 0.5), _predictions(tmp_path), ALICE)
    (tmp_path / "results" / "broken__closed.json").write_text("{not json", encoding="utf-8")
    (tmp_path / "results" / "odd__closed.json").write_text(
        json.dumps({"system": "Odd", "pool": "closed", "metrics": {"recall@1": "<b>"}})
    )
    assert [r["system"] for r in store.rows()] == ["Good"]
    assert "broken__closed.json" in caplog.text and "odd__closed.json" in caplog.text


def test_local_store_is_safe_under_concurrent_threads(tmp_path):
    store = LocalStore(tmp_path / "store")
    predictions = _predictions(tmp_path)

    def write(i):
        for j in range(6):
            store.put(_row(f"s{i}", j / 6), predictions, ALICE)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rows = store.rows()
    assert sorted(r["system"] for r in rows) == ["s0", "s1", "s2", "s3"]
    assert all(r["metrics"]["recall@1"] == pytest.approx(5 / 6) and r["version"] == 6 for r in rows)
    assert len(store.versions(rows[0])) == 6
    assert not [
        p for p in (tmp_path / "store").rglob("*") if p.name.endswith(".tmp") or p.name.startswith(".tmp")
    ]


def _put_many(root: str, name: str, predictions: str) -> None:
    store = LocalStore(root)
    for j in range(5):
        store.put(_row(name, j / 5), predictions, ALICE)
        store.put(_row("shared", j / 5), predictions, ALICE)  # the same row from every process


def test_local_store_is_safe_across_processes(tmp_path):
    root = tmp_path / "store"
    LocalStore(root)
    predictions = str(_predictions(tmp_path))
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_put_many, args=(str(root), f"p{i}", predictions)) for i in range(3)]
    for p in procs:
        p.start()
    seen: list[int] = []
    while any(p.is_alive() for p in procs):  # a reader during the writes sees whole files only
        seen.append(len(LocalStore(root).rows()))
        time.sleep(0.005)
    for p in procs:
        p.join()
        assert p.exitcode == 0
    rows = LocalStore(root).rows()
    assert sorted(r["system"] for r in rows) == ["p0", "p1", "p2", "shared"]
    assert all(r["metrics"]["recall@1"] == pytest.approx(4 / 5) for r in rows)
    shared = next(r for r in rows if r["system"] == "shared")
    assert shared["version"] == 15 and [v["version"] for v in LocalStore(root).versions(shared)] == list(
        range(1, 16)
    )


# -- Hub dataset repo (no network) ------------------------------------------------------------------------
def test_hub_store_writes_one_commit_per_submission_and_reads_results(tmp_path):
    hub = FakeHub(tmp_path / "repo")
    store = HubStore("me/trace-results", api=hub, ttl=0)
    assert store.rows() == []  # the repository does not exist yet: no submissions
    store.put(_row("My <System>", 0.25), _predictions(tmp_path, "line\n"), ALICE)
    stored = store.put(
        _row("My <System>", 0.5), _predictions(tmp_path, "line 2\n"), ALICE, suffix=".jsonl.gz"
    )
    assert [c["paths"] for c in hub.commits] == [
        [
            f"requests/my-system__closed/v000{v}{suffix}",
            f"history/my-system__closed/v000{v}.json",
            "results/my-system__closed.json",
        ]
        for v, suffix in ((1, ".jsonl"), (2, ".jsonl.gz"))
    ]
    assert [c["parent"] for c in hub.commits] == [f"{0:040x}", f"{1:040x}"]  # each on top of what it read
    assert hub.commits[1]["message"] == "Submission My <System> (closed pool), version 2"
    assert store.request_file(stored).read_text() == "line 2\n"
    assert [r["metrics"]["recall@1"] for r in store.rows()] == [0.5]
    assert [v["version"] for v in store.versions(stored)] == [1, 2]
    assert store.request_file(store.versions(stored)[0]).read_text() == "line\n"
    assert hub.downloads[0] == {
        "repo_id": "me/trace-results",
        "repo_type": "dataset",
        "allow_patterns": ["results/*.json"],
    }
    hub.offline = True  # the Hub unreachable: the last rows read stay on the leaderboard
    assert [r["system"] for r in store.rows()] == ["My <System>"]


def test_hub_store_checks_the_owner_and_refuses_a_concurrent_write(tmp_path):
    hub = FakeHub(tmp_path / "repo")
    store = HubStore("me/trace-results", api=hub, ttl=0)
    alice = Owner("hf", user="alice")
    store.put(_row("Shared name", 0.25), _predictions(tmp_path), alice)
    with pytest.raises(OwnerError, match="@alice"):
        store.put(_row("shared-NAME", 0.9), _predictions(tmp_path), Owner("hf", user="mallory"))
    with pytest.raises(OwnerError, match="@alice"):
        store.put(_row("Shared name", 0.9), _predictions(tmp_path), BOB)
    assert len(hub.commits) == 1

    def other_writer():
        hub.before_commit = None
        hub.head += 1  # someone committed after this store read the head

    hub.before_commit = other_writer
    with pytest.raises(OwnerError, match="changed while"):
        store.put(_row("Shared name", 0.5), _predictions(tmp_path), alice)
    assert len(hub.commits) == 1 and [r["metrics"]["recall@1"] for r in store.rows()] == [0.25]
    assert store.put(_row("Shared name", 0.5), _predictions(tmp_path), alice)["version"] == 2


def test_hub_store_reads_at_most_once_per_ttl_but_sees_its_own_writes(tmp_path):
    hub = FakeHub(tmp_path / "repo")
    store = HubStore("me/trace-results", api=hub, ttl=3600)
    assert store.rows() == [] and store.rows() == []
    assert len(hub.downloads) == 1
    store.put(_row("A", 0.5), _predictions(tmp_path), ALICE)
    assert [r["system"] for r in store.rows()] == ["A"] and len(hub.downloads) == 2
    store.rows()[0]["system"] = "changed by a caller"
    assert [r["system"] for r in store.rows()] == ["A"] and len(hub.downloads) == 2


def test_hub_store_through_the_real_hfapi_class(tmp_path, monkeypatch):
    """open_store(repo) builds a real HfApi with the token; only its network methods are replaced."""
    from huggingface_hub import HfApi

    hub = FakeHub(tmp_path / "repo")
    tokens: list = []

    def method(name):
        def call(self, *args, **kwargs):
            tokens.append(self.token)
            return getattr(hub, name)(*args, **kwargs)

        return call

    for name in ("create_repo", "repo_info", "create_commit", "hf_hub_download", "snapshot_download"):
        monkeypatch.setattr(HfApi, name, method(name))
    store = open_store(tmp_path / "unused", "me/trace-results", token="hf_test_token")
    assert isinstance(store, HubStore) and isinstance(store.api, HfApi)
    store.put(_row("Bot", 0.75, "open"), _predictions(tmp_path), ALICE)
    assert [r["system"] for r in store.rows()] == ["Bot"]
    assert set(tokens) == {"hf_test_token"}
    assert not (tmp_path / "unused").exists()  # the local folder is not touched


def test_open_store_defaults_to_the_local_folder(tmp_path):
    store = open_store(tmp_path / "results")
    assert isinstance(store, LocalStore) and (tmp_path / "results" / "results").is_dir()


# -- settings ---------------------------------------------------------------------------------------------
def test_settings_from_env(tmp_path):
    env = {
        "TRACE_SPACE_DATA": "/d",
        "TRACE_SPACE_RESULTS": "/r",
        "TRACE_SPACE_RESULTS_REPO": "me/results",
        "TRACE_SPACE_RUNS": "/runs",
        "TRACE_SPACE_BASELINES": "/b.json",
        "TRACE_SPACE_SPLIT": "validation",
        "TRACE_SPACE_MAX_UPLOAD_MB": "7",
        "HF_TOKEN": "hf_x",
    }
    s = Settings.from_env(env, demo_dir=tmp_path / "none")
    assert (
        s.data_dir,
        s.results_dir,
        s.results_repo,
        s.runs_dir,
        s.baselines_file,
        s.split,
        s.max_upload_mb,
        s.hub_token,
    ) == (Path("/d"), Path("/r"), "me/results", Path("/runs"), Path("/b.json"), "validation", 7, "hf_x")
    assert "hf_x" not in repr(s)  # the token never shows in logs
    assert Settings.from_env(
        env, demo_dir=tmp_path / "none", split="test", data_dir=Path("/o")
    ).data_dir == Path("/o")
    bare = Settings.from_env({}, demo_dir=tmp_path / "none")
    assert bare == Settings()
    assert (bare.data_dir, bare.results_dir, bare.split, bare.max_upload_mb) == (
        None,
        Path("runs/space"),
        "test",
        50,
    )
    assert bare.auth == "token"  # locally: submitter tokens
    hub = Settings.from_env({"SYSTEM": "spaces", "SPACE_ID": "me/trace"}, demo_dir=tmp_path / "none")
    assert hub.auth == "oauth"  # a Hub-hosted Space: the Hugging Face login
    assert (
        Settings.from_env(
            {"SYSTEM": "spaces", "SPACE_ID": "me/trace", "TRACE_SPACE_AUTH": "token"},
            demo_dir=tmp_path / "none",
        ).auth
        == "token"
    )


def test_settings_find_the_demo_output(tmp_path):
    demo = tmp_path / "demo"
    (demo / "hydrated").mkdir(parents=True)
    s = Settings.from_env({}, demo_dir=demo)
    assert (s.data_dir, s.runs_dir, s.results_dir) == (
        demo / "hydrated",
        demo / "runs/closed",
        demo / "space",
    )
    assert s.baselines_file == demo / "leaderboard/leaderboard.json"
    mine = Settings.from_env({"TRACE_SPACE_DATA": "/mine"}, demo_dir=demo)
    assert (mine.data_dir, mine.runs_dir) == (Path("/mine"), None)  # an explicit data dir: no demo fallback


def test_given_run_folders_are_read_alone(tmp_path):
    """The folders where the docs' commands write (runs/interactive, runs/core of the current folder) are read
    only when no folder is given: a test, or a Space given its folders, never reads a checkout's own runs."""
    demo = tmp_path / "demo"
    (demo / "hydrated").mkdir(parents=True)
    found = Settings.from_env({}, demo_dir=demo)
    assert found.interactive_dirs == (demo / "interactive", Path("runs/interactive"))
    assert found.core_dirs == (demo / "core", Path("runs/core"))
    mine = Settings.from_env({}, demo_dir=demo, interactive_dirs=(tmp_path / "mine",))
    assert mine.interactive_dirs == (tmp_path / "mine",) and mine.core_dirs == found.core_dirs
    env = Settings.from_env({"TRACE_SPACE_CORE": "/c", "TRACE_SPACE_INTERACTIVE": "/i"}, demo_dir=demo)
    assert (env.interactive_dirs, env.core_dirs) == ((Path("/i"),), (Path("/c"),))


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"TRACE_SPACE_SPLIT": "dev"}, "unknown split"),
        ({"TRACE_SPACE_MAX_UPLOAD_MB": "big"}, "must be an integer"),
        ({"TRACE_SPACE_MAX_UPLOAD_MB": "0"}, "positive integer"),
        ({"TRACE_SPACE_AUTH": "password"}, "unknown submitter authentication"),
    ],
)
def test_bad_settings(env, message, tmp_path):
    with pytest.raises(ValueError, match=message):
        Settings.from_env(env, demo_dir=tmp_path)
