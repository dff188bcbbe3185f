"""The one base class of errors a user can fix: bad input, a missing file or package, a server that refuses.

The root command (`trace_bench.cli`) prints such an error as one line, `trace-bench: error: MESSAGE`, and exits
with status 2; anything else is a bug and keeps its traceback. Each layer derives its own errors from it
(`trace_llm.LLMError`, `trace_dataset.io.TraceDataError`, ...), so the message is the only thing a user sees.
A command raises these instead of printing and returning 2 itself, so every user-facing failure takes one path.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from os import PathLike


class TraceBenchError(Exception):
    """An error the user can act on; its message names the input (file, line, field, option) and what was expected."""


class UsageError(TraceBenchError, ValueError):
    """Command-line options that cannot work together, or a value no option type can check alone; the message
    names the option(s) and what is expected."""


class CacheError(TraceBenchError):
    """An on-disk cache (SQLite) that cannot be opened or read: corrupt, not a database, or unwritable."""


@contextmanager
def sqlite_cache(
    path: str | PathLike[str], what: str, hint: str = "pass another cache folder"
) -> Iterator[None]:
    """Turn `sqlite3.DatabaseError` raised in the block into a CacheError naming the cache `what` at `path` and
    how to get past it (delete the file, or `hint`)."""
    try:
        yield
    except sqlite3.DatabaseError as e:
        raise CacheError(f"{what} {path}: cannot be used ({e}); delete it or {hint}") from e


__all__ = ["CacheError", "TraceBenchError", "UsageError", "sqlite_cache"]
