"""The Space's Interactive tab: the `trace-bench interact` runs (a simulated traveler talking to each system) as
a leaderboard view, the selected run's per-turn table (SnipRec Table 4 layout), and its live conversations in
the dialogue browser's style.

The settings' `interactive_dirs` (TRACE_SPACE_INTERACTIVE; the demo's OUT/interactive and runs/interactive)
name folders of --out folders (each with metrics.json, data/interactive.jsonl.gz, predictions.jsonl and
poi_names.json) or leaderboard.interactive.json files (`trace-bench leaderboard --interactive`; the logs are read
from the runs folder it names). The rows come from `trace_harness.leaderboard.interactive`, the code the CLI's
view uses, with the teacher-forced values of the Space's baseline rows beside them; they are read by pure
functions on every page load and Refresh, so a run made while the app serves appears without a restart.
Columns are those of the CLI's view (`trace_harness.leaderboard.interactive.VIEWS`), each with its one number
format; a column with no value in any row is left out. Names and texts from the files are data: every table
cell and the log view are escaped through `markup.esc` (only this module's own tags reach the page).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spaces_app.board_html import Field, Heading, data_table, fallback_markup
from spaces_app.browser import CSS, _highlight
from spaces_app.markup import esc
from trace_metrics.tables import Column, format_value

log = logging.getLogger(__name__)

INTRO = (
    "### Interactive evaluation\n"
    "A simulated traveler, seeded from a Trace dialogue (persona, travel context, hidden preferences), talks to "
    "each system; the system lives with its own earlier answers. The traveler accepts a recommendation only when "
    "it satisfies every preference it holds (the generator's own check), otherwise it rejects it naming what is "
    "wrong. Per-turn figures rank the targets (places the traveler would accept) among the candidates, ties "
    "broken at random; the Trace metrics are computed on the live system turns. *sniprec* rows follow SnipRec's "
    "own protocol (one target venue, five questions, the whole catalogue ranked). Lost turns: an external system "
    "that timed out, answered garbage or ranked places outside the pool. Hover a value for its 95% interval."
)
EMPTY = (
    "No interactive runs yet. `trace-bench demo` makes one per baseline (in OUT/interactive); for one system: "
    "`trace-bench interact --system NAME --data DIR --out runs/interactive/NAME`. New runs show here on a "
    "page load or Refresh."
)
INFO_COLUMNS: tuple[tuple[str, str], ...] = (
    ("simulator", "Simulator"),
    ("pool", "Pool"),
    ("split", "Split"),
    ("turns", "Turn budget"),
    ("n_dialogues", "Dialogues"),
)
TITLES = {
    "trace": "Trace protocol (closed or open pool): live success, recovery and grounding; TF = the teacher-"
    "forced row of the same system, pool, split and corpus",
    "sniprec": "SnipRec's protocol: the target venue among the whole catalogue, all turns pooled",
}


@dataclass
class Board:
    """What the tab shows: the rows, the folder of each run (by its label) and the warnings to show."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    folders: dict[str, Path] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def read_board(roots: Sequence[Path], tf_rows: Sequence[Mapping[str, Any]] = ()) -> Board:
    """The rows of every root (a folder of runs, or a leaderboard.interactive.json; missing ones are skipped,
    they may appear later), each row's `run` made a label unique across roots."""
    from trace_dataset.io import TraceDataError
    from trace_harness.leaderboard.interactive import duplicates, interactive_rows, read_interactive

    board = Board()
    found: list[tuple[Path, list[dict[str, Any]]]] = []
    seen: set[Path] = (
        set()
    )  # one folder named twice (runs/interactive and its absolute path, a link) is read once
    for root in roots:
        if not root.exists() or root.resolve() in seen:
            continue
        seen.add(root.resolve())
        try:
            found.append(
                read_interactive(root) if root.is_file() else (root, interactive_rows(root, tf_rows))
            )
        except (TraceDataError, OSError) as e:
            log.warning("interactive tab: %s", e)
            board.warnings.append(f"{root}: {e}")
    several = sum(bool(rows) for _, rows in found) > 1
    for folder, rows in found:
        for row in rows:
            label = f"{folder.as_posix()}/{row['run']}" if several else row["run"]
            if label in board.folders:
                continue  # the same folder named twice
            board.folders[label] = folder / row["run"]
            board.rows.append({**row, "run": label})
    board.warnings += duplicates(board.rows)
    return board


def _metric_field(row: Mapping[str, Any], column: Column, source: str = "") -> Field:
    """A metric's cell; a live cell (source "") with the simulated traveller's verdict after its value and
    the report's figures in its hover (trace_harness.leaderboard.interactive.simulator_check)."""
    from trace_harness.leaderboard.interactive import verdict_mark

    values = (row.get("teacher_forced") or {}) if source == "tf" else row
    value = (values.get("metrics") or {}).get(column.metric)
    ci = (values.get("ci") or {}).get(column.metric)
    title = (
        f"95% interval {format_value(ci[0], column.digits)}–{format_value(ci[1], column.digits)}"
        if ci
        else ""
    )
    check = row.get("simulator_check") if source == "" else None
    if not check:
        return Field(format_value(value, column.digits, missing=""), title)
    text = format_value(value, column.digits, missing="") + (verdict_mark(row) if value is not None else "")
    return Field(text, "; ".join(t for t in (title, check["figures"]) if t))


def board_html(rows: Sequence[Mapping[str, Any]], protocol: str) -> str:
    """The table of one protocol's rows: System, the run's settings, the view's metrics (and TF), lost turns, Run."""
    from trace_harness.leaderboard.interactive import TF_COLUMNS, VIEWS

    cols = VIEWS[protocol]
    tf = TF_COLUMNS if protocol == "trace" else ()
    counts = ("turns", "n_dialogues")
    headings = [
        Heading("System"),
        *(Heading(label, numeric=key in counts) for key, label in INFO_COLUMNS),
        *(
            Heading(c.label, f"{c.metric}; {'higher' if c.higher_is_better else 'lower'} is better", True)
            for c in cols
        ),
        *(Heading(c.label, f"teacher-forced {c.metric}", True) for c in tf),
        Heading(
            "Lost turns",
            "turns an external system lost (timeout, garbage, outside the pool) / system turns",
            True,
        ),
        Heading("Run"),
    ]
    body, classes = [], []
    for r in rows:
        if r["protocol"] != protocol:
            continue
        name = r["system"] + ("‡" if r.get("session_isolated") is False else "")
        body.append(
            [
                Field(name, r.get("baseline") or "", fallback_markup(dict(r))),
                *(Field("" if r.get(k) is None else str(r[k])) for k, _ in INFO_COLUMNS),
                *(_metric_field(r, c) for c in cols),
                *(_metric_field(r, c, "tf") for c in tf),
                Field(f"{r['lost_turns'][0]} / {r['lost_turns'][1]}"),
                Field(r["run"]),
            ]
        )
        classes.append("" if (r.get("fallbacks") or {}).get("own_result", True) else "not-own")
    return data_table(headings, body, elem_class=f"trace-interactive {protocol}", row_classes=classes)


def boards_html(board: Board) -> str:
    """Every protocol's table with its title, the notes under them and the warnings (duplicate runs)."""
    from trace_harness import fallbacks as fb
    from trace_harness.leaderboard.interactive import VERDICT_LEGEND, VIEWS, verdict_mark

    parts = []
    for protocol in VIEWS:
        if any(r["protocol"] == protocol for r in board.rows):
            parts += [f"<h4>{esc(TITLES[protocol])}</h4>", board_html(board.rows, protocol)]
    notes = []
    if any(r.get("session_isolated") is False for r in board.rows):
        notes.append("‡ not session-isolated (memory across dialogues): its dialogues ran one at a time.")
    if any(fb.mark(r) for r in board.rows):
        notes.append(fb.LEGEND + ".")
    if any(verdict_mark(r) for r in board.rows):
        notes.append(VERDICT_LEGEND + "; hover a live cell for the figures.")
    notes += [f"Warning: {w}" for w in board.warnings]
    if notes:
        parts.append('<div class="trace-board-notes">' + "<br>".join(esc(n) for n in notes) + "</div>")
    return "".join(parts)


def load_metrics(run: Path) -> dict[str, Any] | None:
    from trace_dataset.io import TraceDataError, read_json
    from trace_harness.protocols.interactive.output import METRICS_FILE

    try:
        m = read_json(run / METRICS_FILE)
    except (TraceDataError, OSError) as e:
        log.warning("interactive tab: %s", e)
        return None
    if not isinstance(m, dict) or not isinstance(m.get("per_turn"), list) or "protocol" not in m:
        log.warning("interactive tab: %s is not an interactive metrics.json", run)
        return None
    return m


def turns_html(metrics: Mapping[str, Any] | None) -> str:
    """The per-turn table of a run (`trace_harness.protocols.interactive.report.TURN_COLUMNS`, SnipRec's Table 4 layout)."""
    from trace_harness.protocols.interactive.report import TURN_COLUMNS
    from trace_metrics.lib.interactive import turn_metric

    # turn_metric reads a metrics.json from before the SnipRec ids too

    if not metrics:
        return "<p>No per-turn figures for this run.</p>"
    headings = [
        Heading("Turn", numeric=True),
        *(Heading(c.label, c.metric, True) for c in TURN_COLUMNS),
        Heading("n", "ranked turns at this turn index", True),
    ]
    rows = [
        [
            Field(str(r["turn"])),
            *(Field(format_value(turn_metric(r, c.metric), c.digits, missing="")) for c in TURN_COLUMNS),
            Field(str(r.get("n", ""))),
        ]
        for r in metrics["per_turn"]
    ]
    return data_table(headings, rows, elem_class="trace-turns", drop_empty=False)


class RunLogs:
    """The live conversations of one run folder, loaded on first use."""

    def __init__(self, run: Path):
        from trace_dataset.constants import DATA_DIRNAME, INTERACTIVE_FILE
        from trace_dataset.io import read_json, read_jsonl
        from trace_harness.protocols.interactive.output import NAMES_FILE, PREDICTIONS_FILE

        self.run = run
        self.records = {d["dialogue_id"]: d for d in read_jsonl(run / DATA_DIRNAME / INTERACTIVE_FILE)}
        self.predictions = {(p["dialogue_id"], p["turn_id"]): p for p in read_jsonl(run / PREDICTIONS_FILE)}
        names = run / NAMES_FILE
        self.names: dict[str, str] = read_json(names) if names.exists() else {}

    def ids(self) -> list[str]:
        return list(self.records)

    def render(self, dialogue_id: str | None) -> str:
        d = self.records.get(dialogue_id) if dialogue_id else None
        if d is None:
            return "<p>Pick a conversation.</p>"
        s = d["scenario"]
        parts = [
            f"<style>{CSS}</style>",
            f"<h3>{esc(d['dialogue_id'])}</h3><p>{esc(s['city'])} · {esc(s['poi_type'])}"
            f" · persona <b>{esc(s['persona_type'])}</b>: {esc(s['persona'])} · simulator "
            f"{esc(d['metadata'].get('backend', ''))}</p>",
        ]
        for t in d["turns"]:
            head = f"#{t['turn_id']} {esc(t['role'])} · {esc(t['action'])}"
            extra = ""
            if t["role"] == "user":
                named = ", ".join(esc(self.names.get(p, p)) for p in t["referenced_poi_ids"])
                head += f" · {named}" if named else ""
                body = esc(t["text"])
            else:
                p = self.predictions.get((d["dialogue_id"], t["turn_id"]), {})
                meta = p.get("meta") or {}
                info = meta.get("interactive") or {}
                gold = set(t["gold_poi_ids"])
                top = [
                    esc(self.names.get(x, x)) + (" ✓" if x in gold else "")
                    for x in (p.get("ranked_poi_ids") or [])[:3]
                ]
                if top:
                    extra += f" · top-3: {', '.join(top)}"
                if info.get("target_position") is not None:
                    extra += (
                        f" · target at {int(info['target_position'])} of {int(info.get('n_candidates', 0))}"
                    )
                if meta.get("lost"):
                    extra += f" · <b>turn lost ({esc(meta['lost'])})</b>: {esc(meta.get('detail', ''))}"
                if meta.get("fallback"):
                    extra += f" · <b>fell back to {esc(meta['fallback'])}</b>"
                body = _highlight(t["text"]) if t["text"] else "<i>(no answer)</i>"
            parts.append(
                f'<div class="trace-turn {esc(t["role"])}"><div class="trace-action">{head}{extra}</div>{body}</div>'
            )
        parts.append(
            '<p class="trace-action">✓ = a target: a place this traveler would accept (every preference it '
            "holds is met).</p>"
        )
        return "".join(parts)


def tf_rows(settings: Any) -> list[dict[str, Any]]:
    """The teacher-forced baseline rows put beside the live ones (leaderboard.json without its per-dialogue
    side file: only values and intervals are needed)."""
    from trace_dataset.io import TraceDataError, read_json

    path = getattr(settings, "baselines_file", None)
    if path is None or not Path(path).is_file():
        return []
    try:
        rows = read_json(path).get("rows")
    except (TraceDataError, OSError, AttributeError, ValueError) as e:
        log.warning("interactive tab: no teacher-forced rows (%s)", e)
        return []
    return (
        [r for r in rows if isinstance(r, dict) and isinstance(r.get("metrics"), dict)]
        if isinstance(rows, list)
        else []
    )


def interactive_tab(ctx: Any) -> None:
    import gradio as gr

    roots = list(ctx.settings.interactive_dirs)
    cache: dict[str, RunLogs] = {}
    state: dict[str, Board] = {"board": Board()}

    def logs(name: str | None) -> RunLogs | None:
        folder = state["board"].folders.get(name or "")
        if folder is None or name is None:
            return None
        if name not in cache:
            from trace_dataset.io import TraceDataError

            try:
                cache.clear()  # one run's logs in memory at a time
                cache[name] = RunLogs(folder)
            except (TraceDataError, OSError, KeyError) as e:  # a broken run folder must not break the tab
                log.warning("interactive tab: cannot read the logs of %s: %s", name, e)
                return None
        return cache[name]

    def run_view(name: str | None) -> tuple[str, list[str], str]:
        """(per-turn table, conversation ids, first conversation) of a run."""
        lg = logs(name)
        ids = lg.ids() if lg else []
        folder = state["board"].folders.get(name or "")
        return (
            turns_html(load_metrics(folder) if folder else None),
            ids,
            lg.render(ids[0]) if lg and ids else "<p>No logs in this run.</p>",
        )

    def pick_run(name):
        turns, ids, first = run_view(name)
        return turns, gr.update(choices=ids, value=ids[0] if ids else None), first

    def view(current=None):
        board = read_board(roots, tf_rows(ctx.settings))
        state["board"] = board
        cache.clear()
        names = list(board.folders)
        shown = bool(names)
        name = current if current in names else (names[0] if names else None)
        turns, ids, first = run_view(name) if shown else ("", [], "")
        return (
            gr.update(visible=not shown),
            gr.update(value=boards_html(board) if shown else "", visible=shown),
            gr.update(choices=names, value=name, visible=shown),
            gr.update(value=turns, visible=shown),
            gr.update(choices=ids, value=ids[0] if ids else None, visible=shown),
            gr.update(value=first, visible=shown),
        )

    gr.Markdown(INTRO)
    empty = gr.Markdown(EMPTY, elem_id="interactive-empty")
    board = gr.HTML(elem_id="interactive-board")
    refresh = gr.Button("Refresh", elem_id="interactive-refresh", scale=0)
    run = gr.Dropdown([], label="Run", elem_id="interactive-run")
    per_turn = gr.HTML(elem_id="interactive-turns")
    dialogue = gr.Dropdown([], label="Conversation", elem_id="interactive-dialogue")
    conversation = gr.HTML(elem_id="interactive-log")
    outputs = [empty, board, run, per_turn, dialogue, conversation]
    ctx.on_load(view, [run], outputs)
    refresh.click(view, [run], outputs)
    run.input(pick_run, run, [per_turn, dialogue, conversation])

    def render(name: str | None, did: str | None) -> str:
        run_logs = logs(name)
        return run_logs.render(did) if run_logs else ""

    dialogue.input(render, [run, dialogue], conversation)
