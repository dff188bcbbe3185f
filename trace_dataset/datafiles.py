"""Data tables kept as JSON files beside their code (word banks, phrase lists, the synthetic catalogue,
personas): how they are read, and how their hashes reach the metadata of what they feed.

A table file is one JSON object; its arrays are read as tuples (tables are never changed once read). Each
module that owns a table reads it once, on first use (`functools.cache`), never at import time. The SHA-256 of
each file goes into the metadata of what it feeds (the synthetic Yelp manifest, corpus.json), so a changed
table makes a different bundle or corpus, as a changed prompt file does.

Keys JSON cannot hold (ints, floats, None, tuples such as `("outdoor_seating", True)`) are written as a list
of rows instead of an object: each row is the key's parts followed by the value, `[1, [...]]` for the key `1`,
`["outdoor_seating", true, [...]]` for the key `("outdoor_seating", True)`. `from_rows` rebuilds the dict in
row order; the owning module says which of its tables are written that way.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from trace_dataset.io import TraceDataError, sha256_file


def read_table(path: Path) -> dict[str, Any]:
    """The JSON object in `path`, its arrays as tuples."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise TraceDataError(f"{path}: cannot read the data table ({e}); reinstall trace-bench") from e
    if not isinstance(data, dict):
        raise TraceDataError(f"{path}: expected a JSON object, got {type(data).__name__}")
    return {k: _frozen(v) for k, v in data.items()}


def _frozen(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, dict):
        return {k: _frozen(v) for k, v in value.items()}
    return value


def from_rows(rows: tuple[tuple[Any, ...], ...]) -> dict[Any, Any]:
    """The dict a list of rows encodes: a row of two items is (key, value); of more, its leading items are the
    parts of a tuple key and its last item the value."""
    return {(row[0] if len(row) == 2 else tuple(row[:-1])): row[-1] for row in rows}


def table_hashes(*paths: Path) -> dict[str, str]:
    """What metadata records of the tables: file name -> SHA-256 of its bytes."""
    return {p.name: sha256_file(p) for p in paths}
