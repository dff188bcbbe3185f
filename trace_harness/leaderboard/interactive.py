"""The leaderboard's interactive view: one row per `trace-bench interact` run (its metrics.json), each cell
with its 95% cluster-bootstrap interval (dialogues resampled, as metrics.json computed it), and, beside a
`trace` protocol row, the teacher-forced row of the same system, pool and split from the leaderboard when
one was scored on the same corpus.

`trace-bench leaderboard --interactive DIR` prints the view after Tables 5, 6 and 9 and writes it with them
(leaderboard.interactive.json, interactive_trace.csv, interactive_sniprec.csv); the Space's Interactive tab
reads the same rows (from the folder, or from leaderboard.interactive.json). docs/interactive.md documents it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from trace_dataset.io import TraceDataError, read_json, write_json, write_text
from trace_harness import fallbacks as fb
from trace_harness.fallbacks import row_counts
from trace_harness.protocols.interactive.output import METRICS_FILE, PREDICTIONS_FILE
from trace_metrics.lib.reliability import CARE, NOT_RELIABLE, RELIABLE
from trace_metrics.specs import spec
from trace_metrics.tables import (
    Column,
    column,
    csv_fields,
    csv_header,
    csv_text,
    format_cell,
    heading,
    text_table,
)

log = logging.getLogger(__name__)

BOARD_FILE = "leaderboard.interactive.json"


# The `trace` protocol: the traveler's success, then the Trace metrics of the live system turns. Labels,
# axes and directions are the declarations' (trace_metrics.specs); a label here is the view's own header.
TRACE_COLUMNS: tuple[Column, ...] = (
    column("success_rate", "Live success (TSR)", key="success"),  # stored as "success" in the rows
    column("turns_to_success", digits=2),
    column("hit@1", "Live Hit@1"),
    column("mrr", "Live MRR"),
    column("t2r", "Live T2R", digits=2),
    column("rejection_recovery", "Live rej. rec."),
    column("cgs", "Live CGS"),
    column("avg_position", digits=1),  # every ranked turn, ties at random
)
# SnipRec's protocol: the target venue's position over every ranked turn (its Table 4, all turns pooled);
# its ids (trace_metrics.specs, benchmark "sniprec") are not Trace's top-k `hit@k` / `mrr`.
SNIPREC_COLUMNS: tuple[Column, ...] = (
    column("sniprec_hit@1"),
    column("sniprec_hit@5"),
    column("sniprec_hit@10"),
    column("sniprec_mrr"),
    column("avg_position", digits=1),
)
VIEWS: dict[str, tuple[Column, ...]] = {"trace": TRACE_COLUMNS, "sniprec": SNIPREC_COLUMNS}
# Where metrics.json holds a metric's value, by its benchmark: "dialogue" (the live dialogues) and "overall"
# (SnipRec's ranked turns) hold {mean, ci_low, ci_high}; "trace" (Trace's metrics of the live turns) holds
# `values` and `ci`.
SECTIONS: dict[str, str] = {"live": "dialogue", "sniprec": "overall", "trace": "trace"}
# Teacher-forced metrics shown beside a `trace` row (leaderboard metric ids), and their labels.
TF_COLUMNS: tuple[Column, ...] = (
    column("hit@1", "TF Hit@1"),
    column("tsr", "TF TSR"),
    column("rejection_recovery", "TF rej. rec."),
)


def source(protocol: str, col: Column) -> tuple[str, str]:
    """(section, key) of a column's value in a metrics.json of `protocol` (SnipRec's: every column in
    "overall")."""
    metric = col.id or col.metric
    if protocol != "trace":
        return "overall", metric
    return SECTIONS[spec(metric).benchmark], metric


def find_interactive_runs(root: str | os.PathLike) -> list[Path]:
    """Run folders (holding metrics.json) at most two levels under `root`, sorted."""
    root = Path(root)
    if not root.is_dir():
        raise TraceDataError(
            "interactive runs folder not found (expected `trace-bench interact` --out folders)", path=root
        )
    found = {
        p.parent
        for pattern in (METRICS_FILE, f"*/{METRICS_FILE}", f"*/*/{METRICS_FILE}")
        for p in root.glob(pattern)
    }
    return sorted(found)


def _cell(metrics: Mapping[str, Any], section: str, key: str) -> tuple[float | None, list[float] | None]:
    if section == "trace":
        trace = metrics.get("trace") or {}
        value = (trace.get("values") or {}).get(key)
        ci = (trace.get("ci") or {}).get(key) or {}
    else:
        # turn_metric also reads a metrics.json from before the SnipRec ids
        from trace_metrics.lib.interactive import turn_metric

        ci = turn_metric(metrics.get(section) or {}, key) or {}
        value = ci.get("mean")
    bounds = (
        [ci["ci_low"], ci["ci_high"]]
        if ci.get("ci_low") is not None and ci.get("ci_high") is not None
        else None
    )
    return value, bounds


def row_label(info: Mapping[str, Any], run: Path) -> str:
    """The leaderboard's name of the system (paper name, as Table 5) with the run label's model suffix."""
    from baselines.identity import BY_NAME

    name = str(info.get("system") or "")
    label = str(info.get("system_label") or name or run.name)
    if name in BY_NAME and label.startswith(name):
        return BY_NAME[name].label + label[len(name) :]
    return label


def run_row(run: Path, metrics: Mapping[str, Any], root: Path) -> dict[str, Any]:
    """The stored row of one interactive run."""
    info = metrics.get("run") or {}
    protocol = str(metrics.get("protocol", ""))
    if protocol not in VIEWS:
        raise TraceDataError(
            f"unknown protocol {protocol!r}; expected one of {tuple(VIEWS)}", path=run / METRICS_FILE
        )
    values, cis = {}, {}
    for col in VIEWS[protocol]:
        value, ci = _cell(metrics, *source(protocol, col))
        if value is not None:
            values[col.metric] = value
        if ci is not None:
            cis[col.metric] = ci
    lost = metrics.get("lost_turns") or {}
    n_dialogues = int(metrics.get("n_dialogues", 0))
    if n_dialogues < 2 and cis:
        log.warning(
            "interactive run %s has one dialogue, so resampling has no variance: its intervals are not shown",
            run,
        )
        cis = {}
    return {
        "system": row_label(info, run),
        "baseline": str(info.get("system", "")),
        "family": str(info.get("family", "")),
        "session_isolated": info.get("session_isolated"),
        "protocol": protocol,
        "simulator": str(info.get("simulator", "")),
        "pool": str(info.get("pool") or "catalogue"),
        "split": str(info.get("split", "")),
        "turns": info.get("turns"),
        "corpus_version": info.get("corpus_version"),
        "kb_version": info.get("kb_version"),
        "n_dialogues": n_dialogues,
        "metrics": values,
        "ci": cis,
        "lost_turns": [int(lost.get("total", 0)), int(lost.get("system_turns", 0))],
        "fallbacks": fb.report_of(row_counts(run / PREDICTIONS_FILE), int(lost.get("system_turns", 0))),
        "run": run.relative_to(root).as_posix(),
        **simulator_check(run),
    }


# The simulated traveller's verdict beside each live cell (its simulator report), as one mark.
VERDICT_MARKS: dict[str, str] = {RELIABLE: "", CARE: " ~", NOT_RELIABLE: " !"}
VERDICT_LEGEND = (
    "~ / !: the simulated traveller is usable with care / not reliable for this run (simulator_report.md "
    "beside the run: leaks, first-turn wins, wins with no effort, LLM fallbacks, the margin over the "
    "deliberately bad systems)"
)


def simulator_check(run: Path) -> dict[str, Any]:
    """{"simulator_check": {verdict, figures}} from the run's simulator report; {} where it has none."""
    from trace_harness.protocols.interactive.validity.report import figures, read_report

    report = read_report(run)
    if report is None:
        return {}
    return {"simulator_check": {"verdict": report.get("verdict"), "figures": figures(report)}}


def verdict_mark(row: Mapping[str, Any]) -> str:
    check = row.get("simulator_check") or {}
    return VERDICT_MARKS.get(check.get("verdict") or "", "")


def teacher_forced(row: Mapping[str, Any], tf_rows: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The teacher-forced values and intervals (TF_COLUMNS) of the same baseline, pool and split, scored on the
    same corpus; None when the leaderboard has no such row."""
    if row["protocol"] != "trace" or not row["baseline"]:
        return None
    for r in tf_rows:
        if (r.get("baseline"), r.get("pool"), r.get("split")) != (row["baseline"], row["pool"], row["split"]):
            continue
        if r.get("source", "baseline") != "baseline" or r.get("corpus_version") != row["corpus_version"]:
            continue
        ids = [c.metric for c in TF_COLUMNS]
        return {
            "system": r["system"],
            "metrics": {m: r["metrics"][m] for m in ids if m in r["metrics"]},
            "ci": {m: r["ci"][m] for m in ids if m in (r.get("ci") or {})},
        }
    return None


# What a reader sees of a row: rows equal in these look like the same run.
IDENTITY: tuple[str, ...] = ("system", "protocol", "simulator", "pool", "split", "turns", "n_dialogues")


def duplicates(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """A warning for every set of rows that look the same (IDENTITY), naming their runs: copies of one run
    (identical values) or runs that differ only where the table does not show it."""
    groups: dict[tuple, list[Mapping[str, Any]]] = {}
    for r in rows:
        groups.setdefault(tuple(str(r.get(k)) for k in IDENTITY), []).append(r)
    out = []
    for same in groups.values():
        if len(same) < 2:
            continue
        runs = ", ".join(str(r.get("run")) for r in same)
        copies = all(r.get("metrics") == same[0].get("metrics") for r in same)
        out.append(
            f"{len(same)} rows of {same[0].get('system')} ({same[0].get('protocol')}, {same[0].get('pool')} "
            f"pool, {same[0].get('split')} split) look the same: "
            + (f"copies of one run ({runs})" if copies else f"runs {runs} differ in values only")
        )
    return out


def interactive_rows(
    root: str | os.PathLike, tf_rows: Sequence[Mapping[str, Any]] = ()
) -> list[dict[str, Any]]:
    """A row per interactive run under `root` (unreadable or foreign metrics.json files are skipped, logged),
    with `teacher_forced` from `tf_rows` (leaderboard rows) where one matches."""
    from baselines import COUNTERFACTUAL_BASELINES

    root = Path(root)
    rows = []
    for run in find_interactive_runs(root):
        try:
            metrics = read_json(run / METRICS_FILE)
            if not isinstance(metrics, dict) or not isinstance(metrics.get("per_turn"), list):
                raise TraceDataError(
                    "not the metrics.json of `trace-bench interact`", path=run / METRICS_FILE
                )
            row = run_row(run, metrics, root)
        except (TraceDataError, OSError, KeyError, TypeError, ValueError) as e:
            log.warning("skipping interactive run %s: %s", run, e)
            continue
        if row["baseline"] in COUNTERFACTUAL_BASELINES:  # a deliberately bad system: never a ranked row
            log.info("leaving out %s: a counterfactual baseline of the simulator report", run)
            continue
        row["teacher_forced"] = teacher_forced(row, tf_rows)
        rows.append(row)
    from baselines.identity import IDENTITIES

    order = [i.name for i in IDENTITIES]
    rows.sort(
        key=lambda r: (
            r["protocol"] != "trace",
            r["pool"],
            r["simulator"],
            r["session_isolated"] is False,
            order.index(r["baseline"]) if r["baseline"] in order else len(order),
            r["system"],
        )
    )
    for warning in duplicates(rows):
        log.warning("%s (under %s)", warning, root)
    return rows


def _lines(row: Mapping[str, Any], protocol: str) -> list[str]:
    cols = VIEWS[protocol]
    out = [
        row["system"] + ("‡" if row.get("session_isolated") is False else "") + fb.mark(row),
        row["simulator"],
        row["pool"],
        str(row.get("split") or "-"),
        str(row.get("turns") or "-"),
        str(row["n_dialogues"]),
        *(
            format_cell(row["metrics"].get(c.metric), row["ci"].get(c.metric), digits=c.digits)
            + verdict_mark(row)
            for c in cols
        ),
    ]
    if protocol == "trace":
        tf = row.get("teacher_forced") or {"metrics": {}, "ci": {}}
        out += [
            format_cell(tf["metrics"].get(c.metric), tf["ci"].get(c.metric), digits=c.digits)
            for c in TF_COLUMNS
        ]
    out.append(f"{row['lost_turns'][0]} / {row['lost_turns'][1]}")
    return out


def _headers(protocol: str) -> list[str]:
    heads = [
        "System",
        "Simulator",
        "Pool",
        "Split",
        "Turns",
        "Dialogues",
        *(heading(c) for c in VIEWS[protocol]),
    ]
    if protocol == "trace":
        heads += [c.label for c in TF_COLUMNS]
    return [*heads, "Lost turns"]


def format_interactive(rows: Sequence[Mapping[str, Any]]) -> str:
    """Plain-text interactive tables (one per protocol with rows), cells with ± half the 95% interval."""
    parts = []
    for protocol in VIEWS:
        body = [_lines(r, protocol) for r in rows if r["protocol"] == protocol]
        if not body:
            continue
        title = (
            "Interactive: a simulated traveler talks to each system (trace-bench interact); TF = the "
            "teacher-forced row of the same system, pool and corpus"
            if protocol == "trace"
            else "Interactive, SnipRec's protocol: the target venue among the catalogue, all turns pooled"
        )
        parts += [title, text_table(_headers(protocol), body, align="left", rule=False)]
        if any(r.get("session_isolated") is False for r in rows if r["protocol"] == protocol):
            parts.append("‡ not session-isolated (memory across dialogues): its dialogues ran one at a time")
        if any(fb.mark(r) for r in rows if r["protocol"] == protocol):
            parts.append(fb.LEGEND)
        if any(verdict_mark(r) for r in rows if r["protocol"] == protocol):
            parts.append(VERDICT_LEGEND)
        parts.append(
            "±: half the width of the 95% cluster-bootstrap interval (dialogues resampled; bounds in the "
            "CSV and JSON; CGS, a formula on means, has none)"
            + (
                "; '-': no value (TF: no teacher-forced run of that system on this corpus)"
                if protocol == "trace"
                else ""
            )
        )
        parts.append("")
    return "\n".join(parts)


def _csv(rows: Sequence[Mapping[str, Any]], protocol: str) -> str:
    cols = VIEWS[protocol]
    tf = [Column(f"tf_{c.metric}", c.label) for c in TF_COLUMNS] if protocol == "trace" else []
    body = []
    for r in rows:
        if r["protocol"] != protocol:
            continue
        line: list[Any] = [
            r["system"],
            r["simulator"],
            r["pool"],
            r.get("split"),
            r.get("turns"),
            r["n_dialogues"],
        ]
        for c in cols:
            line += csv_fields(r["metrics"].get(c.metric), r["ci"].get(c.metric), marks=False)
        t = r.get("teacher_forced") or {"metrics": {}, "ci": {}}
        for c in TF_COLUMNS if protocol == "trace" else ():
            line += csv_fields(t["metrics"].get(c.metric), t["ci"].get(c.metric), marks=False)
        body.append([*line, *r["lost_turns"], *fb.csv_fields(r), r["run"]])
    return csv_text(
        [
            "system",
            "simulator",
            "pool",
            "split",
            "turns",
            "dialogues",
            *csv_header([*cols, *tf], marks=False),
            "lost_turns",
            "system_turns",
            *fb.CSV_FIELDS,
            "run",
        ],
        body,
    )


def write_interactive(
    rows: Sequence[Mapping[str, Any]], out_dir: str | os.PathLike, root: str | os.PathLike
) -> dict[str, Path]:
    """leaderboard.interactive.json (the rows, and the runs folder they came from) and one CSV per protocol."""
    out_dir = Path(out_dir)
    paths = {"interactive_json": out_dir / BOARD_FILE}
    write_json(paths["interactive_json"], {"root": str(Path(root).absolute()), "rows": list(rows)})
    for protocol in VIEWS:
        if any(r["protocol"] == protocol for r in rows):
            paths[f"interactive_{protocol}"] = out_dir / f"interactive_{protocol}.csv"
            write_text(paths[f"interactive_{protocol}"], _csv(rows, protocol))
    return paths


def read_interactive(path: str | os.PathLike) -> tuple[Path, list[dict[str, Any]]]:
    """(runs folder, rows) of a leaderboard.interactive.json."""
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("rows"), list):
        raise TraceDataError(
            'expected {"root": ..., "rows": [...]} (written by `trace-bench leaderboard --interactive`)',
            path=path,
        )
    return Path(data.get("root") or Path(path).parent), data["rows"]
