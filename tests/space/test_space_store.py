"""The results stores (local folder, Hub dataset repo without network) and the settings from the environment."""

from __future__ import annotations

import json
import multiprocessing
import threading
from pathlib import Path

import pytest

from spaces_app.settings import Settings
from spaces_app.store import HubStore, LocalStore, check_name, open_store, request_path, result_path, slugify


def _row(system: str, value: float, pool: str = "closed") -> dict:
    return {"system": system, "pool": pool, "source": "submission", "family": "submitted",
            "metrics": {"recall@1": value}}


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
    for bad, message in [("", "required"), (None, "required"), ("x" * 65, "at most 64"), ("a\x00b", "control"),
                         ("a\nb", "control"), ("***", "no letters")]:
        with pytest.raises(ValueError, match=message):
            check_name(bad)
    row = _row("My System", 0.5, "open")
    assert (result_path(row), request_path(row)) == ("results/my-system__open.json", "requests/my-system__open.jsonl")


# -- local folder -----------------------------------------------------------------------------------------
def test_local_store_put_replace_and_layout(tmp_path):
    store = LocalStore(tmp_path / "store")
    assert store.rows() == []
    store.put(_row("A", 0.1), _predictions(tmp_path, "first\n"))
    store.put(_row("A", 0.2), _predictions(tmp_path, "second\n"))  # same name and pool: replaced
    store.put(_row("A", 0.3, "open"), _predictions(tmp_path, "open\n"))  # other pool: its own row
    rows = store.rows()
    assert [(r["pool"], r["metrics"]["recall@1"]) for r in rows] == [("closed", 0.2), ("open", 0.3)]
    assert (tmp_path / "store/requests/a__closed.jsonl").read_text() == "second\n"
    assert sorted(p.name for p in (tmp_path / "store").rglob("*") if p.is_file()) == [
        ".lock", "a__closed.json", "a__closed.jsonl", "a__open.json", "a__open.jsonl"]


def test_local_store_skips_corrupt_and_malformed_results(tmp_path, caplog):
    store = LocalStore(tmp_path)
    store.put(_row("Good", 0.5), _predictions(tmp_path))
    (tmp_path / "results" / "broken__closed.json").write_text("{not json", encoding="utf-8")
    (tmp_path / "results" / "odd__closed.json").write_text(json.dumps({"system": "Odd", "pool": "closed",
                                                                      "metrics": {"recall@1": "<b>"}}))
    assert [r["system"] for r in store.rows()] == ["Good"]
    assert "broken__closed.json" in caplog.text and "odd__closed.json" in caplog.text


def test_local_store_is_safe_under_concurrent_threads(tmp_path):
    store = LocalStore(tmp_path / "store")
    predictions = _predictions(tmp_path)

    def write(i):
        for j in range(20):
            store.put(_row(f"s{i}", j / 20), predictions)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rows = store.rows()
    assert sorted(r["system"] for r in rows) == ["s0", "s1", "s2", "s3"]
    assert all(r["metrics"]["recall@1"] == pytest.approx(19 / 20) for r in rows)
    assert not [p for p in (tmp_path / "store").rglob("*") if p.name.endswith(".tmp") or p.name.startswith(".tmp")]


def _put_many(root: str, name: str, predictions: str) -> None:
    store = LocalStore(root)
    for j in range(15):
        store.put(_row(name, j / 15), predictions)
        store.put(_row("shared", j / 15), predictions)  # the same row from every process


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
    for p in procs:
        p.join()
        assert p.exitcode == 0
    rows = LocalStore(root).rows()
    assert sorted(r["system"] for r in rows) == ["p0", "p1", "p2", "shared"]
    assert all(r["metrics"]["recall@1"] == pytest.approx(14 / 15) for r in rows)


# -- Hub dataset repo (no network) ------------------------------------------------------------------------
def _hub_error(cls, message: str):
    try:
        return cls(message)
    except TypeError:  # huggingface_hub >= 1.0 wants the HTTP response
        import httpx2

        request = httpx2.Request("GET", "https://huggingface.co/api/datasets/me/results")
        return cls(message, response=httpx2.Response(404, request=request))


class FakeHub:
    """The three HfApi methods HubStore uses, over a local folder standing for the repository."""

    def __init__(self, root: Path):
        self.root = root
        self.exists = False
        self.offline = False
        self.commits: list[dict] = []
        self.downloads: list[dict] = []

    def create_repo(self, repo_id, repo_type=None, exist_ok=False, **kw):
        assert repo_type == "dataset" and exist_ok
        self.exists = True

    def create_commit(self, repo_id, operations, *, commit_message, repo_type=None, **kw):
        assert repo_type == "dataset"
        operations = list(operations)
        self.commits.append({"repo_id": repo_id, "paths": [op.path_in_repo for op in operations],
                             "message": commit_message})
        for op in operations:
            target = self.root / op.path_in_repo
            target.parent.mkdir(parents=True, exist_ok=True)
            src = op.path_or_fileobj
            target.write_bytes(src if isinstance(src, bytes) else Path(src).read_bytes())

    def snapshot_download(self, repo_id, *, repo_type=None, allow_patterns=None, **kw):
        from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError

        self.downloads.append({"repo_id": repo_id, "repo_type": repo_type, "allow_patterns": allow_patterns})
        if self.offline:
            raise _hub_error(HfHubHTTPError, "503 Service Unavailable")
        if not self.exists:
            raise _hub_error(RepositoryNotFoundError, "404")
        return str(self.root)


def test_hub_store_writes_one_commit_per_submission_and_reads_results(tmp_path):
    hub = FakeHub(tmp_path / "repo")
    store = HubStore("me/trace-results", api=hub, ttl=0)
    assert store.rows() == []  # the repository does not exist yet: no submissions
    store.put(_row("My <System>", 0.25), _predictions(tmp_path, "line\n"))
    store.put(_row("My <System>", 0.5), _predictions(tmp_path, "line 2\n"))
    assert [c["paths"] for c in hub.commits] == [["requests/my-system__closed.jsonl", "results/my-system__closed.json"]] * 2
    assert hub.commits[0]["message"] == "Submission My <System> (closed pool)"
    assert (tmp_path / "repo/requests/my-system__closed.jsonl").read_text() == "line 2\n"
    assert [r["metrics"]["recall@1"] for r in store.rows()] == [0.5]
    assert hub.downloads[-1] == {"repo_id": "me/trace-results", "repo_type": "dataset",
                                 "allow_patterns": ["results/*.json"]}
    hub.offline = True  # the Hub unreachable: the last rows read stay on the leaderboard
    assert [r["system"] for r in store.rows()] == ["My <System>"]


def test_hub_store_reads_at_most_once_per_ttl_but_sees_its_own_writes(tmp_path):
    hub = FakeHub(tmp_path / "repo")
    store = HubStore("me/trace-results", api=hub, ttl=3600)
    assert store.rows() == [] and store.rows() == []
    assert len(hub.downloads) == 1
    store.put(_row("A", 0.5), _predictions(tmp_path))
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

    for name in ("create_repo", "create_commit", "snapshot_download"):
        monkeypatch.setattr(HfApi, name, method(name))
    store = open_store(tmp_path / "unused", "me/trace-results", token="hf_test_token")
    assert isinstance(store, HubStore) and isinstance(store.api, HfApi)
    store.put(_row("Bot", 0.75, "open"), _predictions(tmp_path))
    assert [r["system"] for r in store.rows()] == ["Bot"]
    assert set(tokens) == {"hf_test_token"}
    assert not (tmp_path / "unused").exists()  # the local folder is not touched


def test_open_store_defaults_to_the_local_folder(tmp_path):
    store = open_store(tmp_path / "results")
    assert isinstance(store, LocalStore) and (tmp_path / "results" / "results").is_dir()


# -- settings ---------------------------------------------------------------------------------------------
def test_settings_from_env(tmp_path):
    env = {"TRACE_SPACE_DATA": "/d", "TRACE_SPACE_RESULTS": "/r", "TRACE_SPACE_RESULTS_REPO": "me/results",
           "TRACE_SPACE_RUNS": "/runs", "TRACE_SPACE_BASELINES": "/b.json", "TRACE_SPACE_SPLIT": "validation",
           "TRACE_SPACE_MAX_UPLOAD_MB": "7", "HF_TOKEN": "hf_x"}
    s = Settings.from_env(env, demo_dir=tmp_path / "none")
    assert (s.data_dir, s.results_dir, s.results_repo, s.runs_dir, s.baselines_file, s.split, s.max_upload_mb,
            s.hub_token) == (Path("/d"), Path("/r"), "me/results", Path("/runs"), Path("/b.json"), "validation", 7,
                             "hf_x")
    assert "hf_x" not in repr(s)  # the token never shows in logs
    assert Settings.from_env(env, demo_dir=tmp_path / "none", split="test", data_dir=Path("/o")).data_dir == Path("/o")
    bare = Settings.from_env({}, demo_dir=tmp_path / "none")
    assert bare == Settings()
    assert (bare.data_dir, bare.results_dir, bare.split, bare.max_upload_mb) == (None, Path("runs/space"), "test", 50)


def test_settings_find_the_demo_output(tmp_path):
    demo = tmp_path / "demo"
    (demo / "hydrated").mkdir(parents=True)
    s = Settings.from_env({}, demo_dir=demo)
    assert (s.data_dir, s.runs_dir, s.results_dir) == (demo / "hydrated", demo / "runs/closed", demo / "space")
    assert s.baselines_file == demo / "leaderboard/leaderboard.json"
    mine = Settings.from_env({"TRACE_SPACE_DATA": "/mine"}, demo_dir=demo)
    assert (mine.data_dir, mine.runs_dir) == (Path("/mine"), None)  # an explicit data dir: no demo fallback


@pytest.mark.parametrize(("env", "message"), [({"TRACE_SPACE_SPLIT": "dev"}, "unknown split"),
                                              ({"TRACE_SPACE_MAX_UPLOAD_MB": "big"}, "must be an integer"),
                                              ({"TRACE_SPACE_MAX_UPLOAD_MB": "0"}, "positive integer")])
def test_bad_settings(env, message, tmp_path):
    with pytest.raises(ValueError, match=message):
        Settings.from_env(env, demo_dir=tmp_path)

