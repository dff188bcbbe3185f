"""The one way the product opens an on-disk SQLite cache that several processes share (the LLM response cache,
the NLI cache, the query-vector cache): WAL mode, a busy timeout, and the setup statements (schema, pragmas) run.

Two processes that open a new file at the same moment (`accelerate launch`, `torchrun`, parallel shards) both
ask to switch it to WAL. That switch upgrades a shared lock to an exclusive one, and SQLite refuses one of the
two at once with "database is locked" instead of waiting, since both waiting would deadlock; the busy timeout
never applies. `connect_wal` therefore retries the switch and the setup statements, with a growing pause,
until the timeout has passed, and only then lets the error through.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence
from os import PathLike
from typing import Any

BUSY_TIMEOUT_S = 120.0  # how long a process waits for another's lock before the cache is reported unusable
_FIRST_PAUSE_S = 0.01
_MAX_PAUSE_S = 0.5


def _contended(error: sqlite3.OperationalError) -> bool:
    text = str(error).lower()
    return "locked" in text or "busy" in text


def connect_wal(
    path: str | PathLike[str],
    setup: Sequence[str] = (),
    timeout: float = BUSY_TIMEOUT_S,
    **connect_kw: Any,
) -> sqlite3.Connection:
    """A connection to the SQLite file at `path` in WAL mode on which the `setup` statements (idempotent ones:
    CREATE TABLE IF NOT EXISTS, per-connection pragmas) have run; other processes' locks are waited for up to
    `timeout` seconds (sqlite3's own busy timeout, and the retries above for the refusal it does not cover).

    Raises sqlite3.DatabaseError as sqlite3 does (a corrupt file, a lock held past the timeout); callers turn it
    into their layer's error with `trace_bench.errors.sqlite_cache`."""
    conn = sqlite3.connect(path, timeout=timeout, **connect_kw)
    deadline = time.monotonic() + timeout
    pause = _FIRST_PAUSE_S
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            for statement in setup:
                conn.execute(statement)
            conn.commit()
            return conn
        except sqlite3.OperationalError as e:
            if not _contended(e) or time.monotonic() + pause > deadline:
                conn.close()
                raise
            conn.rollback()
            time.sleep(pause)
            pause = min(2 * pause, _MAX_PAUSE_S)
        except BaseException:
            conn.close()
            raise


__all__ = ["BUSY_TIMEOUT_S", "connect_wal"]
