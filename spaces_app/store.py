"""Where submitted leaderboard rows live: a local folder (default) or a Hub dataset repository.

Layout (both backends, the requests/results pattern of Hugging Face leaderboards):
    results/<slug>__<pool>.json    one scored leaderboard row
    requests/<slug>__<pool>.jsonl  the predictions file that row was scored from
`put(row, predictions)` writes both; it is called only after the submission validated and scored, and each
file is replaced whole (local: temp file + rename under a lock; Hub: one commit holding both files), so a
failed submission never changes what the leaderboard shows and a reader never sees half a file.
"""

from __future__ import annotations

import contextlib
import copy
import fcntl
import json
import logging
import re
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

from trace_dataset.io import atomic_open, read_json, write_json

log = logging.getLogger(__name__)

NAME_MAX_CHARS = 64
DESCRIPTION_MAX_CHARS = 500
RESULTS_DIR = "results"
REQUESTS_DIR = "requests"
_SLUG_RE = re.compile(r"[^a-z0-9]+")


def slugify(name: str) -> str:
    """File-name key of a system name: lower-case letters and digits joined by '-' (names that map to the
    same slug are the same system)."""
    slug = _SLUG_RE.sub("-", name.lower()).strip("-")
    if not slug:
        raise ValueError(f"system name {name!r} has no letters or digits")
    return slug[:NAME_MAX_CHARS]


def check_name(name: str | None) -> str:
    """The stripped system name, or ValueError saying what is wrong with it."""
    name = (name or "").strip()
    if not name:
        raise ValueError("a system name is required")
    if len(name) > NAME_MAX_CHARS:
        raise ValueError(f"system name is {len(name)} characters; at most {NAME_MAX_CHARS} are allowed")
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        raise ValueError("system name contains control characters")
    slugify(name)
    return name


def row_key(row: dict[str, Any]) -> str:
    return f"{slugify(row['system'])}__{row['pool']}"


def result_path(row: dict[str, Any]) -> str:
    return f"{RESULTS_DIR}/{row_key(row)}.json"


def request_path(row: dict[str, Any]) -> str:
    return f"{REQUESTS_DIR}/{row_key(row)}.jsonl"


def valid_row(row: Any) -> bool:
    """A stored row the leaderboard can show (a hand-edited or corrupt file must not take it down)."""
    return (isinstance(row, dict) and isinstance(row.get("system"), str) and isinstance(row.get("pool"), str)
            and isinstance(row.get("metrics"), dict)
            and all(isinstance(v, (int, float)) for v in row["metrics"].values()))


class ResultsStore(Protocol):
    def rows(self) -> list[dict[str, Any]]: ...
    def put(self, row: dict[str, Any], predictions_path: str | Path) -> None: ...


class LocalStore:
    """A folder on disk; atomic writes and an exclusive lock file make concurrent submissions safe, across
    threads (the app) and processes (`trace-bench submit` while the app runs)."""

    def __init__(self, root: str | Path):
        self.root = Path(root)
        (self.root / RESULTS_DIR).mkdir(parents=True, exist_ok=True)
        (self.root / REQUESTS_DIR).mkdir(parents=True, exist_ok=True)

    def __repr__(self) -> str:
        return f"LocalStore({str(self.root)!r})"

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        with open(self.root / ".lock", "a+") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    def rows(self) -> list[dict[str, Any]]:
        out = []
        for path in sorted((self.root / RESULTS_DIR).glob("*.json")):
            try:
                row = read_json(path)
            except ValueError as e:
                log.warning("skipping unreadable result %s: %s", path, e)
                continue
            if valid_row(row):
                out.append(row)
            else:
                log.warning("skipping malformed result %s (needs system, pool and numeric metrics)", path)
        return out

    def put(self, row: dict[str, Any], predictions_path: str | Path) -> None:
        with self.lock():
            with atomic_open(self.root / request_path(row), "wb") as out, open(predictions_path, "rb") as src:
                shutil.copyfileobj(src, out)
            write_json(self.root / result_path(row), row)  # last: the row appears with its request in place


class HubStore:
    """A Hub dataset repository (HF_TOKEN needs write access); same layout as LocalStore.

    Reading downloads `results/*.json` (snapshot_download keeps a local cache, so unchanged files are not
    fetched again) at most once per `ttl` seconds (every control of the app re-reads the rows); a write
    through this store is seen at once. When the Hub cannot be reached the last rows read are shown and a
    warning is logged. Writing is one commit with the request and the result; the repository is created on
    the first write.
    """

    def __init__(self, repo_id: str, token: str | None = None, api: Any = None, ttl: float = 10.0):
        if api is None:
            from huggingface_hub import HfApi

            api = HfApi(token=token)
        self.repo_id = repo_id
        self.api = api
        self.ttl = ttl
        self._last_rows: list[dict[str, Any]] = []
        self._read_at: float | None = None
        self._repo_ready = False
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"HubStore({self.repo_id!r})"

    def rows(self) -> list[dict[str, Any]]:
        from huggingface_hub.errors import RepositoryNotFoundError

        if self._read_at is not None and time.monotonic() - self._read_at < self.ttl:
            return copy.deepcopy(self._last_rows)
        try:
            local = self.api.snapshot_download(repo_id=self.repo_id, repo_type="dataset",
                                               allow_patterns=[f"{RESULTS_DIR}/*.json"])
        except RepositoryNotFoundError:
            log.info("results repo %s does not exist yet: no submissions", self.repo_id)
            self._last_rows, self._read_at = [], time.monotonic()
            return []
        except OSError as e:  # HfHubHTTPError, offline, timeouts: all OSError subclasses
            log.warning("cannot read results repo %s (%s); showing the last rows read", self.repo_id, e)
            return copy.deepcopy(self._last_rows)
        rows = []
        for path in sorted(Path(local, RESULTS_DIR).glob("*.json")):
            try:
                row = json.loads(path.read_text(encoding="utf-8"))
            except (ValueError, OSError) as e:
                log.warning("skipping unreadable result %s in %s: %s", path.name, self.repo_id, e)
                continue
            if valid_row(row):
                rows.append(row)
            else:
                log.warning("skipping malformed result %s in %s", path.name, self.repo_id)
        self._last_rows, self._read_at = rows, time.monotonic()
        return copy.deepcopy(rows)

    def put(self, row: dict[str, Any], predictions_path: str | Path) -> None:
        from huggingface_hub import CommitOperationAdd

        data = json.dumps(row, ensure_ascii=False, indent=1, sort_keys=True).encode("utf-8") + b"\n"
        with self._lock:
            if not self._repo_ready:
                self.api.create_repo(repo_id=self.repo_id, repo_type="dataset", exist_ok=True)
                self._repo_ready = True
            self.api.create_commit(
                repo_id=self.repo_id, repo_type="dataset",
                operations=[CommitOperationAdd(path_in_repo=request_path(row), path_or_fileobj=str(predictions_path)),
                            CommitOperationAdd(path_in_repo=result_path(row), path_or_fileobj=data)],
                commit_message=f"Submission {row['system']} ({row['pool']} pool)",
            )  # fmt: skip
            self._read_at = None  # the next read fetches the new row


def open_store(results_dir: str | Path, results_repo: str | None = None, token: str | None = None) -> ResultsStore:
    """The Hub store when `results_repo` is set (TRACE_SPACE_RESULTS_REPO), else the local folder."""
    if results_repo:
        return HubStore(results_repo, token)
    return LocalStore(results_dir)
