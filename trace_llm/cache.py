"""Persistent response cache: SQLite, keyed by backend, model, decoding settings and messages.

Every finished request is written at once, so an interrupted run resumes where it stopped and a rerun costs no
model call. SQLite in WAL mode with a busy timeout lets several threads and processes share one file; each
process opens its own connection (re-opened after a fork).

Location: `cache_path` if given, else `$TRACE_BENCH_CACHE/llm.sqlite`, else
`$XDG_CACHE_HOME/trace-bench/llm.sqlite` (default `~/.cache/trace-bench/llm.sqlite`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trace_bench.sqlite import connect_wal
from trace_llm.errors import LLMError

log = logging.getLogger(__name__)

CACHE_ENV = "TRACE_BENCH_CACHE"
CACHE_FILE = "llm.sqlite"
KEY_VERSION = 1  # bump when the key's content changes meaning
_SQL_CHUNK = 500  # keys per SELECT (SQLite's parameter limit is 999 on old builds)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    backend TEXT NOT NULL,
    model TEXT NOT NULL,
    settings TEXT NOT NULL,
    text TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    finish_reason TEXT
)
"""


@dataclass(frozen=True)
class Completion:
    """One model answer and what it cost."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str | None = None  # "stop" | "length" | None when the backend does not say


def default_cache_dir() -> Path:
    """The trace-bench cache folder: response cache and converted GGUF models live here."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base).expanduser() / "trace-bench"


def default_cache_path() -> Path:
    return default_cache_dir() / CACHE_FILE


def cache_key(
    backend: str,
    model: str,
    settings: dict[str, Any],
    messages: list[dict[str, str]],
    structured: str | None = None,
) -> str:
    """sha256 over a canonical JSON of everything that decides the answer.

    `structured` names the dialect and constraint of a constrained request (`"json_schema:<digest>"`); a request
    decoded freely (prompt dialect) leaves it out, so its key is the one it had before constrained decoding.
    """
    payload: dict[str, Any] = {
        "v": KEY_VERSION,
        "backend": backend,
        "model": model,
        "settings": settings,
        "messages": messages,
    }
    if structured:
        payload["structured"] = structured
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    """A key -> Completion store on disk (or in memory with path=":memory:")."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path) if str(path) != ":memory:" else None
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._pid = -1
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._connect()

    def _connect(self) -> sqlite3.Connection:
        if self._conn is not None and self._pid == os.getpid():
            return self._conn
        target = str(self.path) if self.path is not None else ":memory:"
        try:
            if self.path is None:
                conn = sqlite3.connect(target, check_same_thread=False, isolation_level=None)
                conn.execute(_SCHEMA)
            else:
                conn = connect_wal(
                    target,
                    ["PRAGMA synchronous = NORMAL", _SCHEMA],
                    check_same_thread=False,
                    isolation_level=None,
                )
        except sqlite3.DatabaseError as e:
            raise LLMError(
                f"LLM response cache {target}: cannot open ({e}); delete it or pass another cache path"
            ) from e
        self._conn, self._pid = conn, os.getpid()
        return conn

    def get_many(self, keys: Iterable[str]) -> dict[str, Completion]:
        keys = list(dict.fromkeys(keys))
        found: dict[str, Completion] = {}
        with self._lock:
            conn = self._connect()
            for i in range(0, len(keys), _SQL_CHUNK):
                chunk = keys[i : i + _SQL_CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = conn.execute(
                    f"SELECT key, text, prompt_tokens, completion_tokens, finish_reason FROM responses "
                    f"WHERE key IN ({marks})",
                    chunk,
                ).fetchall()
                for key, text, pt, ct, fr in rows:
                    found[key] = Completion(text, pt, ct, fr)
        return found

    def get(self, key: str) -> Completion | None:
        return self.get_many([key]).get(key)

    def put(
        self, key: str, backend: str, model: str, settings: dict[str, Any], completion: Completion
    ) -> None:
        row = (
            key,
            backend,
            model,
            json.dumps(settings, sort_keys=True),
            completion.text,
            int(completion.prompt_tokens),
            int(completion.completion_tokens),
            completion.finish_reason,
        )
        with self._lock:
            self._connect().execute("INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?, ?, ?)", row)

    def __len__(self) -> int:
        with self._lock:
            return self._connect().execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def mean_completion_tokens(self, backend: str, model: str, settings: str) -> tuple[float | None, int]:
        """(mean completion tokens, number of answers) stored for one backend, model and settings (the settings
        as stored: `json.dumps(settings, sort_keys=True)`); (None, 0) when none is stored."""
        with self._lock:
            mean, n = (
                self._connect()
                .execute(
                    "SELECT AVG(completion_tokens), COUNT(*) FROM responses WHERE backend = ? AND model = ? AND settings = ?",
                    (backend, model, settings),
                )
                .fetchone()
            )
        return (None if mean is None else float(mean)), int(n)

    def stats(self) -> dict[str, Any]:
        with self._lock:
            n, pt, ct = (
                self._connect()
                .execute(
                    "SELECT COUNT(*), COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(completion_tokens), 0) FROM responses"
                )
                .fetchone()
            )
        size = self.path.stat().st_size if self.path is not None and self.path.exists() else 0
        return {
            "path": str(self.path) if self.path else ":memory:",
            "entries": n,
            "prompt_tokens": pt,
            "completion_tokens": ct,
            "bytes": size,
        }

    def close(self) -> None:
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
