"""The Space's Interactive tab: the `trace-bench interact` runs (a simulated traveler talking to each system) as
a leaderboard view, the selected run's per-turn table (SnipRec Table 4 layout), and its live conversations in
the dialogue browser's style.

TRACE_SPACE_INTERACTIVE (default `runs/interactive` when it exists) names either a folder of --out folders
(each with metrics.json, data/interactive.jsonl.gz, predictions.jsonl and poi_names.json) or the
leaderboard.interactive.json that `trace-bench leaderboard --interactive` writes (the same rows, with the
teacher-forced values beside them; the logs are read from the runs folder it names). The rows come from
`trace_harness.leaderboard.interactive`, the code the CLI's view uses; they are read by pure functions on every refresh.
Names and texts from the files are data: tables get plain cells, and the log view escapes everything
through `markup.esc` (only this module's own tags reach the page).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from spaces_app.browser import CSS, _highlight
from spaces_app.markup import esc

log = logging.getLogger(__name__)

INTERACTIVE_ENV = "TRACE_SPACE_INTERACTIVE"
DEFAULT_DIR = Path("runs/interactive")
BOARD_COLUMNS = ("System", "Simulator", "Protocol", "Pool", "Dialogues", "Success", "Success 95% CI",
                 "Turns to success", "Hit@1", "MRR", "Avg Pos", "Rejection recovery", "CGS", "TF TSR", "Lost turns",
                 "Run")
TURN_COLUMNS = ("Turn", "Hits@1", "Hits@5", "Hits@10", "Avg Pos", "Avg MRR", "n")
INTRO = (
    "### Interactive evaluation\n"
    "A simulated traveler, seeded from a Trace dialogue (persona, travel context, hidden preferences), talks to "
    "each system; the system lives with its own earlier answers. The traveler accepts a recommendation only when "
    "it satisfies every preference it holds (the generator's own check), otherwise it rejects it naming what is "
    "wrong. Per-turn figures rank the targets (places the traveler would accept) among the candidates, ties "
    "broken at random; the Trace metrics are computed on the live system turns. *sniprec* rows follow SnipRec's "
    "own protocol (one target venue, five questions, the whole catalogue ranked). Lost turns: an external system "
    "that timed out, answered garbage or ranked places outside the pool."
)


def interactive_dir(env: Mapping[str, str] | None = None) -> Path | None:
    value = (os.environ if env is None else env).get(INTERACTIVE_ENV)
    if value:
        return Path(value)
    return DEFAULT_DIR if DEFAULT_DIR.is_dir() else None


def board_source(root: Path | None) -> tuple[Path | None, list[dict[str, Any]]]:
    """(folder the run folders are under, board rows) of a runs folder or a leaderboard.interactive.json."""
    from trace_dataset.io import TraceDataError
    from trace_harness.leaderboard.interactive import interactive_rows, read_interactive

    if root is None or not root.exists():
        return None, []
    try:
        if root.is_file():
            return read_interactive(root)
        return root, interactive_rows(root)
    except (TraceDataError, OSError) as e:
        log.warning("interactive tab: %s", e)
        return None, []


def load_metrics(run: Path) -> dict[str, Any] | None:
    from trace_dataset.io import TraceDataError, read_json

    try:
        m = read_json(run / "metrics.json")
    except (TraceDataError, OSError) as e:
        log.warning("interactive tab: %s", e)
        return None
    if not isinstance(m, dict) or not isinstance(m.get("per_turn"), list) or "protocol" not in m:
        log.warning("interactive tab: %s is not an interactive metrics.json", run)
        return None
    return m


def _r(x: Any, digits: int = 3) -> float | None:
    return None if x is None else round(float(x), digits)


def board_rows(root: Path | None) -> list[list[Any]]:
    """One row per run (BOARD_COLUMNS), values as plain numbers and strings."""
    out = []
    for row in board_source(root)[1]:
        v, ci = row["metrics"], row["ci"]
        success = ci.get("success")
        tf = (row.get("teacher_forced") or {}).get("metrics", {})
        out.append([
            row["system"], row["simulator"], row["protocol"], row["pool"], row["n_dialogues"], _r(v.get("success")),
            f"[{success[0]:.3f}, {success[1]:.3f}]" if success else "", _r(v.get("turns_to_success"), 2),
            # a `trace` row: Trace's hit@1/mrr of the live turns; a SnipRec row: the target's rank among all
            _r(v.get("hit@1", v.get("sniprec_hit@1"))), _r(v.get("mrr", v.get("sniprec_mrr"))),
            _r(v.get("avg_position"), 1), _r(v.get("rejection_recovery")),
            _r(v.get("cgs")), _r(tf.get("tsr")), f"{row['lost_turns'][0]} / {row['lost_turns'][1]}", row["run"],
        ])
    return out


def turn_rows_of(metrics: Mapping[str, Any] | None) -> list[list[Any]]:
    if not metrics:
        return []
    # turn_metric also reads a metrics.json from before the SnipRec ids
    from trace_metrics.lib.interactive import turn_metric

    hits = ("sniprec_hit@1", "sniprec_hit@5", "sniprec_hit@10")
    return [[r["turn"], *(_r(turn_metric(r, m)) for m in hits), _r(r.get("avg_position"), 1),
             _r(turn_metric(r, "sniprec_mrr"), 4), r.get("n")] for r in metrics["per_turn"]]


class RunLogs:
    """The live conversations of one run folder, loaded on first use."""

    def __init__(self, run: Path):
        from trace_dataset.constants import DATA_DIRNAME, INTERACTIVE_FILE
        from trace_dataset.io import read_json, read_jsonl

        self.run = run
        self.records = {d["dialogue_id"]: d for d in read_jsonl(run / DATA_DIRNAME / INTERACTIVE_FILE)}
        self.predictions = {(p["dialogue_id"], p["turn_id"]): p for p in read_jsonl(run / "predictions.jsonl")}
        names = run / "poi_names.json"
        self.names: dict[str, str] = read_json(names) if names.exists() else {}

    def ids(self) -> list[str]:
        return list(self.records)

    def render(self, dialogue_id: str | None) -> str:
        d = self.records.get(dialogue_id) if dialogue_id else None
        if d is None:
            return "<p>Pick a conversation.</p>"
        s = d["scenario"]
        parts = [f"<style>{CSS}</style>", f"<h3>{esc(d['dialogue_id'])}</h3><p>{esc(s['city'])} · {esc(s['poi_type'])}"
                 f" · persona <b>{esc(s['persona_type'])}</b>: {esc(s['persona'])} · simulator "
                 f"{esc(d['metadata'].get('backend', ''))}</p>"]
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
                top = [esc(self.names.get(x, x)) + (" ✓" if x in gold else "") for x in (p.get("ranked_poi_ids") or [])[:3]]
                if top:
                    extra += f" · top-3: {', '.join(top)}"
                if info.get("target_position") is not None:
                    extra += f" · target at {int(info['target_position'])} of {int(info.get('n_candidates', 0))}"
                if meta.get("lost"):
                    extra += f" · <b>turn lost ({esc(meta['lost'])})</b>: {esc(meta.get('detail', ''))}"
                body = _highlight(t["text"]) if t["text"] else "<i>(no answer)</i>"
            parts.append(f'<div class="trace-turn {esc(t["role"])}"><div class="trace-action">{head}{extra}</div>{body}</div>')
        parts.append('<p class="trace-action">✓ = a target: a place this traveler would accept (every preference it '
                     "holds is met).</p>")
        return "".join(parts)


def interactive_tab(ctx: Any) -> None:
    import gradio as gr

    root = interactive_dir()
    gr.Markdown(INTRO)
    if root is None:
        gr.Markdown(f"No interactive runs configured ({INTERACTIVE_ENV}, or a `runs/interactive` folder): run "
                    "`trace-bench interact --system NAME --data DIR --out runs/interactive/NAME` and refresh.")
        return
    runs_root = board_source(root)[0] or root
    rows = board_rows(root)
    board = gr.Dataframe(value=rows, headers=list(BOARD_COLUMNS), interactive=False, elem_id="interactive-board",
                         wrap=True)
    refresh = gr.Button("Refresh", elem_id="interactive-refresh", scale=0)
    runs = [r[-1] for r in rows]
    run = gr.Dropdown(runs, value=runs[0] if runs else None, label="Run", elem_id="interactive-run")
    per_turn = gr.Dataframe(value=turn_rows_of(load_metrics(runs_root / runs[0]) if runs else None),
                            headers=list(TURN_COLUMNS), interactive=False, elem_id="interactive-turns")
    cache: dict[str, RunLogs] = {}

    def logs(name: str | None) -> RunLogs | None:
        if not name:
            return None
        if name not in cache:
            from trace_dataset.io import TraceDataError

            try:
                cache.clear()  # one run's logs in memory at a time
                cache[name] = RunLogs(runs_root / name)
            except (TraceDataError, OSError, KeyError) as e:  # a broken run folder must not break the tab
                log.warning("interactive tab: cannot read the logs of %s: %s", name, e)
                return None
        return cache[name]

    first_logs = logs(runs[0]) if runs else None
    first_ids = first_logs.ids() if first_logs else []
    dialogue = gr.Dropdown(first_ids, value=first_ids[0] if first_ids else None, label="Conversation",
                           elem_id="interactive-dialogue")
    view = gr.HTML(first_logs.render(first_ids[0]) if first_ids and first_logs else "", elem_id="interactive-log")

    def pick_run(name):
        lg = logs(name)
        ids = lg.ids() if lg else []
        return (turn_rows_of(load_metrics(runs_root / name) if name else None),
                gr.update(choices=ids, value=ids[0] if ids else None),
                lg.render(ids[0]) if lg and ids else "<p>No logs in this run.</p>")

    def reload():
        fresh = board_rows(root)
        names = [r[-1] for r in fresh]
        return fresh, gr.update(choices=names)

    run.change(pick_run, run, [per_turn, dialogue, view])
    dialogue.change(lambda name, did: (logs(name).render(did) if logs(name) else ""), [run, dialogue], view)
    refresh.click(reload, None, [board, run])
