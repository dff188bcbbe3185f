"""The leaderboard's columns and cells: one column type and one cell formatter for every table that shows a
result (the `trace-bench leaderboard` text tables, its CSV and JSON files, the interactive view, the Space).

Data keys are the canonical metric ids of trace_metrics.specs; these labels are the UI edge. An id prefixed
`open:` reads the system's open-pool row. The renderers that lay the formatted cells out (plain text,
Markdown, CSV) are the kernel's `trace_bench.tables`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from trace_bench.tables import csv_text, markdown_table, text_table

__all__ = [
    "DECIMALS",
    "OPEN_PREFIX",
    "TABLE5",
    "TABLE6",
    "TABLE9",
    "VIEWS",
    "Column",
    "csv_fields",
    "csv_header",
    "csv_text",
    "format_cell",
    "format_value",
    "half_width",
    "header",
    "heading",
    "markdown_table",
    "text_table",
]

DECIMALS = 3  # every metric cell of the leaderboard, whatever its range (T2R included)


class Column(NamedTuple):
    """One column of a results table: the data key, its label, the axis it is grouped under, its direction
    and its number format."""

    metric: str  # canonical metric id (the key in a row's `metrics`)
    label: str
    group: str = ""  # axis header
    higher_is_better: bool = True
    digits: int = DECIMALS  # decimals of every value (and interval) in the column


# Table 5: the closed-set headline, grouped by axis
TABLE5 = (
    Column("recall@1", "R@1", "Accuracy"),
    Column("recall@3", "R@3", "Accuracy"),
    Column("mrr", "MRR", "Accuracy"),
    Column("bleu4", "BLEU-4", "Text"),
    Column("rouge_l", "ROUGE-L", "Text"),
    Column("cgs", "CGS", "Grounding"),
    Column("citation_density", "Cite. D.", "Grounding"),
    Column("tsr", "TSR", "Recovery"),
    Column("t2r", "T2R", "Recovery", higher_is_better=False),
)
# Table 6: per-axis stressors
TABLE6 = (
    Column("open:recall@1", "R@1 Open", "Accuracy"),
    Column("grounding_score", "GS", "Grounding"),
    Column("provenance_coverage", "PC", "Grounding"),
    Column("entailment", "NLI", "Grounding"),
    Column("rejection_recovery", "Rej. Rec.", "Recovery"),
)
# Table 9: practical value
TABLE9 = (
    Column("spatial_coherence@2km", "Spatial Coh.", "Practical"),
    Column("price_alignment", "Price Align.", "Practical"),
    Column("itinerary_diversity", "Itin. Div.", "Practical"),
    Column("grounding_score", "GS", "Grounding"),
)
VIEWS: dict[str, tuple[Column, ...]] = {
    "Table 5: headline": TABLE5,
    "Table 6: stress tests": TABLE6,
    "Table 9: practical value": TABLE9,
}
OPEN_PREFIX = "open:"


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
