"""The leaderboard's interactive view: one row per `trace-bench interact` run (its metrics.json), each cell
with its 95% cluster-bootstrap interval (dialogues resampled, as metrics.json computed it), and, beside a
`trace` protocol row, the teacher-forced row of the same system, pool and split from the leaderboard when
one was scored on the same corpus.

`trace-bench leaderboard --interactive DIR` prints the view after Tables 5, 6 and 9 and writes it with them
(leaderboard.interactive.json, interactive_trace.csv, interactive_sniprec.csv); the Space's Interactive tab
reads the same rows (from the folder, or from leaderboard.interactive.json). docs/interactive.md documents it.
"""

from __future__ import annotations

import csv
import io
import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from trace_dataset.io import TraceDataError, read_json, write_json, write_text

log = logging.getLogger(__name__)

BOARD_FILE = "leaderboard.interactive.json"
METRICS_FILE = "metrics.json"


class LiveColumn(NamedTuple):
    id: str
    label: str
    section: str  # where metrics.json holds it: "dialogue" / "overall" ({mean, ci_low, ci_high}), "trace"
    metric: str
    higher_is_better: bool
    digits: int = 3


# The `trace` protocol: the traveler's success, then the Trace metrics of the live system turns.
TRACE_COLUMNS: tuple[LiveColumn, ...] = (
    LiveColumn("success", "Live success (TSR)", "dialogue", "success_rate", True),
    LiveColumn("turns_to_success", "Turns to success", "dialogue", "turns_to_success", False, 2),
    LiveColumn("hit@1", "Live Hit@1", "trace", "hit@1", True),
    LiveColumn("mrr", "Live MRR", "trace", "mrr", True),
    LiveColumn("t2r", "Live T2R", "trace", "t2r", False, 2),
    LiveColumn("rejection_recovery", "Live rej. rec.", "trace", "rejection_recovery", True),
    LiveColumn("cgs", "Live CGS", "trace", "cgs", True),
    LiveColumn("avg_position", "Avg Pos", "overall", "avg_position", False, 1),  # every ranked turn, ties at random
)
# SnipRec's protocol: the target venue's position over every ranked turn (its Table 4, all turns pooled);
# its ids (trace_metrics.specs, benchmark "sniprec") are not Trace's top-k `hit@k` / `mrr`.
SNIPREC_COLUMNS: tuple[LiveColumn, ...] = (
    LiveColumn("sniprec_hit@1", "Hits@1", "overall", "sniprec_hit@1", True),
    LiveColumn("sniprec_hit@5", "Hits@5", "overall", "sniprec_hit@5", True),
    LiveColumn("sniprec_hit@10", "Hits@10", "overall", "sniprec_hit@10", True),
    LiveColumn("sniprec_mrr", "MRR", "overall", "sniprec_mrr", True),
    LiveColumn("avg_position", "Avg Pos", "overall", "avg_position", False, 1),
)
VIEWS: dict[str, tuple[LiveColumn, ...]] = {"trace": TRACE_COLUMNS, "sniprec": SNIPREC_COLUMNS}
# Teacher-forced metrics shown beside a `trace` row (leaderboard metric ids), and their labels.
TF_COLUMNS: tuple[tuple[str, str], ...] = (("hit@1", "TF Hit@1"), ("tsr", "TF TSR"),
                                           ("rejection_recovery", "TF rej. rec."))


def find_interactive_runs(root: str | os.PathLike) -> list[Path]:
    """Run folders (holding metrics.json) at most two levels under `root`, sorted."""
    root = Path(root)
    if not root.is_dir():
        raise TraceDataError("interactive runs folder not found (expected `trace-bench interact` --out folders)",
                             path=root)
    found = {p.parent for pattern in (METRICS_FILE, f"*/{METRICS_FILE}", f"*/*/{METRICS_FILE}")
             for p in root.glob(pattern)}
    return sorted(found)


def _cell(metrics: Mapping[str, Any], col: LiveColumn) -> tuple[float | None, list[float] | None]:
    if col.section == "trace":
        trace = metrics.get("trace") or {}
        value = (trace.get("values") or {}).get(col.metric)
        ci = (trace.get("ci") or {}).get(col.metric) or {}
    else:
        # turn_metric also reads a metrics.json from before the SnipRec ids
        from trace_metrics.lib.interactive import turn_metric

        ci = turn_metric(metrics.get(col.section) or {}, col.metric) or {}
        value = ci.get("mean")
    bounds = [ci["ci_low"], ci["ci_high"]] if ci.get("ci_low") is not None and ci.get("ci_high") is not None else None
    return value, bounds


def row_label(info: Mapping[str, Any], run: Path) -> str:
    """The leaderboard's name of the system (paper name, as Table 5) with the run label's model suffix."""
    from baselines.identity import BY_NAME

    name = str(info.get("system") or "")
    label = str(info.get("system_label") or name or run.name)
    if name in BY_NAME and label.startswith(name):
        return BY_NAME[name].label + label[len(name):]
    return label


def run_row(run: Path, metrics: Mapping[str, Any], root: Path) -> dict[str, Any]:
    """The stored row of one interactive run."""
    info = metrics.get("run") or {}
    protocol = str(metrics.get("protocol", ""))
    if protocol not in VIEWS:
        raise TraceDataError(f"unknown protocol {protocol!r}; expected one of {tuple(VIEWS)}", path=run / METRICS_FILE)
    values, cis = {}, {}
    for col in VIEWS[protocol]:
        value, ci = _cell(metrics, col)
        if value is not None:
            values[col.id] = value
        if ci is not None:
            cis[col.id] = ci
    lost = metrics.get("lost_turns") or {}
    return {
        "system": row_label(info, run),
        "baseline": str(info.get("system", "")), "family": str(info.get("family", "")),
        "session_isolated": info.get("session_isolated"), "protocol": protocol,
        "simulator": str(info.get("simulator", "")), "pool": str(info.get("pool") or "catalogue"),
        "split": str(info.get("split", "")), "turns": info.get("turns"), "corpus_version": info.get("corpus_version"),
        "kb_version": info.get("kb_version"), "n_dialogues": int(metrics.get("n_dialogues", 0)),
        "metrics": values, "ci": cis, "lost_turns": [int(lost.get("total", 0)), int(lost.get("system_turns", 0))],
        "run": run.relative_to(root).as_posix(),
    }


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
        ids = [m for m, _ in TF_COLUMNS]
        return {"system": r["system"], "metrics": {m: r["metrics"][m] for m in ids if m in r["metrics"]},
                "ci": {m: r["ci"][m] for m in ids if m in (r.get("ci") or {})}}
    return None


def interactive_rows(root: str | os.PathLike, tf_rows: Sequence[Mapping[str, Any]] = ()) -> list[dict[str, Any]]:
    """A row per interactive run under `root` (unreadable or foreign metrics.json files are skipped, logged),
    with `teacher_forced` from `tf_rows` (leaderboard rows) where one matches."""
    root = Path(root)
    rows = []
    for run in find_interactive_runs(root):
        try:
            metrics = read_json(run / METRICS_FILE)
            if not isinstance(metrics, dict) or not isinstance(metrics.get("per_turn"), list):
                raise TraceDataError("not the metrics.json of `trace-bench interact`", path=run / METRICS_FILE)
            row = run_row(run, metrics, root)
        except (TraceDataError, OSError, KeyError, TypeError, ValueError) as e:
            log.warning("skipping interactive run %s: %s", run, e)
            continue
        row["teacher_forced"] = teacher_forced(row, tf_rows)
        rows.append(row)
    from baselines.identity import IDENTITIES

    order = [i.name for i in IDENTITIES]
    rows.sort(key=lambda r: (r["protocol"] != "trace", r["pool"], r["simulator"], r["session_isolated"] is False,
                             order.index(r["baseline"]) if r["baseline"] in order else len(order), r["system"]))
    return rows


def _fmt(value: Any, ci: Sequence[float] | None, digits: int) -> str:
    if value is None:
        return "-"
    text = f"{value:.{digits}f}"
    return text + (f" ±{(ci[1] - ci[0]) / 2:.{digits}f}" if ci else "")


def _lines(row: Mapping[str, Any], protocol: str) -> list[str]:
    cols = VIEWS[protocol]
    out = [row["system"] + ("‡" if row.get("session_isolated") is False else ""), row["simulator"], row["pool"],
           str(row["n_dialogues"]), *(_fmt(row["metrics"].get(c.id), row["ci"].get(c.id), c.digits) for c in cols)]
    if protocol == "trace":
        tf = row.get("teacher_forced") or {"metrics": {}, "ci": {}}
        out += [_fmt(tf["metrics"].get(m), tf["ci"].get(m), 3) for m, _ in TF_COLUMNS]
    out.append(f"{row['lost_turns'][0]} / {row['lost_turns'][1]}")
    return out


def _headers(protocol: str) -> list[str]:
    cols = VIEWS[protocol]
    heads = ["System", "Simulator", "Pool", "Dialogues", *(c.label + ("↑" if c.higher_is_better else "↓") for c in cols)]
    if protocol == "trace":
        heads += [label for _, label in TF_COLUMNS]
    return [*heads, "Lost turns"]


def format_interactive(rows: Sequence[Mapping[str, Any]]) -> str:
    """Plain-text interactive tables (one per protocol with rows), cells with ± half the 95% interval."""
    parts = []
    for protocol in VIEWS:
        body = [_lines(r, protocol) for r in rows if r["protocol"] == protocol]
        if not body:
            continue
        heads = _headers(protocol)
        widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(heads)]
        title = ("Interactive: a simulated traveler talks to each system (trace-bench interact); TF = the "
                 "teacher-forced row of the same system, pool and corpus" if protocol == "trace" else
                 "Interactive, SnipRec's protocol: the target venue among the catalogue, all turns pooled")
        parts += [title, "  ".join(h.ljust(w) for h, w in zip(heads, widths, strict=True))]
        parts += ["  ".join(v.ljust(w) for v, w in zip(b, widths, strict=True)) for b in body]
        if any(r.get("session_isolated") is False for r in rows if r["protocol"] == protocol):
            parts.append("‡ not session-isolated (memory across dialogues): its dialogues ran one at a time")
        parts.append("±: half the width of the 95% cluster-bootstrap interval (dialogues resampled; bounds in the "
                     "CSV and JSON; CGS, a formula on means, has none)" + ("; '-': no value (TF: no teacher-forced "
                     "run of that system on this corpus)" if protocol == "trace" else ""))
        parts.append("")
    return "\n".join(parts)


def _csv(rows: Sequence[Mapping[str, Any]], protocol: str) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    cols = [c.id for c in VIEWS[protocol]]
    tf = [f"tf_{m}" for m, _ in TF_COLUMNS] if protocol == "trace" else []
    writer.writerow(["system", "simulator", "pool", "dialogues", *(f"{m}{s}" for m in cols + tf
                                                                   for s in ("", "_ci_low", "_ci_high")),
                     "lost_turns", "system_turns", "run"])
    for r in rows:
        if r["protocol"] != protocol:
            continue
        line: list[Any] = [r["system"], r["simulator"], r["pool"], r["n_dialogues"]]
        for m in cols:
            line += [r["metrics"].get(m), *(r["ci"].get(m) or (None, None))]
        t = r.get("teacher_forced") or {"metrics": {}, "ci": {}}
        for m in ([m for m, _ in TF_COLUMNS] if protocol == "trace" else []):
            line += [t["metrics"].get(m), *(t["ci"].get(m) or (None, None))]
        writer.writerow([*line, *r["lost_turns"], r["run"]])
    return buf.getvalue()


def write_interactive(rows: Sequence[Mapping[str, Any]], out_dir: str | os.PathLike,
                      root: str | os.PathLike) -> dict[str, Path]:
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
        raise TraceDataError("expected {\"root\": ..., \"rows\": [...]} (written by `trace-bench leaderboard "
                             "--interactive`)", path=path)
    return Path(data.get("root") or Path(path).parent), data["rows"]
