"""The leaderboard table as HTML: every row on the page (no inner scroll box), one number format, intervals
and best-row marks, notes next to the systems that need one.

A plain HTML table rather than gr.Dataframe because every cell needs a hover text (its 95% interval) and a
mark (not significantly different from the best, after Holm's correction), and the rank column its bootstrap
interval, which a data grid cannot carry; sorting and filtering stay
on the controls above the table. Every text from data goes through `markup.esc` and sits in a <bdi>, so a
name shows as the characters it is made of and cannot reorder its neighbours.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from spaces_app.accountability import shown_count
from spaces_app.blind import Period
from spaces_app.leaderboard import (
    SOURCE_LABELS,
    Cell,
    Line,
    Rank,
    corpus_heading,
    corpus_of,
    family,
    short_version,
    system_note,
    view_columns,
)
from spaces_app.markup import esc
from trace_harness import fallbacks as fb
from trace_harness.leaderboard.marks import marks_description
from trace_harness.leaderboard.reproduction import VERDICTS, ManifestError, check_manifest
from trace_metrics.tables import Column, format_value, header

NOTE_MARKS = ("†", "‡", "§", "¶")
CI_LABEL = "95% cluster-bootstrap interval (dialogues resampled)"
BEST_LABEL = "best, or not significantly different from the best (paired bootstrap, corrected)"
RANK_LABEL = (
    "rank among the rows scored here (1 + the rows ahead of it), with its 95% bootstrap interval: the ranks "
    "recomputed on every resample of the dialogues"
)
CSS = """
.trace-board-wrap {overflow-x: auto; max-width: 100%;}
.trace-board-wrap table.trace-board {border-collapse: collapse; width: 100%; table-layout: auto; margin: 0;
  font-size: 0.86rem; line-height: 1.3; color: var(--body-text-color);}
.trace-board-wrap table.trace-board th, .trace-board-wrap table.trace-board td {border: none !important;
  border-bottom: 1px solid var(--border-color-primary) !important; padding: 4px 6px !important;
  vertical-align: top; text-align: left; word-break: normal; overflow-wrap: normal;}
.trace-board-wrap table.trace-board thead th {position: sticky; top: 0; z-index: 1; font-weight: 600;
  background: var(--background-fill-secondary);}
.trace-board-wrap tr.trace-groups th {text-align: center; font-size: 0.75rem; color: var(--body-text-color-subdued);}
.trace-board-wrap .w {white-space: nowrap;}
.trace-board-wrap table.trace-board.data {font-size: 0.8rem;}
.trace-board-wrap table.trace-board.data th {font-size: 0.76rem; vertical-align: bottom;}
.trace-board-wrap table.trace-board.data th.num, .trace-board-wrap table.trace-board.data td.num {text-align: right;
  font-variant-numeric: tabular-nums;}
.trace-board-wrap table.trace-board.data td.num {white-space: nowrap;}
.trace-board-wrap table.trace-board.data tr.not-own td.num {opacity: 0.55; text-decoration: line-through;}
.trace-board-wrap table.trace-board .sys {min-width: 8rem; max-width: 14rem; font-weight: 600;}
.trace-board-wrap table.trace-board .fam, .trace-board-wrap table.trace-board td.metric {white-space: nowrap;}
.trace-board-wrap table.trace-board .src {min-width: 4.5rem; max-width: 7rem;}
.trace-board-wrap table.trace-board .rank {text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums;
  cursor: help;}
.trace-board-wrap table.trace-board th.metric {min-width: 3.4rem; text-align: right; white-space: nowrap;}
.trace-board-wrap table.trace-board th {hyphens: manual; word-break: keep-all;}
.trace-board-wrap table.trace-board td.metric {text-align: right; font-variant-numeric: tabular-nums;}
.trace-board-wrap table.trace-board td.metric.best {font-weight: 700; background: var(--color-accent-soft);}
.trace-board-wrap table.trace-board .ci {display: block; font-size: 0.7rem; font-weight: 400; color: var(--body-text-color-subdued);}
.trace-board-wrap table.trace-board .ver {min-width: 6.5rem; max-width: 8rem; font-size: 0.72rem; overflow-wrap: anywhere;}
.trace-board-wrap table.trace-board td.ver .hash {font-family: var(--font-mono);}
.trace-board-wrap table.trace-board .desc {min-width: 10rem; overflow-wrap: anywhere; font-size: 0.8rem;}
.trace-board-wrap table.trace-board sup.trace-note {cursor: help; color: var(--color-accent); font-weight: 700;}
.trace-board-wrap table.trace-board tr.trace-corpus th {text-align: left; font-weight: 600; padding: 8px 6px 4px !important;}
.trace-board-wrap table.trace-board td.trace-empty {text-align: center; font-style: italic; padding: 12px !important;}
.trace-board-wrap table.trace-board .trace-fb {display: inline-block; margin-left: 4px; padding: 0 4px; cursor: help;
  font-size: 0.72rem; font-weight: 600; white-space: nowrap; border-radius: 3px; color: #8a4b00;
  background: #fff1d6;}
.trace-board-wrap table.trace-board .trace-fb.not-own {color: #fff; background: #b42318;}
.trace-board-wrap table.trace-board tr.not-own td.metric {opacity: 0.55; text-decoration: line-through;
  text-decoration-color: rgba(180, 35, 24, 0.5);}
.trace-board-notes {font-size: 0.8rem; margin-top: 6px;}
.trace-period {font-size: 0.85rem; margin: 4px 0 8px;}
.trace-board-wrap table.trace-board .trace-count {font-size: 0.72rem; cursor: help; white-space: nowrap;}
.trace-board-wrap table.trace-board .trace-verdict {font-size: 0.72rem; cursor: help;}
.trace-board-wrap table.trace-board .trace-manifest {font-size: 0.72rem;}
"""
COUNT_LABEL = "submissions its owner made to this track and period (every stored version counts)"
BLIND_LABEL = (
    "A blind track: other dialogues than the public split's, drawn by the same generator, so its rows are "
    "ranked on their own, never with the public track's; they keep no per-dialogue data, so they carry "
    "intervals but no best marks or ranks."
)
ONE_DIALOGUE_LABEL = (
    "Warning: a row scored on one dialogue has no interval and no mark (resampling one "
    "dialogue has no variance; any difference would look significant)."
)
FALLBACK_LABEL = (
    "fb N%: share of the run's system turns that fell back or failed (hover it for what and how "
    f"often); red, values struck through: over {fb.share_text(fb.NOT_OWN_SHARE)} of its answers were not "
    "its own, not the system's own result (no best mark)"
)


def words(text: str) -> str:
    """`text` escaped, each word kept whole (a line may break between words only: never inside BLEU-4 or a
    label such as Knowledge-Enh.)."""
    return " ".join(f'<span class="w">{esc(w)}</span>' for w in str(text).split(" "))


def render_board(
    lines: Sequence[Line],
    view: str,
    show_ci: bool = False,
    counted: Sequence[dict] = (),
    period: Period | None = None,
) -> str:
    """The table of `lines` (spaces_app.leaderboard.board_lines) for `view`; `show_ci` prints each interval
    under its value (it is always the cell's hover text). `counted`: every stored row, which a submission's
    count of its owner's submissions reads (spaces_app.accountability); `period`: the blind period shown."""
    columns = view_columns(view)
    counted = counted or [line.row for line in lines]
    notes: dict[str, str] = {}  # note text -> its mark
    body = []
    groups = {corpus_of(line.row) for line in lines}
    group = None
    for line in lines:
        if len(groups) > 1 and corpus_of(line.row) != group:  # one heading per corpus, once there are two
            group = corpus_of(line.row)
            body.append(
                f'<tr class="trace-corpus"><th colspan="{5 + len(columns)}">'
                f"{esc(corpus_heading(line.row))}</th></tr>"
            )
        note = system_note(line.row)
        if note is not None and note not in notes:
            notes[note] = NOTE_MARKS[len(notes) % len(NOTE_MARKS)]
        count = shown_count(line.row, counted)
        body.append(_row_html(line, columns, notes.get(note) if note else None, note, show_ci, count))
    if not body:
        width = 6 + len(columns)
        body.append(
            f'<tr><td class="trace-empty" colspan="{width}">No system matches these filters.</td></tr>'
        )
    parts = [
        f"<style>{CSS}</style>",
        period_banner(period),
        '<div class="trace-board-wrap">',
        f'<table class="trace-board" data-view="{esc(view)}">',
        _head_html(columns),
        "<tbody>",
        *body,
        "</tbody></table></div>",
    ]
    foot = [f"<b>{mark}</b> {esc(text)}" for text, mark in notes.items()]
    if any(c.low is not None for line in lines for c in line.cells):
        foot.append(f"Hover a value for its {CI_LABEL}" + ("; shown under each value." if show_ci else "."))
    if any(c.tied_best for line in lines for c in line.cells):
        how = marks_description([line.row for line in lines])
        foot.append(
            f"<b>Bold, shaded</b>: {BEST_LABEL}, among the rows scored here"
            + (f": {esc(how)}." if how else ".")
        )
    ranked = next((line.rank for line in lines if line.rank is not None), None)
    if ranked is not None:
        foot.append(f"Rank: on {esc(ranked.metric)}, {esc(RANK_LABEL)} (hover it, or show the intervals).")
    if any(fb.mark(line.row) for line in lines):
        foot.append(esc(FALLBACK_LABEL))
    if any((line.row.get("per_dialogue") or {}).get("n_dialogues") == 1 for line in lines):
        foot.append(esc(ONE_DIALOGUE_LABEL))
    if foot:
        parts.append('<div class="trace-board-notes">' + "<br>".join(foot) + "</div>")
    return "".join(parts)


def _head_html(columns: Sequence[Column]) -> str:
    groups: list[list] = []
    for c in columns:
        if groups and groups[-1][0] == c.group:
            groups[-1][1] += 1
        else:
            groups.append([c.group, 1])
    top = "".join(f'<th colspan="{n}" class="grp">{esc(g)}</th>' for g, n in groups)
    names = "".join(
        f'<th class="metric" data-column="{esc(header(c))}" title="{esc(header(c))} ({esc(c.metric)}; '
        f'{"higher" if c.higher_is_better else "lower"} is better)">{esc(c.label)}&nbsp;'
        f"{'↑' if c.higher_is_better else '↓'}</th>"
        for c in columns
    )
    return (
        '<thead><tr class="trace-groups"><th colspan="4"></th>' + top + '<th colspan="2"></th></tr>'
        f'<tr><th class="rank" title="{esc(RANK_LABEL)}">Rank</th>'
        '<th class="sys">System</th><th class="fam">Family</th><th class="src">Source</th>'
        + names
        + '<th class="ver">Versions</th><th class="desc">Description</th></tr></thead>'
    )


def period_banner(period: Period | None) -> str:
    """What the board says above a blind period's rows ("" for the public track)."""
    if period is None:
        return ""
    state = {
        "open": "open: submissions are scored against its hidden gold",
        "closed": "closed: its rows are frozen and it takes no new submission",
        "published": "published: its rows are frozen and its gold may be published",
    }[period.state]
    return (
        f'<div class="trace-period" data-period="{esc(period.name)}" data-state="{esc(period.state)}">'
        f"<b>Blind period {esc(period.name)}</b>, {esc(state)}. {esc(BLIND_LABEL)}</div>"
    )


def accountability_html(row: dict, count: int | None) -> str:
    """A submission's count of its owner's submissions to the track and period, its manifest and verdict."""
    if count is None:
        return ""
    out = f' <span class="trace-count" data-submissions="{count}" title="{esc(COUNT_LABEL)}">{count}×</span>'
    verdict = row.get("reproduction")
    if isinstance(verdict, dict) and verdict.get("status") in VERDICTS:
        out += (
            f'<div class="trace-verdict" data-reproduction="{esc(verdict["status"])}" '
            f'title="{esc(verdict.get("reason") or "")}">{esc(verdict["status"])}</div>'
        )
    return out


def manifest_html(row: dict) -> str:
    """The row's manifest (model ids and revisions, decoding settings, engines, prompt hashes) as details."""
    try:
        summary = check_manifest(row.get("manifest"))
    except ManifestError:
        return ""
    items = [f"system {summary['system']}, trace-bench {summary['package']}, {summary['mode']}"]
    for role, m in summary["models"].items():
        settings = ", ".join(f"{k}={v}" for k, v in m["settings"].items())
        items.append(f"{role}: {m['model']} (revision {m['revision']}; {m['engine']}; {settings})")
    items += [f"prompt {name}: sha256 {digest[:12]}" for name, digest in summary["prompts"].items()]
    lis = "".join(f"<li><bdi>{esc(i)}</bdi></li>" for i in items)
    return f'<details class="trace-manifest"><summary>manifest</summary><ul>{lis}</ul></details>'


def _row_html(
    line: Line,
    columns: Sequence[Column],
    mark: str | None,
    note: str | None,
    show_ci: bool,
    count: int | None = None,
) -> str:
    r = line.row
    name = f"<bdi>{words(r['system'])}</bdi>"
    if mark is not None:
        name += f' <sup class="trace-note" title="{esc(note)}">{mark}</sup>'
    own = fb.own_result(r)
    name += fallback_markup(r)
    source = SOURCE_LABELS.get(r.get("source") or "", r.get("source") or "")
    owner = r.get("owner")
    if r.get("source") == "submission" and isinstance(owner, dict) and owner.get("kind") == "hf":
        source += f" by @{owner.get('user')}"
    cells = "".join(_cell_html(c, cell, show_ci) for c, cell in zip(columns, line.cells, strict=True))
    versions = f"{_version_html(r, 'corpus')}<br>{_version_html(r, 'kb')}"
    row_class = "" if own else ' class="not-own"'
    return (
        f'<tr data-system="{esc(r["system"])}"{row_class}>{_rank_html(line.rank, show_ci)}'
        f'<td class="sys">{name}</td><td class="fam">{esc(family(r))}</td>'
        f'<td class="src"><bdi>{esc(source)}</bdi>{accountability_html(r, count)}</td>{cells}'
        f'<td class="ver">{versions}</td>'
        f'<td class="desc"><bdi>{esc(r.get("description") or "")}</bdi>{manifest_html(r)}</td></tr>'
    )


def _rank_html(rank: Rank | None, show_ci: bool) -> str:
    """The rank cell: the rank on the sorted column, its bootstrap interval in the hover text (and under it
    with `show_ci`); empty for a row without one (the paper's rows, a row that is not its own result)."""
    if rank is None:
        return '<td class="rank" title="no rank: not compared here"></td>'
    title = f"Rank {rank.rank} on {rank.metric}"
    interval = ""
    if rank.low is not None and rank.high is not None:
        interval = f"{rank.low}–{rank.high}"
        title += f"; 95% bootstrap interval {interval} (ranks recomputed on every resample of the dialogues)"
    shown = f'<span class="ci">{interval}</span>' if show_ci and interval else ""
    return f'<td class="rank" data-rank="{rank.rank}" title="{esc(title)}">{rank.rank}{shown}</td>'


def _cell_html(column: Column, cell: Cell, show_ci: bool) -> str:
    if cell.value is None:
        return (
            f'<td class="metric" data-column="{esc(header(column))}" title="not reported / not scored"></td>'
        )
    title = [f"{column.label} {cell.text()}"]
    interval = ""
    if cell.low is not None and cell.high is not None:
        title.append(f"{CI_LABEL}: {format_value(cell.low)} to {format_value(cell.high)}")
        interval = f"{format_value(cell.low)}–{format_value(cell.high)}"
    if cell.tied_best:
        title.append(BEST_LABEL)
    classes = "metric best" if cell.tied_best else "metric"
    shown = f'<span class="ci">{interval}</span>' if show_ci and interval else ""
    return (
        f'<td class="{classes}" data-column="{esc(header(column))}" data-value="{cell.value!r}" '
        f'title="{esc(". ".join(title))}">{cell.text()}{shown}</td>'
    )


def _version_html(row: dict, what: str) -> str:
    """A SHA-256 version as its first 12 hex digits (the full value in the hover text); the paper's rows,
    whose versions are descriptions, say "paper" (the description in the hover text)."""
    full = row.get(f"{what}_version") or ""
    label = "corpus" if what == "corpus" else "knowledge base"
    if row.get("source") == "paper":
        shown, cls = f"paper {'corpus' if what == 'corpus' else 'KB'}", "text"
    else:
        shown, cls = short_version(full) or "-", "hash"
    return f'<span class="{cls}" title="{label} version: {esc(full)}">{esc(shown)}</span>'


# ---------------------------------------------------------------------------------------------------
# Plain data tables (the Interactive and CoRE tabs): the leaderboard's look, one format per column
# ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Field:
    """One cell of `data_table`: text (escaped here), an optional hover text, and `markup`, HTML written by the
    app (already escaped) shown after the text."""

    text: str = ""
    title: str = ""
    markup: str = ""


@dataclass(frozen=True)
class Heading:
    label: str
    title: str = ""
    numeric: bool = False  # right-aligned, tabular figures


def data_table(
    headings: Sequence[Heading],
    rows: Sequence[Sequence[Field]],
    *,
    elem_class: str = "",
    drop_empty: bool = True,
    row_classes: Sequence[str] = (),
) -> str:
    """An HTML table in the leaderboard's style: headers wrap between words only, numbers right-aligned in
    tabular figures; with `drop_empty`, a column empty in every row is left out (never an always-empty
    column). Every text is escaped."""
    keep = [
        i
        for i in range(len(headings))
        if not drop_empty or not rows or any(r[i].text or r[i].markup for r in rows)
    ]

    def cls(i: int) -> str:
        return "num" if headings[i].numeric else "txt"

    head = "".join(
        f'<th class="{cls(i)}" title="{esc(headings[i].title)}">{words(headings[i].label)}</th>' for i in keep
    )
    body = []
    for n, r in enumerate(rows):
        row_class = f' class="{esc(row_classes[n])}"' if n < len(row_classes) and row_classes[n] else ""
        cells = "".join(
            f'<td class="{cls(i)}"'
            + (f' title="{esc(r[i].title)}"' if r[i].title else "")
            + f">{words(r[i].text)}{r[i].markup}</td>"
            for i in keep
        )
        body.append(f"<tr{row_class}>{cells}</tr>")
    return (
        f'<style>{CSS}</style><div class="trace-board-wrap {esc(elem_class)}"><table class="trace-board data">'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
    )


def fallback_markup(row: dict) -> str:
    """The fallback mark of a row (`fallbacks.mark`) as HTML with its hover text; "" when none."""
    if not fb.mark(row):
        return ""
    own = fb.own_result(row)
    shown = fb.mark_text(row)
    return f'<span class="trace-fb{"" if own else " not-own"}" title="{esc(fb.describe(row))}">{esc(shown)}</span>'
