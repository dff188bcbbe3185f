"""Agreement between simulators: do two travellers (or two seeds of one) rank the systems the same way?

Each side is a set of `trace` runs (one per system: the run folders of `trace-bench interact`) made with one
simulator; the systems both sides ran are ranked by their live success, and Kendall tau_b between the two
rankings comes with the bootstrap interval over the travellers both sides share
(`trace_metrics.lib.reliability.ranking_agreement`: dialogues paired by id, resampled together), graded on
the `kendall_tau` threshold (SimulatorArena: rho about 0.7 for profiled simulators).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from trace_dataset.io import TraceDataError, read_json
from trace_harness.protocols.interactive.output import METRICS_FILE, read_outputs
from trace_metrics.lib.benchmark_items import accepted
from trace_metrics.lib.reliability import ranking_agreement
from trace_metrics.lib.reliability.verdict import grade
from trace_metrics.lib.stats import N_BOOT
from trace_metrics.tables import format_value, markdown_table


def side_scores(runs: Sequence[str | os.PathLike]) -> tuple[str, dict[str, dict[str, float]]]:
    """(the side's simulator and seed, system -> {dialogue id: live success}) from `trace` run folders."""
    labels, out = set(), {}
    for run in runs:
        path = Path(run)
        if not (path / METRICS_FILE).is_file():
            raise TraceDataError("not a finished `trace-bench interact` run (no metrics.json)", path=path)
        info = read_json(path / METRICS_FILE).get("run") or {}
        if info.get("system") in out:
            raise TraceDataError(f"a second run of {info.get('system')!r} on the same side", path=path)
        labels.add(f"{info.get('simulator')} traveller, seed {info.get('seed')}")
        out[str(info.get("system"))] = {
            it["record"]["dialogue_id"]: accepted(it["record"]) for it in read_outputs(path)
        }
    return " + ".join(sorted(labels)), out


def compare_sides(
    a: Mapping[str, Mapping[str, float]], b: Mapping[str, Mapping[str, float]], n_boot: int = N_BOOT
) -> dict[str, Any]:
    """tau_b between the two sides' system rankings over the dialogues every system of both sides ran."""
    systems = sorted(set(a) & set(b))
    shared = sorted(set.intersection(*(set(a[s]) & set(b[s]) for s in systems))) if systems else []
    out = ranking_agreement(
        {s: [a[s][d] for d in shared] for s in systems},
        {s: [b[s][d] for d in shared] for s in systems},
        n_boot,
    )
    low, high = out.get("ci_low"), out.get("ci_high")
    out["verdict"] = grade(
        "kendall_tau", out["tau"], (low, high) if low is not None and high is not None else None
    )
    out["success"] = {
        s: [sum(a[s][d] for d in shared) / len(shared), sum(b[s][d] for d in shared) / len(shared)]
        for s in systems
        if shared
    }
    return out


def comparison_text(label_a: str, label_b: str, result: Mapping[str, Any]) -> str:
    """What `trace-bench simulators` prints: the systems' success on both sides, then tau and its verdict."""
    rows = [[s, format_value(x), format_value(y)] for s, (x, y) in result["success"].items()]
    tau = result["tau"]
    interval = (
        f" [{format_value(result['ci_low'])}, {format_value(result['ci_high'])}]"
        if result.get("ci_low") is not None
        else ""
    )
    lines = [
        markdown_table(["system", f"success ({label_a})", f"success ({label_b})"], rows),
        "",
        f"Kendall tau_b {format_value(tau)}{interval} over {result['n_systems']} systems and "
        f"{result['n_items']} shared dialogues: {result.get('verdict') or 'not measured'}"
        + (f" ({result['note']})" if result.get("note") else ""),
    ]
    return "\n".join(lines)
