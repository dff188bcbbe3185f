"""What a resumed run may keep (the rows its metadata vouches for) and the chunks of work left after them.

As a run goes, `<file>.meta.json` records after every chunk how many rows the predictions file holds
(`rows_written`) and a SHA-256 over their bytes (`rows_sha256`, a running hash). A rerun keeps the rows only
when the first `rows_written` of them still hash to that value: rows edited, reordered or removed since are
refused (rerun with `--overwrite`) instead of being scored as if the baseline had written them. Rows past
`rows_written` (appended by a run killed before it could record them) are dropped and predicted again.
Metadata from before this record existed is trusted on the row keys alone, with a warning.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from trace_dataset.io import TraceDataError

log = logging.getLogger(__name__)

ROWS_KEY = "rows_written"
HASH_KEY = "rows_sha256"


def system_turn_ids(dialogue: dict[str, Any]) -> list[int]:
    return [t["turn_id"] for t in dialogue["turns"] if t["role"] == "system"]


def read_done(out: Path, expected: Sequence[tuple[str, int]]) -> int:
    """Number of complete, valid leading rows in `out`; a torn last line is cut off the file.

    Every complete line must be a JSON object whose (dialogue_id, turn_id) is the next expected row;
    anything else means the file is not a prefix of this run's output, and it is an error.
    """
    if not out.exists():
        return 0
    with open(out, "rb") as f:
        data = f.read()
    end = data.rfind(b"\n") + 1
    if end < len(data):
        log.warning(
            "%s: discarding a torn last line (%d bytes) left by an interrupted run", out, len(data) - end
        )
        with open(out, "r+b") as f:
            f.truncate(end)
    n = 0
    for lineno, line in enumerate(data[:end].splitlines(), start=1):
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            raise TraceDataError(
                f"not valid JSON ({e.msg}); delete the file or rerun with --overwrite", path=out, line=lineno
            ) from None
        if n >= len(expected):
            raise TraceDataError(
                f"more rows than the split has ({len(expected)}); rerun with --overwrite",
                path=out,
                line=lineno,
            )
        key = (record.get("dialogue_id"), record.get("turn_id")) if isinstance(record, dict) else None
        if key != expected[n]:
            raise TraceDataError(
                f"row {key} where {expected[n]} was expected: not a prefix of this run's output; "
                "delete the file or rerun with --overwrite",
                path=out,
                line=lineno,
            )
        n += 1
    return n


class RowLedger:
    """The running count and hash of the rows written to a predictions file."""

    def __init__(self, rows: int = 0, digest: Any = None):
        self.rows = rows
        self._hash = digest if digest is not None else hashlib.sha256()

    def add(self, lines: list[str]) -> None:
        for line in lines:
            self._hash.update(line.encode("utf-8"))
        self.rows += len(lines)

    def record(self) -> dict[str, Any]:
        """The metadata fields to store after the rows counted so far are on disk."""
        return {ROWS_KEY: self.rows, HASH_KEY: self._hash.hexdigest()}


def verify_rows(out: Path, old_meta: dict[str, Any], done: int) -> tuple[int, RowLedger]:
    """(rows to keep, the ledger over them) for a predictions file whose first `done` rows have the keys this
    run expects (`read_done`); raises TraceDataError when they differ from what the run recorded."""
    recorded, digest = old_meta.get(ROWS_KEY), old_meta.get(HASH_KEY)
    if not done and not recorded:
        return 0, RowLedger()
    with open(out, "rb") as f:
        lines = f.read().splitlines(keepends=True)[:done]  # read_done cut any torn last line
    if not isinstance(recorded, int) or not isinstance(digest, str):
        log.warning(
            "%s: its run metadata records no row hash (an older trace-bench); keeping the %d rows whose "
            "keys match",
            out,
            done,
        )
        ledger = RowLedger()
        ledger.add([line.decode("utf-8") for line in lines])
        return done, ledger
    if done < recorded:
        raise TraceDataError(
            f"the file holds {done} rows but its run metadata records {recorded}: rows were removed or the file "
            "was replaced since; rerun with --overwrite to start over",
            path=out,
        )
    ledger = RowLedger()
    ledger.add([line.decode("utf-8") for line in lines[:recorded]])
    if ledger.record()[HASH_KEY] != digest:
        raise TraceDataError(
            f"the first {recorded} rows are not the rows this run wrote (their SHA-256 differs from the one in "
            "the run metadata): the file was edited since; rerun with --overwrite to start over",
            path=out,
        )
    if done > recorded:
        log.warning(
            "%s: dropping %d row(s) written after the last checkpoint of an interrupted run; they are "
            "predicted again",
            out,
            done - recorded,
        )
        with open(out, "r+b") as f:
            f.truncate(sum(len(line) for line in lines[:recorded]))
    return recorded, ledger


def dialogue_chunks(
    dialogues: Sequence[dict[str, Any]], counts: Sequence[int], done: int, size: int
) -> Iterator[tuple[list[dict[str, Any]], int, int]]:
    """(dialogues, rows to skip, rows produced) for the work left after `done` rows."""
    start, before = 0, 0
    while start < len(dialogues) and before + counts[start] <= done:
        before += counts[start]
        start += 1
    skip = done - before
    for i in range(start, len(dialogues), size):
        chunk = list(dialogues[i : i + size])
        rows = sum(counts[i : i + size]) - skip
        yield chunk, skip, rows
        skip = 0
