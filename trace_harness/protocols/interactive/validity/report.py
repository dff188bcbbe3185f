"""The simulator report of a `trace` run: OUT/simulator_report.json and OUT/simulator_report.md.

Checks (each graded by `trace_metrics.lib.reliability.grade` on its documented threshold; the run's verdict
is the `worst` of them, and it stands beside every live column, since each is the traveller's acceptance):

    leak_rate              traveller utterances that name or quote a target the system had not shown (leaks.py)
    first_turn_success     dialogues accepted at the very first recommendation
    no_effort_share        dialogues won with no system effort (first recommendation, every candidate a target)
    fallback_share         LLM traveller only: replies that fell back to the rules wording
    counterfactual_margin  the system's live success minus the best deliberately bad system's (random_pick,
                           contrary) on the same travellers, paired by dialogue; only where they were run

Shares carry the cluster-bootstrap interval over dialogues (`reliability.simulator`). Files are written
atomically and hold no time or path, so the same run gives the same bytes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from trace_dataset.constants import SEED
from trace_dataset.io import write_json, write_text
from trace_dataset.kb.store import KnowledgeBase
from trace_harness.protocols.interactive.simulator.goal import World
from trace_harness.protocols.interactive.validity.leaks import dialogue_leaks
from trace_metrics.lib.benchmark_items import accepted
from trace_metrics.lib.reliability import THRESHOLDS, grade, worst
from trace_metrics.lib.reliability.simulator import (
    any_ranking_wins,
    first_recommendation_accept,
    margin,
    ratio_interval,
)
from trace_metrics.tables import format_value, markdown_table

REPORT_FILE = "simulator_report.json"
REPORT_MD = "simulator_report.md"
VERSION = "trace-bench simulator report v1"


def _graded(check: str, figure: dict[str, Any]) -> dict[str, Any]:
    low, high = figure.get("ci_low"), figure.get("ci_high")
    interval = (low, high) if low is not None and high is not None else None
    t = THRESHOLDS[check]
    return {
        **figure,
        "verdict": grade(check, figure.get("value"), interval),
        "threshold": {"reliable": t.reliable, "care": t.care, "higher_is_better": t.higher_is_better},
        "source": t.source,
    }


def _targets_per_turn(item: Mapping[str, Any]) -> tuple[list[int], list[int]]:
    infos = [(p.get("meta") or {}).get("interactive") or {} for p in item["predictions"]]
    return [int(i.get("n_targets", 0)) for i in infos], [int(i.get("n_candidates", 0)) for i in infos]


def reply_validity(items: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """How the traveller's replies were worded: by the model as written, trimmed (sentences naming a target
    removed), or the rules wording of the same decision after a fallback (by reason). Every decision is the
    rules policy's (constrained): the model only words it."""
    wording: Counter = Counter()
    reasons: Counter = Counter()
    trimmed = 0
    for it in items:
        for t in it["traveler"].get("turns", []):
            wording[t.get("wording", "rules")] += 1
            trimmed += int(t.get("wording") == "llm" and int(t.get("sentences_removed", 0)) > 0)
            if t.get("fallback"):
                reasons[t["fallback"]] += 1
    llm = wording.get("llm", 0)
    return {
        "replies": sum(wording.values()),
        "constrained_decisions": sum(wording.values()),
        "llm_as_written": llm - trimmed,
        "llm_trimmed": trimmed,
        "rules_fallbacks": dict(sorted(reasons.items())),
        "rules_wording": wording.get("rules", 0),
    }


def _counterfactual(
    items: Sequence[Mapping[str, Any]],
    bad: Mapping[str, Sequence[Mapping[str, Any]]],
    n_boot: int,
    seed: int,
) -> dict[str, Any] | None:
    if not bad:
        return None
    real = {it["record"]["dialogue_id"]: accepted(it["record"]) for it in items}
    systems = {}
    for name, runs in sorted(bad.items()):
        scores = {it["record"]["dialogue_id"]: accepted(it["record"]) for it in runs}
        systems[name] = margin(real, scores, n_boot, seed)
    # the margin over the best bad system: the smallest one
    name = min(systems, key=lambda s: (systems[s]["value"] is None, systems[s]["value"] or 0.0))
    return {**_graded("counterfactual_margin", dict(systems[name])), "against": name, "systems": systems}


def build_report(
    items: Sequence[Mapping[str, Any]],
    world: World | KnowledgeBase,
    run: Mapping[str, Any],
    *,
    counterfactual: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    n_boot: int = 10_000,
    seed: int = SEED,
) -> dict[str, Any]:
    """The report's content (module docstring) from a run's finished dialogues (record, predictions,
    traveler) on `world` (or the knowledge base it is built on) and, where run, the bad systems' dialogues on the same travellers (name -> items)."""
    world = World(world) if isinstance(world, KnowledgeBase) else world
    cache: dict[str, set[tuple[str, ...]]] = {}
    leaks = [dialogue_leaks(it, world, cache) for it in items]
    first = [first_recommendation_accept(it["record"]) for it in items]
    effortless = [any_ranking_wins(it["record"], *_targets_per_turn(it)) for it in items]
    ones = [1.0] * len(items)
    checks: dict[str, Any] = {
        "leak_rate": _graded(
            "leak_rate",
            ratio_interval(
                [sum(bool(u["leaked"]) for u in d) for d in leaks], [len(d) for d in leaks], n_boot, seed
            ),
        ),
        "first_turn_success": _graded("first_turn_success", ratio_interval(first, ones, n_boot, seed)),
        "no_effort_share": _graded("no_effort_share", ratio_interval(effortless, ones, n_boot, seed)),
    }
    validity = reply_validity(items)
    if run.get("simulator") == "llm":
        fallbacks = [sum(bool(t.get("fallback")) for t in it["traveler"].get("turns", [])) for it in items]
        turns = [len(it["traveler"].get("turns", [])) for it in items]
        checks["fallback_share"] = _graded("fallback_share", ratio_interval(fallbacks, turns, n_boot, seed))
    cf = _counterfactual(items, counterfactual or {}, n_boot, seed)
    if cf is not None:
        checks["counterfactual_margin"] = cf
    leaked = [
        {"dialogue_id": it["record"]["dialogue_id"], **u}
        for it, d in zip(items, leaks, strict=True)
        for u in d
        if u["leaked"]
    ]
    return {
        "version": VERSION,
        "run": {
            k: run.get(k) for k in ("system", "system_label", "simulator", "pool", "split", "turns", "seed")
        },
        "n_dialogues": len(items),
        "verdict": worst(c["verdict"] for c in checks.values()),
        "checks": checks,
        "counterfactual_run": cf is not None,
        "reply_validity": validity,
        "leaks": leaked,
    }


LABELS: dict[str, str] = {
    "leak_rate": "leak rate",
    "first_turn_success": "first-turn success",
    "no_effort_share": "won with no system effort",
    "fallback_share": "LLM replies fallen back to rules",
    "counterfactual_margin": "margin over the deliberately bad systems",
}


def _interval(c: Mapping[str, Any]) -> str:
    if c.get("ci_low") is None or c.get("ci_high") is None:
        return ""
    return f" [{format_value(c['ci_low'])}, {format_value(c['ci_high'])}]"


def figures(report: Mapping[str, Any]) -> str:
    """One line of every check's figure and verdict (the Space's hover text, the CLI's legend)."""
    parts = [
        f"{LABELS[k]} {format_value(c.get('value'))}{_interval(c)} ({c.get('verdict') or 'not measured'})"
        for k, c in report["checks"].items()
    ]
    if not report.get("counterfactual_run"):
        parts.append("counterfactual check not run")
    return f"simulator {report.get('verdict') or 'not measured'}: " + "; ".join(parts)


def report_markdown(report: Mapping[str, Any]) -> str:
    """OUT/simulator_report.md: the verdict line, the checks' table, the margins and the reply counts."""
    run = report["run"]
    lines = [
        f"# Simulator report: {run.get('system_label') or run.get('system')} vs the {run.get('simulator')} "
        f"traveller ({report['n_dialogues']} dialogues)",
        "",
        f"Verdict: **{report.get('verdict') or 'not measured'}** (the worst of the checks; it holds for every "
        "live column)",
        "",
    ]
    rows = []
    for k, c in report["checks"].items():
        t = c["threshold"]
        sign = ">=" if t["higher_is_better"] else "<="
        rows.append(
            [
                LABELS[k],
                f"{format_value(c.get('value'))}{_interval(c)}",
                f"reliable {sign} {t['reliable']}, care {sign} {t['care']}",
                str(c.get("verdict") or "not measured"),
                c["source"],
            ]
        )
    lines += [markdown_table(["check", "value [95% CI]", "thresholds", "verdict", "source"], rows), ""]
    cf = report["checks"].get("counterfactual_margin")
    if cf is None:
        lines.append(
            "Counterfactual check: not run (`trace-bench interact` runs it unless --no-counterfactual)."
        )
    else:
        margins = [
            [
                name,
                format_value(m.get("real")),
                format_value(m.get("bad")),
                f"{format_value(m.get('value'))}{_interval(m)}",
            ]
            for name, m in cf["systems"].items()
        ]
        lines += ["Live success against the deliberately bad systems (same travellers):", ""]
        lines.append(
            markdown_table(["bad system", "system's success", "its success", "margin [95% CI]"], margins)
        )
    v = report["reply_validity"]
    lines += [
        "",
        f"Traveller replies: {v['replies']} (every decision the rules policy's); worded by the model as written "
        f"{v['llm_as_written']}, trimmed of a target's name {v['llm_trimmed']}, rules fallbacks "
        f"{v['rules_fallbacks'] or 0}, rules wording {v['rules_wording']}.",
        f"Leaked utterances: {len(report['leaks'])}.",
    ]
    return "\n".join(lines) + "\n"


def write_report(out: str | Path, report: Mapping[str, Any]) -> Path:
    """OUT/simulator_report.json and .md, atomically; the JSON's path."""
    out = Path(out)
    write_json(out / REPORT_FILE, report)
    write_text(out / REPORT_MD, report_markdown(report))
    return out / REPORT_FILE


def read_report(run: str | Path) -> dict[str, Any] | None:
    """A run's simulator report; None where it has none (a run made before the report, SnipRec's protocol)."""
    from trace_dataset.io import read_json

    path = Path(run) / REPORT_FILE
    return read_json(path) if path.is_file() else None
