"""Reading and checking the records a release or a data directory holds, with file and line in every error.

The release writer, the hydrator and the `datasets` builder all read dialogues through here, so a broken
line reads the same everywhere: `data/test.jsonl.gz:17: quote_spans[2]: expected ...`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from trace_dataset.io import TraceDataError, iter_jsonl_lines
from trace_dataset.schema import DIALOGUE_FEATURES, QUOTE_SPAN_FEATURES

DIALOGUE_FIELDS: tuple[str, ...] = tuple(DIALOGUE_FEATURES)
QUOTE_SPAN_FIELDS: tuple[str, ...] = tuple(QUOTE_SPAN_FEATURES)


def iter_numbered_lines(path: str | os.PathLike) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """(line number, line without its newline, record) of every non-blank JSON line (trace_dataset.io's reader)."""
    return iter_jsonl_lines(path)


def iter_numbered_jsonl(path: str | os.PathLike) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, record) of every non-blank JSON line; a broken line names file and line."""
    for lineno, _, record in iter_numbered_lines(path):
        yield lineno, record


def check_dialogue(record: dict[str, Any], *, path: str | os.PathLike, line: int) -> None:
    """The fields the release and hydration rely on exist and have the right shape."""
    missing = [k for k in DIALOGUE_FIELDS if k not in record]
    if missing:
        raise TraceDataError(
            f"dialogue record lacks field(s) {missing}; expected the fields of schema.DIALOGUE_FEATURES "
            f"{list(DIALOGUE_FIELDS)}",
            path=path,
            line=line,
        )
    if not isinstance(record["dialogue_id"], str) or not record["dialogue_id"]:
        raise TraceDataError(
            f"dialogue_id: expected a non-empty string, got {record['dialogue_id']!r}", path=path, line=line
        )
    turns = record["turns"]
    if not isinstance(turns, list):
        raise TraceDataError(f"turns: expected a list, got {type(turns).__name__}", path=path, line=line)
    for i, turn in enumerate(turns):
        if not isinstance(turn, dict) or not isinstance(turn.get("text"), str):
            raise TraceDataError(f"turns[{i}]: expected an object with a string 'text'", path=path, line=line)
    spans = record["quote_spans"]
    if not isinstance(spans, list):
        raise TraceDataError(
            f"quote_spans: expected a list, got {type(spans).__name__}", path=path, line=line
        )
    for i, span in enumerate(spans):
        if not isinstance(span, dict) or any(k not in span for k in QUOTE_SPAN_FIELDS):
            raise TraceDataError(
                f"quote_spans[{i}]: expected an object with {list(QUOTE_SPAN_FIELDS)}, got {span!r}",
                path=path,
                line=line,
            )
        ints = (span["quote_id"], span["start"], span["end"])
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in ints):
            raise TraceDataError(
                f"quote_spans[{i}]: quote_id, start and end must be integers, got {span!r}",
                path=path,
                line=line,
            )
        if span["quote_id"] != i + 1:
            raise TraceDataError(
                f"quote_spans[{i}]: quote_id {span['quote_id']} out of order; expected {i + 1} "
                "(quote ids are 1-based, in order of appearance)",
                path=path,
                line=line,
            )
        if not 0 <= span["start"] < span["end"]:
            raise TraceDataError(
                f"quote_spans[{i}]: bad offsets start={span['start']} end={span['end']}", path=path, line=line
            )
        if not isinstance(span["review_id"], str) or not isinstance(span["checksum"], str):
            raise TraceDataError(
                f"quote_spans[{i}]: review_id and checksum must be strings, got {span!r}",
                path=path,
                line=line,
            )
