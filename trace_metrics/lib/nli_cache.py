"""The NLI cache: (model key, premise, claim) -> entailment probability, persistent in one SQLite table, so
that a rerun of `trace_metrics.lib.entailment` makes no model call."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from trace_bench.errors import sqlite_cache
from trace_bench.sqlite import connect_wal

CACHE_FILE = "nli.sqlite"  # beside the LLM response cache, in $TRACE_BENCH_CACHE or ~/.cache/trace-bench
_SQL_VARS = 500


class NLICache:
    """Persistent (model key, premise, claim) -> entailment probability, one SQLite table."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._guard():
            # WAL: under `accelerate launch` the main process writes each chunk while the others read the file
            self._conn = connect_wal(
                self.path,
                ["CREATE TABLE IF NOT EXISTS nli (key TEXT PRIMARY KEY, prob REAL NOT NULL) WITHOUT ROWID"],
            )

    def _guard(self):
        """sqlite3.DatabaseError (a corrupt file, not a database) -> CacheError naming the file."""
        return sqlite_cache(self.path, "NLI cache", "set TRACE_BENCH_CACHE to another folder")

    @staticmethod
    def key(model_key: str, premise: str, claim: str) -> str:
        return hashlib.sha256("\x1f".join((model_key, premise, claim)).encode("utf-8")).hexdigest()[:32]

    def get_many(self, keys: Sequence[str]) -> dict[str, float]:
        found: dict[str, float] = {}
        for start in range(0, len(keys), _SQL_VARS):
            part = keys[start : start + _SQL_VARS]
            marks = ",".join("?" * len(part))
            with self._guard():
                found.update(
                    self._conn.execute(f"SELECT key, prob FROM nli WHERE key IN ({marks})", part).fetchall()
                )
        return found

    def put_many(self, items: Iterable[tuple[str, float]]) -> None:
        with self._guard(), self._conn:
            self._conn.executemany("INSERT OR REPLACE INTO nli (key, prob) VALUES (?, ?)", list(items))

    def __len__(self) -> int:
        with self._guard():
            return self._conn.execute("SELECT COUNT(*) FROM nli").fetchone()[0]

    def close(self) -> None:
        self._conn.close()
