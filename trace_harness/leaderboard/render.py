"""The leaderboard's rows as the paper's tables: each cell (value, interval, mark) read once (`row_cells`), the
plain-text Tables 5, 6 and 9 (`format_tables`, one table per pool and corpus) and each table's CSV
(`pool_csv`). trace_harness/leaderboard/build.py makes the rows; the Space renders the same cells."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from trace_harness import fallbacks as fb
from trace_harness.leaderboard import marks as mk
from trace_metrics.tables import (
    OPEN_PREFIX,
    VIEWS,
    Column,
    csv_fields,
    csv_header,
    csv_text,
    format_cell,
    heading,
    text_table,
)

LEGEND = (
    "±: half the width of the 95% cluster-bootstrap interval (dialogues resampled, n_boot {n_boot}, seed "
    "{seed}; exact bounds in the CSV and JSON)"
)


RawCell = tuple[Any, list[float] | None, bool | None]  # value, [low, high], tied_best


def _cell(row: dict[str, Any] | None, metric: str) -> RawCell:
    """(value, [low, high] or None, tied_best or None) of one cell."""
    if row is None:
        return None, None, None
    return row["metrics"].get(metric), row.get("ci", {}).get(metric), row.get("tied_best", {}).get(metric)


def open_rows(rows: Sequence[dict[str, Any]]) -> dict[tuple[str, Any], dict[str, Any]]:
    """The open-pool rows by (system, source): what an `open:` column of a closed-pool row reads."""
    return {(r["system"], r.get("source")): r for r in rows if r["pool"] == "open"}


def row_cells(
    row: dict[str, Any], columns: Sequence[Column], opened: dict[tuple[str, Any], dict[str, Any]]
) -> list[RawCell]:
    """The cells of `row` for `columns` (as stored: see `_cell`); an `open:` column reads the same system's
    open-pool row in `opened` (`open_rows`). The text tables, the CSV files and the Space all read cells here."""
    return [
        _cell(opened.get((row["system"], row.get("source"))), c.metric[len(OPEN_PREFIX) :])
        if c.metric.startswith(OPEN_PREFIX)
        else _cell(row, c.metric)
        for c in columns
    ]


def pool_cells(
    rows: Sequence[dict[str, Any]], columns: Sequence[Column], pool: str
) -> list[tuple[dict, list]]:
    """(row, cells) for every row of `pool`."""
    opened = open_rows(rows)
    return [(r, row_cells(r, columns, opened)) for r in rows if r["pool"] == pool]


def format_tables(rows: Sequence[dict[str, Any]], pools: Sequence[str] = ("closed", "open")) -> str:
    """Plain-text Tables 5, 6 and 9 for every pool that has rows, each cell with its interval and mark; one table
    per corpus (the heading names it) when the rows come from more than one."""
    parts = []
    method = next((r["ci_method"] for r in rows if r.get("ci_method")), None)
    if method:
        parts.append(LEGEND.format(**method))
    note = mk.marks_note(rows)
    if note:
        parts.append(note)
    if any(r.get("robustness") for r in rows):
        parts.append(mk.LEAD_LEGEND)
    if method or note:
        parts.append("")
    versions = list(dict.fromkeys(r.get("corpus_version") or "" for r in rows))  # never ranked together
    parts += [f"Every row scored on corpus {versions[0][:12]}", ""] if len(versions) == 1 else []
    for pool, (title, columns), version in itertools.product(pools, VIEWS.items(), versions):
        mine = [r for r in rows if (r.get("corpus_version") or "") == version]
        if any(r["pool"] == pool for r in mine):
            corpus = f" — corpus {version[:12]}" if len(versions) > 1 else ""
            parts.append(f"{title} — pool: {pool}{corpus}")
            parts += _pool_table(mine, columns, pool)
    return "\n".join(parts)


def _pool_table(rows: Sequence[dict[str, Any]], columns: Sequence[Column], pool: str) -> list[str]:
    """One table's lines (the rows of `pool`; those not session-isolated last) and its notes."""
    body = [
        [
            r["system"] + ("‡" if r.get("session_isolated", True) is False else "") + fb.mark(r),
            r["family"],
            *(format_cell(*cell) for cell in cells),
        ]
        for r, cells in sorted(
            pool_cells(rows, columns, pool),  # apart: after the session-isolated rows
            key=lambda rc: rc[0].get("session_isolated", True) is False,
        )
    ]
    parts = [text_table(["System", "Family", *(heading(c) for c in columns)], body, align="left", rule=False)]
    if any(r.get("session_isolated", True) is False for r in rows if r["pool"] == pool):
        parts.append(
            "‡ not session-isolated (memory across dialogues): reported apart, as the paper does; "
            "marked against no other row"
        )
    if any(fb.mark(r) for r in rows if r["pool"] == pool):
        parts.append(fb.LEGEND)
    lead = mk.robustness_line(rows, columns, pool)
    if lead:
        parts.append(lead)
    parts.append("")
    return parts


def pool_csv(rows: Sequence[dict[str, Any]], columns: Sequence[Column], pool: str) -> str:
    """Per metric four columns: the value, `<id>_ci_low`, `<id>_ci_high`, `<id>_tied_best` (1 / 0 / empty); then
    the run's fallbacks (`fallbacks.csv_fields`) and how the marks were made (`marks`: test, correction,
    family and alpha; empty without marks)."""
    return csv_text(
        ["system", "family", *csv_header(columns), *fb.CSV_FIELDS, "marks"],
        (
            [
                r["system"],
                r["family"],
                *(f for cell in cells for f in csv_fields(*cell)),
                *fb.csv_fields(r),
                mk.csv_field(r),
            ]
            for r, cells in pool_cells(rows, columns, pool)
        ),
    )
