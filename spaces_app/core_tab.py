"""The Space's CoRE tab: CoRE's ratings of the systems (every `trace-bench core score --out` folder under the
settings' `core_dirs`, TRACE_SPACE_CORE: the demo's opt-in LLM step writes OUT/core/NAME), and, when a
meta-evaluation result is named (`trace-bench core meta --out FILE`, TRACE_SPACE_CORE_META), their agreement
with human ratings: the per-factor table (with the CoRE paper's GPT-4o-mini QWK as reference), the overall and
system-ranking agreement, and the two plots of `trace_metrics.core.plots`.

Where a reliability report sits beside a run (`trace-bench core reliability`, RUN/reliability/), each factor's
mean shows its verdict ("reliable", "usable with care", "not reliable"), with the figures on hover.

A part with nothing to show says in one line which command fills it (never an empty table or plot). Ratings
that are missing (a reply that never parsed, a debate that failed) are counted beside each system's means.
Everything read from the files is data: tables are HTML written here with every text escaped, the plots
draw no text from the file. The files are read by pure functions on every page load and Reload, so a run made
while the app serves shows up without a restart.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from spaces_app.board_html import Field, Heading, data_table
from trace_metrics.tables import format_value

log = logging.getLogger(__name__)

INTRO = (
    "### CoRE: an LLM's ratings of each conversation, and how far to trust them\n"
    "CoRE (Chen et al., 2026) rates each conversation on twelve user-centric factors (0-4) and debates an "
    "overall score (0-100). The first table shows CoRE's ratings of each system's conversations; the second part "
    "compares such ratings with human ratings of the same logs: quadratic weighted kappa over the labels 0-4, "
    "Spearman and Kendall tau_b per factor, the debate's overall score, factor coupling and the agreement of "
    "system rankings. Reference: the paper's GPT-4o-mini reached QWK 0.20-0.73 per factor and Spearman 0.698 "
    "for the debated overall score on movie dialogues (not Trace)."
)
NO_SCORES = (
    "No CoRE ratings yet. `bash scripts/demo.sh --baselines all,llm` rates conversations with the packaged "
    "model (OUT/core); for a run of yours: `trace-bench core score --data DIR --predictions RUN.jsonl "
    "--out runs/core/NAME --llm SPEC`. They show here on a page load or Reload."
)
NO_META = (
    "No agreement with human ratings: `trace-bench core meta --scores runs/core/NAME/scores.jsonl --human "
    "human.jsonl --out meta.json` computes it (human ratings: `trace-bench core human`, docs/core.md); serve "
    "it with `trace-bench serve --core-meta meta.json` (TRACE_SPACE_CORE_META)."
)
FRAME_COLUMNS = ("Factor", "n", "CoRE missing", "QWK", "Spearman", "Kendall tau_b", "Paper QWK (GPT-4o-mini)")


# ---------------------------------------------------------------------------------------------------
# CoRE's ratings of the systems (`core score` folders)
# ---------------------------------------------------------------------------------------------------
def find_scored(roots: Sequence[Path]) -> list[Path]:
    """`core score --out` folders (holding summary.json) in or at most one level under each root, sorted."""
    from trace_metrics.core.runner import SUMMARY_FILE

    found: list[Path] = []
    for root in roots:
        if root.is_dir():
            found += sorted(
                {p.parent for pattern in (SUMMARY_FILE, f"*/{SUMMARY_FILE}") for p in root.glob(pattern)}
            )
    return list(dict.fromkeys(found))


def scored_rows(roots: Sequence[Path]) -> list[dict[str, Any]]:
    """One row per `core score` folder: system (the leaderboard's name of a baseline), model, logs, factor means,
    overall, missing ratings and failed debates (unreadable folders are skipped, logged)."""
    from baselines.identity import label
    from trace_dataset.io import TraceDataError, read_json
    from trace_metrics.core.runner import SUMMARY_FILE

    rows = []
    for folder in find_scored(roots):
        try:
            s = read_json(folder / SUMMARY_FILE)
            if not isinstance(s, dict) or not isinstance(s.get("factors"), dict):
                raise TraceDataError(
                    "not the summary.json of `trace-bench core score`", path=folder / SUMMARY_FILE
                )
            identity = s.get("identity") or {}
            source, llm = identity.get("source") or {}, identity.get("llm") or {}
            system = str(source.get("system") or folder.name)
            rows.append(
                {
                    "system": label(system),
                    "model": str(llm.get("model") or ""),
                    "folder": folder,
                    "logs": int(s.get("n_logs", 0)),
                    "factors": s["factors"],
                    "factor_mean": (s.get("factor_mean") or {}).get("mean"),
                    "overall": s.get("overall"),
                    "ratings": s.get("ratings") or {},
                    "verdicts": _verdicts(folder),
                }
            )
        except (TraceDataError, OSError, TypeError, ValueError) as e:
            log.warning("CoRE tab: skipping %s: %s", folder, e)
    return rows


def column_names(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """A heading per row: the system, with its folder's name where two rows rate the same system (two columns of
    one label told nothing apart), the whole folder where even those are alike."""
    from collections import Counter

    systems = Counter(r["system"] for r in rows)
    names = [f"{r['system']} ({r['folder'].name})" if systems[r["system"]] > 1 else r["system"] for r in rows]
    again = Counter(names)
    return [
        f"{r['system']} ({r['folder'].as_posix()})" if again[n] > 1 else n
        for r, n in zip(rows, names, strict=True)
    ]


def _short(model: str) -> str:
    return model.rstrip("/").rsplit("/", 1)[-1]


def scores_html(rows: Sequence[Mapping[str, Any]]) -> str:
    """The systems' table (means and what is missing) and the per-factor means (factors x systems)."""
    from spaces_app.markup import esc
    from trace_metrics.core.prompts import FACTOR_IDS
    from trace_metrics.core.report import MISSING_NOTE

    headings = [
        Heading("System"),
        Heading("Judge model"),
        Heading("Logs", numeric=True),
        Heading("Factor mean (0-4)", "mean of the rated factors per log, averaged", True),
        Heading("Overall (0-100)", "the debate's score, mean over logs", True),
        Heading("Missing ratings", "factor ratings that never parsed / all factor ratings", True),
        Heading("Failed debates", "logs whose debate gave no overall score / logs debated", True),
        Heading("Folder"),
    ]
    body, marked = [], False
    for r in rows:
        ratings, overall = r["ratings"], r["overall"] or {}
        total, missing = ratings.get("total", 0), ratings.get("missing", 0)
        share = f" ({100 * missing / total:.0f}%)" if total else ""
        over = _over(missing, total - missing)
        marked |= over
        body.append(
            [
                Field(r["system"]),
                Field(_short(r["model"]), r["model"]),
                Field(str(r["logs"])),
                Field(format_value(r["factor_mean"], missing="")),
                Field(format_value(overall.get("mean"), 1, missing="")),
                Field(
                    f"{missing} of {total}{share}" + (" †" if over else ""),
                    ", ".join(f"{k}: {v}" for k, v in (ratings.get("by_status") or {}).items()),
                ),
                Field(f"{overall.get('n_failed', 0)} of {r['logs']}" if overall else ""),
                Field(r["folder"].as_posix()),
            ]
        )
    factors = [f for f in FACTOR_IDS if any(f in r["factors"] for r in rows)]
    per_factor = [
        [Field(f), *(_factor_field(r["factors"].get(f), (r.get("verdicts") or {}).get(f)) for r in rows)]
        for f in factors
    ]
    marked |= any(field.text.endswith(" †") for line in per_factor for field in line)
    return (
        data_table(headings, body, elem_class="trace-core-systems")
        + "<h4>Per factor: CoRE's mean rating (0-4); hover for how many logs were rated and missing</h4>"
        + data_table(
            [Heading("Factor"), *(Heading(name, numeric=True) for name in column_names(rows))],
            per_factor,
            elem_class="trace-core-factors",
        )
        + (f"<p>{esc(MISSING_NOTE)}</p>" if marked else "")
    )


def _over(missing: int, rated: int) -> bool:
    """More than NOT_OWN_SHARE of the ratings missing (CoRE's own rule, `core score`'s table)."""
    from trace_metrics.core.report import missing_cell

    return missing_cell(missing, rated)[1]


def _verdicts(folder: Path) -> dict[str, dict[str, Any]] | None:
    """The reliability verdicts of a run (`trace-bench core reliability`, its reliability/ folder), if any."""
    from trace_dataset.io import TraceDataError
    from trace_metrics.core.reliability import read_verdicts

    try:
        return read_verdicts(folder)
    except (TraceDataError, OSError, KeyError, TypeError, ValueError) as e:
        log.warning("CoRE tab: no reliability verdicts for %s: %s", folder, e)
        return None


def _factor_field(stats: Mapping[str, Any] | None, verdict: Mapping[str, Any] | None = None) -> Field:
    """A factor's mean; with a reliability report beside the run, its verdict too (hover: the figures)."""
    if not stats:
        return Field("")
    n, missing = stats.get("n", 0), stats.get("n_missing", 0)
    text = format_value(stats.get("mean"), missing="-") + (" †" if _over(missing, n) else "")
    title = f"rated {n}, missing {missing}"
    if verdict:
        text += f" · {verdict.get('verdict') or 'not measured'}"
        title += f"; reliability: {verdict.get('title')}"
    return Field(text, title)


# ---------------------------------------------------------------------------------------------------
# Agreement with human ratings (`core meta` result)
# ---------------------------------------------------------------------------------------------------
def load_meta(path: Path | None) -> tuple[dict[str, Any] | None, str]:
    """(result, status message); result is None when there is nothing to show, the message says why."""
    from trace_dataset.io import TraceDataError, read_json

    if path is None:
        return None, NO_META
    try:
        result = read_json(path)
        if not isinstance(result, dict) or not isinstance(result.get("factors"), dict):
            raise TraceDataError("not a CoRE meta-evaluation result (no 'factors')", path=path)
    except (TraceDataError, OSError) as e:
        log.warning("CoRE tab: %s", e)
        return None, f"Cannot show the CoRE meta-evaluation: {e}"
    n = result.get("n", {})
    return result, f"{n.get('shared_logs', '?')} conversation logs rated by both CoRE and humans."


def _round(x: Any) -> float | None:
    return None if x is None else round(float(x), 3)


def agreement_frame(result: Mapping[str, Any]):
    """One row per factor, then pooled and the two overall rows (values as numbers, names as plain strings)."""
    import pandas as pd

    from trace_metrics.core.plots import REFERENCE_MODEL, paper_reference

    reference = paper_reference()["qwk_table22"][REFERENCE_MODEL]
    rows = []
    for factor, s in result["factors"].items():
        rows.append(
            [
                str(factor),
                s.get("n"),
                s.get("n_missing_core"),
                _round(s.get("qwk")),
                _round(s.get("spearman")),
                _round(s.get("kendall_tau_b")),
                reference.get(factor),
            ]
        )
    pooled = result.get("pooled") or {}
    rows.append(
        [
            "pooled (all factors)",
            pooled.get("n"),
            None,
            _round(pooled.get("qwk")),
            _round(pooled.get("spearman")),
            _round(pooled.get("kendall_tau_b")),
            None,
        ]
    )
    for name, label in (
        ("multi_agent", "overall: debate (paper 0.698 / 0.538)"),
        ("factor_mean", "overall: factor mean"),
    ):
        s = (result.get("overall") or {}).get(name) or {}
        rows.append(
            [
                label,
                s.get("n"),
                s.get("n_missing_core"),
                None,
                _round(s.get("spearman")),
                _round(s.get("kendall_tau_b")),
                None,
            ]
        )
    return pd.DataFrame(rows, columns=list(FRAME_COLUMNS))


def ranking_frame(result: Mapping[str, Any]):
    """System means (CoRE overall and human overall) and the Kendall tau_b between the two orderings."""
    import pandas as pd

    rank = (result.get("ranking") or {}).get("overall") or {}
    rows = [
        [
            str(s),
            _round(rank.get("core_means", {}).get(s)),
            _round(rank.get("human_means", {}).get(s)),
            rank.get("n_logs", {}).get(s),
        ]
        for s in rank.get("systems", [])
    ]
    return pd.DataFrame(rows, columns=["System", "CoRE overall (mean)", "Human overall (mean)", "Logs"])


def frame_html(frame, digits: Mapping[str, int], elem_class: str) -> str:
    """A frame of numbers and names as a data table: each numeric column in its one format (`digits`; 0 for
    counts), empty where missing."""
    import math

    def cell(column: str, value: Any) -> Field:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return Field("")
        if column in digits:
            return Field(format_value(value, digits[column]) if digits[column] else str(int(value)))
        return Field(str(value))

    headings = [Heading(str(c), numeric=c in digits) for c in frame.columns]
    rows = [
        [cell(c, v) for c, v in zip(frame.columns, values, strict=True)]
        for values in frame.itertuples(index=False)
    ]
    return data_table(headings, rows, elem_class=elem_class, drop_empty=False)


def meta_view(result: dict[str, Any]) -> tuple[str, str, Any, Any]:
    """(agreement table, ranking part, coupling figure, agreement figure) of a meta-evaluation result."""
    from trace_metrics.core.plots import agreement_figure, coupling_figure

    rank = (result.get("ranking") or {}).get("overall") or {}
    tau = rank.get("kendall_tau_b")
    digits = {
        "n": 0,
        "CoRE missing": 0,
        "QWK": 3,
        "Spearman": 3,
        "Kendall tau_b": 3,
        "Paper QWK (GPT-4o-mini)": 3,
    }
    table = frame_html(agreement_frame(result), digits, "trace-core-agreement")
    ranking = (
        f"<p>System ranking agreement (overall, Kendall tau_b): {format_value(tau, missing='n/a')}</p>"
        + frame_html(
            ranking_frame(result),
            {"CoRE overall (mean)": 3, "Human overall (mean)": 3, "Logs": 0},
            "trace-core-ranking",
        )
    )
    return table, ranking, coupling_figure(result), agreement_figure(result)


def line_html(text: str) -> str:
    """One line of text as HTML, its `backquoted` parts as code (everything escaped)."""
    from spaces_app.markup import esc

    parts = str(text).split("`")
    return (
        "<p>" + "".join(f"<code>{esc(p)}</code>" if i % 2 else esc(p) for i, p in enumerate(parts)) + "</p>"
    )


def core_view(gr, core_dirs: Sequence[Path], meta_path: Path | None) -> tuple:
    """The updates of the tab's components (`build_core_tab`'s order) for the files as they are now."""
    rows = scored_rows(core_dirs)
    result, message = load_meta(meta_path)
    have = result is not None
    table, ranking, coupling_fig, agreement_fig = (
        meta_view(result) if result is not None else ("", "", None, None)
    )
    return (
        gr.update(value=scores_html(rows) if rows else line_html(NO_SCORES)),
        gr.update(value=line_html(message)),
        gr.update(value=table, visible=have),
        gr.update(value=agreement_fig, visible=have),
        gr.update(value=coupling_fig, visible=have),
        gr.update(value=ranking, visible=have),
    )


def build_core_tab(gr, core_dirs: Sequence[Path], meta_path: Path | None, on_load) -> None:
    """Add the tab's components to the open `gr.Tab` context; `on_load(fn, inputs, outputs)` registers the
    reader for page loads (`AppContext.on_load`), the Reload button reruns it."""
    gr.Markdown(INTRO)
    scores = gr.HTML(elem_id="core-scores")
    gr.Markdown("#### Agreement with human ratings")
    status = gr.HTML(elem_id="core-status")
    table = gr.HTML(elem_id="core-agreement", visible=False)
    agreement = gr.Plot(
        label="Per-factor agreement", format="png", elem_id="core-agreement-plot", visible=False
    )
    coupling = gr.Plot(
        label="Factor coupling (Kendall tau_b)", format="png", elem_id="core-coupling-plot", visible=False
    )
    ranking = gr.HTML(elem_id="core-ranking", visible=False)
    refresh = gr.Button("Reload", scale=0, elem_id="core-refresh")
    outputs = [scores, status, table, agreement, coupling, ranking]

    def view():
        return core_view(gr, core_dirs, meta_path)

    refresh.click(view, None, outputs)
    on_load(view, [], outputs)


def core_tab(ctx: Any) -> None:
    """The tab builder (`spaces_app.app.tab_specs`): the settings' CoRE folders and meta-evaluation file."""
    import gradio as gr

    build_core_tab(gr, ctx.settings.core_dirs, ctx.settings.core_meta, ctx.on_load)
