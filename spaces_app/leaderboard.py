"""Leaderboard rows -> the tables and the gap plot the app shows. Pure functions over rows.

Rows come from three places: the paper's reported numbers (reference rows: facts from the paper, not our
runs), the baseline runs (`trace-bench leaderboard` writes leaderboard.json) and the results store
(submissions). `collect_rows` reads them; everything else only transforms. Column labels come from
`trace_metrics.tables` (the paper's Tables 5, 6 and 9); data keys stay canonical metric ids.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Iterable, Sequence
from importlib.resources import files
from typing import Any

import pandas as pd

from trace_dataset.io import read_json
from trace_metrics.tables import OPEN_PREFIX, VIEWS, Column, header

log = logging.getLogger(__name__)

PAPER_SUFFIX = " (paper)"
FAMILIES: tuple[str, ...] = ("non-LLM", "LLM", "submitted")  # the family filter
SOURCE_LABELS = {"paper": "paper (reported)", "baseline": "run here", "submission": "submission"}
POOL_CHOICES: tuple[str, ...] = ("closed", "open")
GAP_METRICS = {"cgs": "CGS (grounding)", "rejection_recovery": "Rejection recovery"}
TEXT_COLUMNS: tuple[str, ...] = ("System", "Family", "Source")
TAIL_COLUMNS: tuple[str, ...] = ("Corpus version", "KB version", "Description")


def paper_rows() -> list[dict[str, Any]]:
    """The paper's own numbers (Tables 5, 6, 9) as labelled reference rows."""
    doc = json.loads(files("spaces_app").joinpath("paper_results.json").read_text(encoding="utf-8"))
    return [
        {
            "system": r["system"] + PAPER_SUFFIX,
            "family": r["family"],
            "source": "paper",
            "description": "Reported in the Trace paper, " + (
                r.get("note") or ("Tables 5, 6, 9 (its 10,000-dialogue corpus)" if r["pool"] == "closed"
                                  else "Table 6 (open-set R@1, 1,000 dialogues)")),
            "pool": r["pool"],
            "split": ("1,000-dialogue subset" if r.get("note") or r["pool"] == "open" else "all (10,000 dialogues)"),
            "corpus_version": doc["corpus_version"],
            "kb_version": doc["kb_version"],
            "metrics": r["metrics"],
        }
        for r in doc["rows"]
    ]


def baseline_rows(path) -> list[dict[str, Any]]:
    """Rows of a leaderboard.json; a missing file gives none (logged), a corrupt one is an error."""
    if path is None:
        return []
    if not path.exists():
        log.warning("baseline rows file %s not found (TRACE_SPACE_BASELINES); showing no baseline rows", path)
        return []
    rows = read_json(path)["rows"]
    for r in rows:
        if not r.get("description"):
            r["description"] = (f"`trace-bench run {r.get('baseline') or r['system']}` on the {r.get('split', '?')} "
                                f"split, scored by this package")
    return rows


def collect_rows(settings, store) -> list[dict[str, Any]]:
    """Every row the leaderboard shows: paper reference rows, baseline runs, stored submissions."""
    rows: list[dict[str, Any]] = paper_rows() if settings.show_paper_rows else []
    rows.extend(baseline_rows(settings.baselines_file))
    rows.extend(store.rows())
    return rows


def reserved_names(rows: Iterable[dict[str, Any]]) -> list[str]:
    """System names a submission may not take: every row that is not a submission."""
    return sorted({r["system"] for r in rows if r.get("source") != "submission"})


def family(row: dict[str, Any]) -> str:
    """non-LLM, LLM or submitted (the paper's reference rows keep the family of the system they report)."""
    return "submitted" if row.get("source") == "submission" else (row.get("family") or "non-LLM")


def view_columns(view: str) -> tuple[Column, ...]:
    if view not in VIEWS:
        raise ValueError(f"unknown view {view!r}; expected one of {tuple(VIEWS)}")
    return VIEWS[view]


def sort_choices(view: str) -> list[str]:
    """What the table can be sorted by: each metric column of the view, then the system name."""
    return [header(c) for c in view_columns(view)] + ["System"]


def frame_columns(view: str) -> list[str]:
    return [*TEXT_COLUMNS, *(header(c) for c in view_columns(view)), *TAIL_COLUMNS]


def frame_datatypes(view: str) -> list[str]:
    """Dataframe cell types: names and descriptions as plain text (never markdown or HTML), metrics as numbers."""
    return ["str"] * len(TEXT_COLUMNS) + ["number"] * len(view_columns(view)) + ["str"] * len(TAIL_COLUMNS)


def frame_widths(view: str) -> list[str]:
    """Column widths: narrow metric columns (their 'Axis: label' headers wrap at the space), wide text."""
    return ["190px", "85px", "150px", *(["105px"] * len(view_columns(view))), "125px", "125px", "420px"]


def leaderboard_frame(rows: Sequence[dict[str, Any]], view: str, pool: str = "closed",
                      families: Iterable[str] = FAMILIES, query: str = "", show_paper: bool = True,
                      sort_by: str | None = None, reverse: bool = False) -> pd.DataFrame:
    """The table of one view (Table 5/6/9 columns) for one pool.

    `families`: which of non-LLM / LLM / submitted to show (paper rows by their family too, and only with
    `show_paper`); `query`: case-insensitive text in the system name or description; `sort_by`: a column of
    `sort_choices(view)` (default the view's first metric), best first (A-Z for System) unless `reverse`.
    Missing values sort last either way.
    """
    columns = view_columns(view)
    if pool not in POOL_CHOICES:
        raise ValueError(f"unknown pool {pool!r}; expected one of {POOL_CHOICES}")
    wanted = set(families)
    unknown = wanted - set(FAMILIES)
    if unknown:
        raise ValueError(f"unknown families {sorted(unknown)}; expected some of {FAMILIES}")
    query = (query or "").strip().lower()
    open_rows = {(r["system"], r.get("source")): r for r in rows if r["pool"] == "open"}
    records = []
    for r in rows:
        if r["pool"] != pool or family(r) not in wanted:
            continue
        if r.get("source") == "paper" and not show_paper:
            continue
        if query and query not in r["system"].lower() and query not in (r.get("description") or "").lower():
            continue
        rec: dict[str, Any] = {"System": r["system"], "Family": family(r),
                               "Source": SOURCE_LABELS.get(r.get("source", ""), r.get("source", ""))}
        for c in columns:
            if c.metric.startswith(OPEN_PREFIX):
                other = open_rows.get((r["system"], r.get("source")))
                value = None if other is None else other["metrics"].get(c.metric[len(OPEN_PREFIX):])
            else:
                value = r["metrics"].get(c.metric)
            rec[header(c)] = None if value is None or not math.isfinite(value) else round(float(value), 3)
        rec["Corpus version"] = _short(r.get("corpus_version") or "")
        rec["KB version"] = _short(r.get("kb_version") or "")
        rec["Description"] = r.get("description") or ""
        records.append(rec)
    frame = pd.DataFrame.from_records(records, columns=frame_columns(view))
    for c in columns:
        frame[header(c)] = frame[header(c)].astype("float64")
    sort_by = sort_by or header(columns[0])
    if sort_by not in sort_choices(view):
        raise ValueError(f"cannot sort {view!r} by {sort_by!r}; expected one of {sort_choices(view)}")
    column = next((c for c in columns if header(c) == sort_by), None)
    descending = column.higher_is_better if column is not None else False
    if reverse:
        descending = not descending
    if sort_by == "System":
        frame = frame.sort_values("System", key=lambda s: s.str.lower(), ascending=not descending, kind="stable")
    else:
        frame = frame.sort_values(sort_by, ascending=not descending, na_position="last", kind="stable")
    return frame.reset_index(drop=True)


def _short(version: str) -> str:
    return version[:12] if len(version) == 64 else version


def gap_group(row: dict[str, Any]) -> str:
    """Plot legend group: the family, with " (paper)" for the paper's reference rows."""
    return family(row) + (PAPER_SUFFIX if row.get("source") == "paper" else "")


GAP_GROUPS: tuple[str, ...] = (*FAMILIES, *(f + PAPER_SUFFIX for f in FAMILIES[:2]))


def gap_points(rows: Sequence[dict[str, Any]], pool: str, y_metric: str) -> list[tuple[str, str, float, float]]:
    """(system, legend group, R@1, y) for every row of `pool` that has both values."""
    out = []
    for r in rows:
        if r["pool"] != pool:
            continue
        x, y = r["metrics"].get("recall@1"), r["metrics"].get(y_metric)
        if x is not None and y is not None and math.isfinite(x) and math.isfinite(y):
            out.append((r["system"], gap_group(r), float(x), float(y)))
    return out


def gap_figure(rows: Sequence[dict[str, Any]], pool: str = "closed", y_metric: str = "cgs"):
    """The Three-Competency Gap scatter (paper Figure 2): R@1 against CGS or rejection recovery.

    Colour = family (non-LLM, LLM, submitted); filled circles = scored here, crosses = the paper's numbers.
    """
    if y_metric not in GAP_METRICS:
        raise ValueError(f"unknown gap metric {y_metric!r}; expected one of {tuple(GAP_METRICS)}")
    from matplotlib.figure import Figure  # no pyplot: no global figure registry, safe in server threads

    colours = {"non-LLM": "#1f77b4", "LLM": "#d62728", "submitted": "#2ca02c"}
    fig = Figure(figsize=(7.5, 5.0), dpi=100)
    ax = fig.add_subplot()
    points = gap_points(rows, pool, y_metric)
    for group in GAP_GROUPS:
        sel = [p for p in points if p[1] == group]
        if sel:
            paper = group.endswith(PAPER_SUFFIX)
            ax.scatter([p[2] for p in sel], [p[3] for p in sel], c=colours[group.removesuffix(PAPER_SUFFIX)],
                       marker="x" if paper else "o", label=group, s=40 if paper else 45)
    for name, _, x, y in points:
        ax.annotate(name, (x, y), fontsize=7, xytext=(3, 3), textcoords="offset points")
    ax.set_xlabel("Recall@1 (accuracy)")
    ax.set_ylabel(GAP_METRICS[y_metric])
    ax.set_title(f"Three-Competency Gap ({pool} pool): accuracy vs {GAP_METRICS[y_metric].lower()}")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.05)
    ax.grid(alpha=0.3)
    if points:
        ax.legend(loc="lower right", fontsize=8)
    else:
        ax.text(0.5, 0.5, "no system has both values in this pool", ha="center", va="center",
                transform=ax.transAxes)
    fig.tight_layout()
    return fig
