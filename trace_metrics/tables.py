"""The paper's result tables as column lists: metric ids -> display labels, grouped by axis.

Data keys are the canonical metric ids of trace_metrics.specs; these labels are the UI edge, shared by the
`trace-bench leaderboard` tables and the Space. An id prefixed `open:` reads the system's open-pool row.
"""

from __future__ import annotations

from typing import NamedTuple


class Column(NamedTuple):
    metric: str  # canonical metric id
    label: str
    group: str  # axis header
    higher_is_better: bool = True


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
FAMILIES: tuple[str, ...] = ("non-LLM", "LLM", "submitted", "paper")
OPEN_PREFIX = "open:"


def header(column: Column) -> str:
    arrow = "↑" if column.higher_is_better else "↓"
    return f"{column.group}: {column.label} {arrow}"


def text_table(header: list[str], rows: list[list[str]]) -> str:
    """A plain-text table: the first column left-aligned, the others right-aligned, a dashed rule under the
    header (the layout of `trace-bench evaluate` and `trace-bench core`)."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )

    return "\n".join([line(header), line(["-" * w for w in widths]), *(line(r) for r in rows)])
