"""metrics.json of an interactive run, and the tables the CLI prints (SnipRec Table 4 layout per turn).

The run's logs are read into items here (`turn_items`: the ranked turns; the dialogue records; the
predictions indexed by turn), with what the run itself counts (lost turns, the travellers' decisions); every
metric is computed in `trace_metrics.lib.interactive` from its declaration in `trace_metrics.specs`
(benchmarks "sniprec", "live" and, on the live turns, "trace")."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from trace_dataset.constants import SEED
from trace_dataset.kb.store import KnowledgeBase
from trace_metrics.lib.interactive import (
    live_outcomes,
    live_trace_metrics,
    per_turn_table,
    ranked_turn_overall,
    turn_metric,
)
from trace_metrics.tables import Column, column, format_value, markdown_table

# The per-turn table (SnipRec's Table 4 layout, its metrics' ids in trace_metrics.specs, benchmark "sniprec"):
# the CLI's Markdown and the Space's Interactive tab. Labels and directions are the declarations'.
TURN_COLUMNS: tuple[Column, ...] = (
    column("sniprec_hit@1"),
    column("sniprec_hit@5"),
    column("sniprec_hit@10"),
    column("avg_position", digits=1),
    column("sniprec_mrr", "Avg MRR", digits=4),  # Table 4's header
)


def turn_items(predictions: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """{dialogue_id, turn, position, unranked} of every system turn that was asked for a ranking (farewells
    excluded); `unranked`: the system ranked nothing (SnipRec's protocol), so the turn has no position."""
    out = []
    for p in predictions:
        info = (p.get("meta") or {}).get("interactive") or {}
        if info.get("requested_action") == "farewell" or "turn" not in info:
            continue
        out.append(
            {
                "dialogue_id": p["dialogue_id"],
                "turn": info["turn"],
                "position": info.get("target_position"),
                "unranked": bool(info.get("unranked")),
            }
        )
    return out


def lost_counts(predictions: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    reasons: Counter = Counter()
    dialogues = set()
    for p in predictions:
        why = (p.get("meta") or {}).get("lost")
        if why:
            reasons[why] += 1
            dialogues.add(p["dialogue_id"])
    return {
        "total": sum(reasons.values()),
        "by_reason": dict(sorted(reasons.items())),
        "dialogues_with_lost_turns": len(dialogues),
        "system_turns": len(predictions),
    }


def traveler_counts(items: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """What the simulated travelers did, from the logs: decisions by form, wording (llm or rules fallback) and
    why each fallback happened, sentences removed for naming a target."""
    forms: Counter = Counter()
    wording: Counter = Counter()
    fallbacks: Counter = Counter()
    removed = 0
    for it in items:
        for t in (it.get("traveler") or {}).get("turns", []):
            forms[t.get("form", "?")] += 1
            wording[t.get("wording", "rules")] += 1
            if t.get("fallback"):
                fallbacks[t["fallback"]] += 1
            removed += int(t.get("sentences_removed", 0))
    return {
        "decisions": dict(sorted(forms.items())),
        "wording": dict(sorted(wording.items())),
        "fallbacks": dict(sorted(fallbacks.items())),
        "sentences_removed": removed,
    }


def build_metrics(
    items: Sequence[Mapping[str, Any]],
    kb: KnowledgeBase,
    *,
    protocol: str,
    run: Mapping[str, Any],
    n_boot: int = 10_000,
    seed: int = SEED,
) -> dict[str, Any]:
    """metrics.json: run summary, per-turn table, overall figures, Trace metrics of the live turns."""
    predictions = [p for it in items for p in it["predictions"]]
    titems = turn_items(predictions)
    out: dict[str, Any] = {
        "protocol": protocol,
        "run": dict(run),
        "n_dialogues": len(items),
        "per_turn": per_turn_table(titems),
        "overall": ranked_turn_overall(titems, n_boot, seed),
        "lost_turns": lost_counts(predictions),
        "travelers": traveler_counts(items),
    }
    if protocol == "trace":
        out["dialogue"] = live_outcomes([it["record"] for it in items], n_boot, seed)
        index = {(p["dialogue_id"], p["turn_id"]): p for p in predictions}
        out["trace"] = live_trace_metrics([it["record"] for it in items], index, kb, n_boot=n_boot, seed=seed)
    return out


def turn_table_markdown(rows: Sequence[Mapping[str, Any]], title: str = "") -> str:
    """The per-turn table laid out like SnipRec's Table 4 (Turn, Hits@1/5/10, Avg Pos, Avg MRR) plus n (and the
    unranked turns, where there are any)."""
    unranked = any(r.get("n_unranked") for r in rows)  # a column only where a system ranked nothing
    table = markdown_table(
        ["Turn", *(c.label for c in TURN_COLUMNS), "n", *(["unranked"] if unranked else [])],
        (
            [
                str(r["turn"]),
                *(format_value(turn_metric(r, c.metric), c.digits) for c in TURN_COLUMNS),
                str(r["n"]),
                *([str(r.get("n_unranked", 0))] if unranked else []),
            ]
            for r in rows
        ),
    )
    return "\n".join([f"**{title}**", "", table]) if title else table


def summary_text(metrics: Mapping[str, Any]) -> str:
    """What the CLI prints after a run."""
    run = metrics["run"]
    lines = [
        f"{run.get('system_label', run.get('system'))} vs {run.get('simulator')} simulator "
        f"({metrics['protocol']} protocol): {metrics['n_dialogues']} dialogues",
        "",
        turn_table_markdown(metrics["per_turn"]),
    ]
    lost = metrics["lost_turns"]
    lines.append("")
    lines.append(
        f"lost turns: {lost['total']} of {lost['system_turns']} system turns {lost['by_reason'] or ''}".rstrip()
    )
    trav = metrics.get("travelers") or {}
    if trav.get("fallbacks") or trav.get("wording", {}).get("llm"):
        lines.append(
            f"traveler wording: {trav['wording']}, fallbacks to the rules wording: {trav['fallbacks'] or 0}, "
            f"sentences removed for naming a target: {trav['sentences_removed']}"
        )
    if "dialogue" in metrics:
        d = metrics["dialogue"]
        sr, tts = d["success_rate"], d["turns_to_success"]
        lines.append(
            f"success rate {format_value(sr['mean'])} [{format_value(sr['ci_low'])}, "
            f"{format_value(sr['ci_high'])}], system turns to success {format_value(tts['mean'], 2)} "
            f"(n={tts['n']})"
        )
    if "trace" in metrics:
        v = metrics["trace"]["values"]
        shown = (
            "hit@1",
            "mrr",
            "tsr",
            "t2r",
            "rejection_recovery",
            "cgs",
            "citation_density",
            "spatial_coherence@2km",
        )
        lines.append(
            "live Trace metrics: " + ", ".join(f"{m} {format_value(v.get(m))}" for m in shown if m in v)
        )
    return "\n".join(lines)
