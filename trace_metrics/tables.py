"""The leaderboard's columns and cells: one column type and one cell formatter for every table that shows a
result (the `trace-bench leaderboard` text tables, its CSV and JSON files, the interactive view, the Space).

Data keys are the canonical metric ids of trace_metrics.specs. A column is made from its metric's
declaration (`column`): its label, its axis (the declaration's family) and its direction are the
declaration's, so a table view lists metric ids, with a label of its own only where the paper's table prints
a different one. An id prefixed `open:` reads the system's open-pool row (labelled "<label> Open"). The views
are the paper's Tables 5, 6 and 9 (`VIEWS`: what `trace-bench leaderboard` prints and writes) and, on the
Space, every metric the suite computes (`BOARD_VIEWS`, `ALL_METRICS`), where a new declaration shows with no
second one. The renderers that lay the formatted cells out (plain text, Markdown, CSV) are the kernel's
`trace_bench.tables`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from trace_bench.tables import csv_text, markdown_table, text_table
from trace_metrics.specs import SUITE_METRICS, MetricSpec, spec

__all__ = [
    "ALL_METRICS",
    "BOARD_VIEWS",
    "DECIMALS",
    "OPEN_PREFIX",
    "TABLE5",
    "TABLE6",
    "TABLE9",
    "VIEWS",
    "Column",
    "axis",
    "column",
    "column_of",
    "csv_fields",
    "csv_header",
    "csv_text",
    "format_cell",
    "format_value",
    "half_width",
    "header",
    "heading",
    "markdown_table",
    "metric_view",
    "text_table",
]

DECIMALS = 3  # every metric cell of the leaderboard, whatever its range (T2R included)


class Column(NamedTuple):
    """One column of a results table: the data key, its label, the axis it is grouped under, its direction
    and its number format. Made from a metric's declaration by `column`."""

    metric: str  # the data key (the canonical metric id, in a row's `metrics`)
    label: str
    group: str = ""  # axis header
    higher_is_better: bool = True
    digits: int = DECIMALS  # decimals of every value (and interval) in the column
    id: str = ""  # the declared metric it shows (`column_of`; the data key `metric` may be another name)


OPEN_PREFIX = "open:"


def axis(s: MetricSpec) -> str:
    """The axis a metric's column is grouped under: its family ("Accuracy", "Grounding", ...)."""
    return s.family.capitalize()


def column(metric: str, label: str = "", *, key: str = "", digits: int = DECIMALS) -> Column:
    """The column of a declared metric id (`specs.spec`; an `open:` id reads the open-pool row and is
    labelled "<label> Open"): `column_of` its declaration."""
    opened = metric.startswith(OPEN_PREFIX)
    declared = spec(metric.removeprefix(OPEN_PREFIX))
    if not label and opened:
        label = declared.label + " Open"
    return column_of(declared, label, key=key or (metric if opened else ""), digits=digits)


def column_of(declared: MetricSpec, label: str = "", *, key: str = "", digits: int = DECIMALS) -> Column:
    """The column of a declaration: its label, axis and direction. `label`: the table's own header where it
    prints a different one; `key`: the data key where the rows store the value under another name than the
    id (an `open:` id, the interactive rows' "success")."""
    return Column(
        key or declared.id,
        label or declared.label,
        axis(declared),
        declared.higher_is_better,
        digits,
        declared.id,
    )


def metric_view(metrics: Sequence[MetricSpec]) -> tuple[Column, ...]:
    """A view of every metric given, in their order, each column from its declaration."""
    return tuple(column_of(m) for m in metrics)


# Table 5: the closed-set headline, grouped by axis
TABLE5 = (
    column("recall@1"),
    column("recall@3"),
    column("mrr"),
    column("bleu4"),
    column("rouge_l"),
    column("cgs"),
    column("citation_density", "Cite. D."),  # the paper's header (the declaration's label is "CD")
    column("tsr"),
    column("t2r"),
)
# Table 6: per-axis stressors
TABLE6 = (
    column("open:recall@1"),
    column("grounding_score"),
    column("provenance_coverage"),
    column("entailment"),
    column("rejection_recovery"),
)
# Table 9: practical value
TABLE9 = (
    column("spatial_coherence@2km"),
    column("price_alignment"),
    column("itinerary_diversity"),
    column("grounding_score"),
)
VIEWS: dict[str, tuple[Column, ...]] = {
    "Table 5: headline": TABLE5,
    "Table 6: stress tests": TABLE6,
    "Table 9: practical value": TABLE9,
}
# The Space's board also offers every metric the suite computes (docs/leaderboard.md, "Columns")
ALL_METRICS = "All Trace metrics"
BOARD_VIEWS: dict[str, tuple[Column, ...]] = {**VIEWS, ALL_METRICS: metric_view(SUITE_METRICS)}


def header(column: Column) -> str:
    """The column's full name: "Accuracy: R@1 ↑" (the Space's headers and sort choices)."""
    arrow = "↑" if column.higher_is_better else "↓"
    return f"{column.group}: {column.label} {arrow}"


def heading(column: Column) -> str:
    """The column's short name in a text table: "R@1↑"."""
    return column.label + ("↑" if column.higher_is_better else "↓")


def format_value(value: Any, digits: int = DECIMALS, missing: str = "-") -> str:
    """A number with `digits` decimals ("0.130", "1.000", "2.250"); `missing` when there is none."""
    return missing if value is None else f"{float(value):.{digits}f}"


def format_p(p: float | None) -> str:
    """A p-value: four decimals ("0.0312"), "<0.0001" below, "-" when there is none."""
    if p is None:
        return "-"
    return "<0.0001" if p < 1e-4 else f"{p:.4f}"


def half_width(ci: Sequence[float]) -> float:
    return (ci[1] - ci[0]) / 2


def format_cell(
    value: Any,
    ci: Sequence[float] | None = None,
    tied: bool | None = None,
    digits: int = DECIMALS,
    missing: str = "-",
) -> str:
    """'0.533 ±0.012*': the value, half the width of its 95% interval, and * when the row is the best of the
    column or not significantly different from it; `missing` when there is no value."""
    if value is None:
        return missing
    text = format_value(value, digits)
    if ci:
        text += f" ±{half_width(ci):.{digits}f}"
    return text + ("*" if tied else "")


def csv_header(columns: Sequence[Column], marks: bool = True) -> list[str]:
    """Per column `<id>`, `<id>_ci_low`, `<id>_ci_high` and, with `marks`, `<id>_tied_best`."""
    suffixes = ("", "_ci_low", "_ci_high", *(("_tied_best",) if marks else ()))
    return [f"{c.metric}{s}" for c in columns for s in suffixes]


def csv_fields(
    value: Any, ci: Sequence[float] | None = None, tied: bool | None = None, marks: bool = True
) -> list[Any]:
    """The CSV fields of one cell (`csv_header`'s order): the value and bounds as stored (None: empty) and
    tied_best as 1 / 0 / empty."""
    fields = [value, *(ci if ci else (None, None))]
    return fields + ([None if tied is None else int(tied)] if marks else [])
