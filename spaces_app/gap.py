"""The Three-Competency Gap plot (the paper's Figure 2): Recall@1 against CGS or rejection recovery.

An interactive plotly figure (gr.Plot): hovering a point shows the system, its family and both values with
their 95% intervals; clicking a legend entry hides that family (its scored and its paper points); error
bars are the rows' `ci` intervals (the paper's rows have none). No label is printed on the plot, so
clustered systems never overprint each other, and every name goes through `markup.plot_text`, so plotly's
label markup and math never read it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from spaces_app.leaderboard import FAMILIES, PAPER_SUFFIX, corpus_of, family, short_version
from spaces_app.markup import plot_text
from trace_harness import fallbacks as fb
from trace_metrics.tables import format_value

GAP_METRICS = {"cgs": "CGS (grounding)", "rejection_recovery": "Rejection recovery"}
X_METRIC = "recall@1"
COLOURS = {"non-LLM": "#1f77b4", "LLM": "#d62728", "submitted": "#2ca02c"}
NOT_OWN_NAME = "not its own result (fell back)"


def gap_group(row: dict[str, Any]) -> str:
    """Plot legend group: the family, with " (paper)" for the paper's reference rows."""
    return family(row) + (PAPER_SUFFIX if row.get("source") == "paper" else "")


GAP_GROUPS: tuple[str, ...] = (*FAMILIES, *(f + PAPER_SUFFIX for f in FAMILIES[:2]))


@dataclass(frozen=True)
class GapPoint:
    system: str
    group: str
    x: float
    y: float
    x_ci: tuple[float, float] | None = None
    y_ci: tuple[float, float] | None = None
    fallbacks: str = ""  # what fell back and how often (fallbacks.describe), empty when nothing did
    own: bool = True  # False: not the system's own result (fallbacks over fallbacks.NOT_OWN_SHARE)


def _ci(row: dict[str, Any], metric: str) -> tuple[float, float] | None:
    ci = row.get("ci", {}).get(metric)
    if ci is None or not all(math.isfinite(v) for v in ci):
        return None
    return float(ci[0]), float(ci[1])


def gap_points(rows: Sequence[dict[str, Any]], pool: str, y_metric: str) -> list[GapPoint]:
    """One point for every row of `pool` that has both values (with their intervals when the row has them)."""
    out = []
    for r in rows:
        if r["pool"] != pool:
            continue
        x, y = r["metrics"].get(X_METRIC), r["metrics"].get(y_metric)
        if x is not None and y is not None and math.isfinite(x) and math.isfinite(y):
            out.append(
                GapPoint(
                    r["system"],
                    gap_group(r),
                    float(x),
                    float(y),
                    _ci(r, X_METRIC),
                    _ci(r, y_metric),
                    fb.describe(r),
                    fb.own_result(r),
                )
            )
    return out


def _interval(ci: tuple[float, float] | None) -> str:
    return f"95% CI {format_value(ci[0])}–{format_value(ci[1])}" if ci else "no interval"


def _errors(points: list[GapPoint], axis: str) -> dict[str, Any]:
    value = [getattr(p, axis) for p in points]
    cis = [getattr(p, f"{axis}_ci") for p in points]
    if not any(cis):
        return {"visible": False}
    return {
        "type": "data",
        "symmetric": False,
        "thickness": 1.2,
        "width": 3,
        "array": [max(c[1] - v, 0.0) if c else None for c, v in zip(cis, value, strict=True)],
        "arrayminus": [max(v - c[0], 0.0) if c else None for c, v in zip(cis, value, strict=True)],
    }


def axis_range(points: Sequence[GapPoint], axis: str, pad: float = 0.05) -> list[float]:
    """From a little below 0 to a little above the largest value or interval bound: every point and error bar
    whole inside the plot (none half clipped at an edge), and the two axes' "0" labels apart at the origin."""
    top = max([v for p in points for v in (getattr(p, axis), *(getattr(p, f"{axis}_ci") or ()))], default=1.0)
    span = max(top, 1e-9)
    return [-pad * span, top + pad * span]


def legend_title(rows: Sequence[dict[str, Any]], pool: str) -> str:
    """The legend's title names the corpora: the rows scored here are on this leaderboard's corpus, the paper's
    on its own (10,000 real-Yelp dialogues), so a circle and a cross are not a ranking."""
    here = sorted({short_version(corpus_of(r)[1]) for r in rows if r["pool"] == pool and not corpus_of(r)[0]})
    paper = sorted({corpus_of(r)[1] for r in rows if r["pool"] == pool and corpus_of(r)[0]})
    parts = [f"scored here: corpus {', '.join(here)}"] if here else []
    parts += [f"paper: {', '.join(paper)}"] if paper else []
    return "<br>".join(plot_text(p) for p in parts)  # one line each: the legend stays narrow


def gap_figure(rows: Sequence[dict[str, Any]], pool: str = "closed", y_metric: str = "cgs"):
    """The gap scatter for `pool`: colour = family, circles = scored here, crosses = the paper's numbers."""
    if y_metric not in GAP_METRICS:
        raise ValueError(f"unknown gap metric {y_metric!r}; expected one of {tuple(GAP_METRICS)}")
    import plotly.graph_objects as go

    y_label = GAP_METRICS[y_metric]
    fig = go.Figure()
    points = gap_points(rows, pool, y_metric)
    for group in GAP_GROUPS:
        fam = group.removesuffix(PAPER_SUFFIX)
        paper = group.endswith(PAPER_SUFFIX)
        for own in (True, False):
            sel = [p for p in points if p.group == group and p.own == own]
            if not sel:
                continue
            fig.add_trace(
                go.Scatter(
                    x=[p.x for p in sel],
                    y=[p.y for p in sel],
                    mode="markers",
                    name=("paper (reported)" if paper else "scored here") if own else NOT_OWN_NAME,
                    legendgroup=fam,
                    legendgrouptitle_text=fam,
                    marker={
                        "color": COLOURS[fam],
                        "symbol": ("x" if paper else "circle") if own else "circle-x-open",
                        "size": (10 if paper else 11) if own else 15,
                        "line": {
                            "width": 0 if paper else (1 if own else 2),
                            "color": "white" if own else COLOURS[fam],
                        },
                    },
                    error_x=_errors(sel, "x"),
                    error_y=_errors(sel, "y"),
                    cliponaxis=False,
                    customdata=[
                        [
                            plot_text(p.system),
                            plot_text(group),
                            _interval(p.x_ci),
                            _interval(p.y_ci),
                            "<br>" + plot_text(p.fallbacks) if p.fallbacks else "",
                        ]
                        for p in sel
                    ],
                    hovertemplate=(
                        "<b>%{customdata[0]}</b> (%{customdata[1]})<br>"
                        "Recall@1 %{x:.3f} (%{customdata[2]})<br>"
                        + plot_text(y_label)
                        + " %{y:.3f} (%{customdata[3]})%{customdata[4]}<extra></extra>"
                    ),
                )
            )
    fig.update_layout(
        title={"text": plot_text(f"Three-Competency Gap ({pool} pool): accuracy vs {y_label}")},
        xaxis={"title": {"text": "Recall@1 (accuracy)"}, "range": axis_range(points, "x"), "zeroline": False},
        yaxis={"title": {"text": plot_text(y_label)}, "range": axis_range(points, "y"), "zeroline": False},
        height=540,
        margin={"l": 60, "r": 20, "t": 60, "b": 50},
        hovermode="closest",
        legend={
            "groupclick": "togglegroup",
            "itemclick": "toggle",
            "title": {"text": legend_title(rows, pool)},
        },
        template="plotly_white",
    )
    if not points:
        fig.add_annotation(
            text="no system has both values in this pool",
            x=0.5,
            y=0.5,
            xref="paper",
            yref="paper",
            showarrow=False,
        )
    return fig
