"""The paper's Table 1 (moderator success, early stopping) and Table 3 (Gini (entropy), coverage) laid out
from run folders of `trace-bench collab-rec run`, with the paper's own numbers (`paper_reference.json`) below.

Rows group runs by model, rejection policy and Eq. 10 reading: a SASI run fills the SASI column of every row
of its model (one round: no reliability); a MASI run the M_1 column; a MAMI run its M_1 and final columns.
RandRec and TopPop go into a footnote line, as in the paper. The "Eq. 10" column says which reliability each
row's runs used: "printed" (the paper's formula, the default) or "code" (the authors' code, μ2 = μ1,
`--code-behaviour mu2_is_mu1`); the paper's own rows come from the authors' code.

Every LLM row shows its failed agent calls (a failed call is an agent abstaining that round, never filled in)
as a share of its calls, in both tables; a row whose share is over `NOT_OWN_SHARE` (10%,
trace_dataset.constants, the leaderboard's rule) is marked with a dagger and a footnote: its numbers are not the system's own result.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from trace_dataset.constants import NOT_OWN_SHARE
from trace_dataset.io import TraceDataError, read_json
from trace_harness.protocols.collab_rec.run import METRICS_FILE, RUN_FILE
from trace_metrics.tables import format_value, markdown_table

REFERENCE_FILE = Path(__file__).with_name("paper_reference.json")
SYSTEM_ORDER = ("SASI", "M_1", "M_eq13", "M_early", "M_10", "M_early_div")
PAPER_SYSTEMS = ("SASI", "M_1", "M_early", "M_10")


def eq10_reading(run: dict[str, Any]) -> str:
    """ "code" when the run's moderator used the authors' Eq. 10 (μ2 = μ1), else "printed"."""
    config = run.get("config") or {}
    return config.get("eq10") or ("code" if "mu2_is_mu1" in config.get("code_behaviours", ()) else "printed")


def _model(run: dict[str, Any]) -> str:
    llm = run.get("llm") or {}
    return str(llm.get("model", "")).rstrip("/").rsplit("/", 1)[-1] or "-"


# the fields the tables read, and their JSON types (a field marked optional may be missing or null)
RUN_FIELDS: dict[str, tuple[type, bool]] = {
    "strategy": (str, False),
    "config": (dict, False),
    "llm": (dict, True),
}
METRICS_FIELDS: dict[str, tuple[type, bool]] = {"systems": (dict, False)}
_JSON_NAMES: dict[type, str] = {str: "a string", dict: "an object"}


def _check_fields(value: Any, fields: dict[str, tuple[type, bool]], path: Path) -> None:
    """TraceDataError naming the file and the field when `value` is not an object with `fields` of their types."""
    if not isinstance(value, dict) or any(
        k not in value for k, (_, optional) in fields.items() if not optional
    ):
        raise TraceDataError(
            "not written by `trace-bench collab-rec run`: expected a JSON object with "
            f"{', '.join(k for k, (_, optional) in fields.items() if not optional)}",
            path=path,
        )
    for key, (kind, optional) in fields.items():
        if not isinstance(value.get(key), kind) and not (optional and value.get(key) is None):
            raise TraceDataError(
                f"{key}: {json.dumps(value.get(key))[:60]}; expected {_JSON_NAMES[kind]} (not written by "
                "`trace-bench collab-rec run`)",
                path=path,
            )


def load_runs(dirs: Sequence[str | Path]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    out = []
    for d in dirs:
        d = Path(d)
        if not (d / METRICS_FILE).exists():
            raise TraceDataError(
                f"no {METRICS_FILE}: not a finished `trace-bench collab-rec run` folder", path=d
            )
        run, metrics = read_json(d / RUN_FILE), read_json(d / METRICS_FILE)
        for name, value, fields in ((RUN_FILE, run, RUN_FIELDS), (METRICS_FILE, metrics, METRICS_FIELDS)):
            _check_fields(value, fields, d / name)
        if not all(isinstance(v, dict) for v in metrics["systems"].values()):
            raise TraceDataError(
                "systems: expected an object of system name -> metrics object", path=d / METRICS_FILE
            )
        out.append((run, metrics))
    return out


def _rows(runs: list[tuple[dict[str, Any], dict[str, Any]]]) -> dict[tuple[str, str, str], dict[str, Any]]:
    """(model, rejection, Eq. 10 reading) -> {"systems": {name: metrics}, "early": {...}, "rounds": ...}."""
    rows: dict[tuple[str, str, str], dict[str, Any]] = {}
    shared: dict[str, dict[str, Any]] = {}  # model -> SASI metrics
    shared_counts: dict[str, dict[str, Any]] = {}
    for run, metrics in runs:
        if run["strategy"] in ("randrec", "toppop"):
            continue
        model = _model(run)
        if run["strategy"] == "sasi":
            shared[model] = metrics["systems"]["SASI"]
            shared_counts[model] = metrics
            continue
        key = (model, "A" if run["config"]["rejection"] == "aggressive" else "M", eq10_reading(run))
        row = rows.setdefault(key, {"systems": {}, "early": {}, "rounds": None, "calls": 0, "failures": 0})
        _add_calls(row, metrics)
        row["systems"].update(metrics["systems"])
        row["early"] = metrics.get("early_stopping") or row["early"]
        row["rounds"] = (metrics.get("rounds") or {}).get("mean_rounds_run", row["rounds"])
    for model, sasi in shared.items():
        keys = [k for k in rows if k[0] == model] or [(model, "-", "-")]
        for key in keys:
            row = rows.setdefault(
                key, {"systems": {}, "early": {}, "rounds": None, "calls": 0, "failures": 0}
            )
            row["systems"]["SASI"] = sasi
            _add_calls(row, shared_counts[model])
    return rows


def _add_calls(row: dict[str, Any], metrics: dict[str, Any]) -> None:
    counts = metrics.get("counts") or {}
    row["calls"] += int(counts.get("agent_calls") or 0)
    row["failures"] += int(counts.get("agent_failures") or 0)


def failure_share(row: dict[str, Any]) -> float | None:
    """Failed agent calls / agent calls of a table row (None without calls)."""
    return row["failures"] / row["calls"] if row["calls"] else None


def _failure_cells(row: dict[str, Any]) -> tuple[str, str]:
    """(model cell suffix, failed-calls cell): a dagger on a row over the threshold."""
    share = failure_share(row)
    if share is None:
        return "", "-"
    mark = " †" if share > NOT_OWN_SHARE else ""
    return mark, f"{row['failures']}/{row['calls']} ({100 * share:.0f}%)"


def failure_note(rows: dict[tuple[str, str, str], dict[str, Any]]) -> str:
    if not any((failure_share(r) or 0) > NOT_OWN_SHARE for r in rows.values()):
        return ""
    return (
        f"† more than {NOT_OWN_SHARE:.0%} of the row's agent calls failed (no valid reply after the "
        "repairs; the agent abstained): its numbers are not the system's own result."
    )


def non_llm_line(runs: list[tuple[dict[str, Any], dict[str, Any]]]) -> str:
    parts = []
    for _, metrics in runs:
        for name, m in metrics["systems"].items():
            if name in ("RandRec", "TopPop"):
                parts.append(
                    f"{name} = {format_value(m['moderator_success'])} (Gini {format_value(m['gini'], 2)}, entropy "
                    f"{format_value(m['entropy'], 2)}, coverage {100 * m['coverage']:.1f}%)"
                )
    return "Non-LLM baselines: " + "; ".join(parts) if parts else ""


def table1(runs: list[tuple[dict[str, Any], dict[str, Any]]]) -> str:
    rows = _rows(runs)
    if not rows:
        return "(no SASI, MASI or MAMI run given)" + (
            f"\n\n{non_llm_line(runs)}" if non_llm_line(runs) else ""
        )
    systems = [s for s in SYSTEM_ORDER if any(s in r["systems"] for r in rows.values())]
    head = [
        "Model",
        "Rej.",
        "Eq. 10",
        *systems,
        "Succ. rate %",
        "Avg conv. round",
        "Ties %",
        "Rounds run",
        "Failed calls",
    ]
    body = []
    for (model, rej, eq10), row in sorted(rows.items()):
        early = row["early"]
        mark, failed = _failure_cells(row)
        cells = [
            model + mark,
            rej,
            eq10,
            *(format_value(row["systems"].get(s, {}).get("moderator_success")) for s in systems),
            format_value(early.get("success_rate_pct"), 1),
            format_value(early.get("avg_convergence_round"), 2),
            format_value(early.get("ties_pct"), 1),
            format_value(row["rounds"], 2),
            failed,
        ]
        body.append(cells)
    foot = "\n\n".join(x for x in (failure_note(rows), non_llm_line(runs)) if x)
    return markdown_table(head, body) + (f"\n\n{foot}" if foot else "")


def table3(runs: list[tuple[dict[str, Any], dict[str, Any]]]) -> str:
    rows = _rows(runs)
    if not rows:
        return "(no SASI, MASI or MAMI run given)"
    systems = [s for s in SYSTEM_ORDER if any(s in r["systems"] for r in rows.values())]
    head = [
        "Model",
        "Rej.",
        "Eq. 10",
        *(f"{s} Gini (Ent.)" for s in systems),
        *(f"{s} Cov. % (avg)" for s in systems),
        "Failed calls",
    ]
    body = []
    for (model, rej, eq10), row in sorted(rows.items()):
        ms = [row["systems"].get(s) for s in systems]
        ge = [f"{m['gini']:.2f} ({m['entropy']:.2f})" if m else "-" for m in ms]
        cov = [f"{100 * m['coverage']:.1f} ({m['avg_recs_per_item']:.1f})" if m else "-" for m in ms]
        mark, failed = _failure_cells(row)
        body.append([model + mark, rej, eq10, *ge, *cov, failed])
    note = failure_note(rows)
    return markdown_table(head, body) + (f"\n\n{note}" if note else "")


def reference_tables() -> str:
    """The paper's Table 1 and Table 3 from paper_reference.json, as Markdown (both produced by the authors'
    code: Eq. 10 with μ2 = μ1, the "code" reading of our tables)."""
    ref = json.loads(REFERENCE_FILE.read_text(encoding="utf-8"))
    head1 = [
        "Model",
        "Rej.",
        "SASI",
        "M_1",
        "M_early",
        "M_10",
        "Succ. rate %",
        "Avg conv. round",
        "Odds ratio",
        "Ties %",
    ]
    keys1 = (
        "model",
        "rejection",
        "SASI",
        "M_1",
        "M_early",
        "M_10",
        "success_rate_pct",
        "avg_conv_round",
        "odds_ratio",
        "ties_pct",
    )
    lines = [markdown_table(head1, ([str(r[k]) for k in keys1] for r in ref["table1"]))]
    nl = ref["non_llm"]
    lines += [
        "",
        "Non-LLM baselines: "
        + "; ".join(
            f"{n} = {v['moderator_success']} (Gini {v['gini']}, entropy {v['entropy']}, coverage {v['coverage_pct']}%)"
            for n, v in nl.items()
        ),
        "",
    ]
    head3 = [
        "Model",
        "Rej.",
        *(f"{s} Gini (Ent.)" for s in PAPER_SYSTEMS),
        *(f"{s} Cov. % (avg)" for s in PAPER_SYSTEMS),
    ]
    names = list(PAPER_SYSTEMS)
    body3 = []
    for r in ref["table3"]:
        ge = [f"{v[0]:.2f} ({v[1]:.2f})" if (v := r["gini_entropy"].get(s)) else "-" for s in names]
        cov = [f"{v[0]:.1f} ({v[1]:.1f})" if (v := r["coverage_avg"].get(s)) else "-" for s in names]
        body3.append([r["model"], r["rejection"], *ge, *cov])
    lines.append(markdown_table(head3, body3))
    return "\n".join(lines)
