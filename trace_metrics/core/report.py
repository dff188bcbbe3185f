"""What `trace-bench core` prints (and the Space's CoRE tab shows): the per-factor table of a run with its
missing ratings (and the reliability verdict of each factor, where a report sits beside the run), the
agreement table of a meta-evaluation, and the summary of a reliability report."""

from __future__ import annotations

from typing import Any

from trace_bench.tables import markdown_table
from trace_dataset.constants import NOT_OWN_SHARE
from trace_metrics.tables import text_table


def _fmt(x: Any, digits: int = 3) -> str:
    if x is None:
        return "-"
    return f"{x:.{digits}f}" if isinstance(x, float) else str(x)


MISSING_NOTE = (
    f"† more than {NOT_OWN_SHARE:.0%} of these ratings are missing (no valid rating after the "
    "retries): the mean is not the evaluator's result on this set"
)


def missing_cell(missing: int, n: int) -> tuple[str, bool]:
    """("k (s%)", over): the missing count with its share of n + missing; over the NOT_OWN_SHARE limit or not."""
    total = missing + n
    if not total:
        return "0", False
    share = missing / total
    return f"{missing} ({100 * share:.0f}%)", share > NOT_OWN_SHARE


def format_summary(summary: dict[str, Any], verdicts: dict[str, dict[str, Any]] | None = None) -> str:
    """The per-factor table of a CoRE run (what `core score` and `evaluate --core` print): every mean beside
    its missing ratings (count and share); a row whose share is over NOT_OWN_SHARE is marked with a dagger and
    a footnote, as the mean of the few ratings the model did give is not the evaluator's result on the set.
    `verdicts` (`core.reliability.read_verdicts`): a "reliability" column with each factor's verdict."""
    rows, marked = [], False
    for f, s in summary["factors"].items():
        cell, over = missing_cell(s["n_missing"], s["n"])
        marked |= over
        rows.append([f + (" †" if over else ""), _fmt(s["mean"]), str(s["n"]), cell])
    r = summary["ratings"]
    cell, over = missing_cell(r["missing"], r["ok"])
    marked |= over
    rows.append(
        [
            "factor_mean (0-4)" + (" †" if over else ""),
            _fmt(summary["factor_mean"]["mean"]),
            str(summary["factor_mean"]["n"]),
            cell,
        ]
    )
    if "overall" in summary:
        o = summary["overall"]
        cell, over = missing_cell(o["n_failed"], o["n"])
        marked |= over
        rows.append(
            ["overall (debate, 0-100)" + (" †" if over else ""), _fmt(o["mean"], 1), str(o["n"]), cell]
        )
    header = ["CoRE factor", "mean", "n", "missing"]
    if verdicts is not None:
        header.append("reliability")
        keys = [*summary["factors"], "factor_mean", "overall"]
        for row, key in zip(rows, keys, strict=False):
            row.append((verdicts.get(key) or {}).get("verdict") or "not measured")
    text = text_table(header, rows)
    if marked:
        text += "\n" + MISSING_NOTE
    r = summary["ratings"]
    text += f"\nratings: {r['ok']} of {r['total']} valid; missing by reason: " + ", ".join(
        f"{k} {v}" for k, v in r["by_status"].items() if k != "ok"
    )
    if "overall" in summary:
        o = summary["overall"]
        text += (
            f"\ndebates: consensus in {_fmt(o['consensus_rate'])} of them; rounds {o['rounds']}; "
            f"{o['failed_messages']} of {o['messages']} debater replies unusable"
        )
    return text


def format_meta(result: dict[str, Any]) -> str:
    """The agreement table of a meta-evaluation result."""
    header = ["factor", "n", "missing", "QWK", "Spearman", "Kendall tau_b", "CoRE mean", "human mean"]
    rows = []
    for f, s in result["factors"].items():
        rows.append(
            [
                f,
                str(s["n"]),
                str(s["n_missing_core"]),
                _fmt(s["qwk"]),
                _fmt(s["spearman"]),
                _fmt(s["kendall_tau_b"]),
                _fmt(s["core_mean"], 2),
                _fmt(s["human_mean"], 2),
            ]
        )
    p, m = result["pooled"], result["macro"]
    rows.append(
        [
            "pooled (all factors)",
            str(p["n"]),
            "",
            _fmt(p["qwk"]),
            _fmt(p["spearman"]),
            _fmt(p["kendall_tau_b"]),
            "",
            "",
        ]
    )
    rows.append(
        ["mean over factors", "", "", _fmt(m["qwk"]), _fmt(m["spearman"]), _fmt(m["kendall_tau_b"]), "", ""]
    )
    for name, s in result["overall"].items():
        label = "overall: debate" if name == "multi_agent" else "overall: factor mean"
        rows.append(
            [
                label,
                str(s["n"]),
                str(s["n_missing_core"]),
                "",
                _fmt(s["spearman"]),
                _fmt(s["kendall_tau_b"]),
                _fmt(s["core_mean"], 2),
                _fmt(s["human_mean"], 2),
            ]
        )
    c = result["coupling"]
    rank = result["ranking"]["overall"]
    return (
        f"{result['n']['shared_logs']} logs rated by both (QWK over labels {result['label_set']})\n"
        + text_table(header, rows)
        + f"\nfactor coupling, mean |Kendall tau_b|: CoRE {_fmt(c['core']['mean_abs'])}, human "
        f"{_fmt(c['human']['mean_abs'])} (paper: humans 0.22, LLM evaluators 0.25-0.36)"
        + f"\nsystem ranking agreement (overall, Kendall tau_b): {_fmt(rank['kendall_tau_b'])} over "
        f"{len(rank['systems'])} systems"
    )


def format_reliability(report: dict[str, Any], markdown: bool = False) -> str:
    """The summary of a reliability report: per key its figures and verdict, then self-preference and the
    human agreement; `markdown` for reliability.md (else the CLI's text table)."""
    header = ["key", "ICC(1,1) [95% CI]", "identical", "order flips [95% CI]", "length rho [95% CI]"]
    header += ["LC score (raw) per system", "QWK", "verdict"]
    rows = []
    for key, e in report["keys"].items():
        r, o, ln = e["repeat"], e["order"], e["length"]
        lc = ", ".join(
            f"{name} {_fmt(s['lc'], 2)} ({_fmt(s['raw'], 2)})" for name, s in ln["systems"].items()
        )
        rows.append(
            [
                key,
                f"{_fmt(r['icc'], 2)} [{_fmt(r['ci_low'], 2)}, {_fmt(r['ci_high'], 2)}]",
                _fmt(r["identical_share"], 2),
                f"{_fmt(o['flip_rate'], 2)} [{_fmt(o['ci_low'], 2)}, {_fmt(o['ci_high'], 2)}]",
                f"{_fmt(ln['spearman'], 2)} [{_fmt(ln['ci_low'], 2)}, {_fmt(ln['ci_high'], 2)}]",
                lc or "-",
                _fmt((e.get("human") or {}).get("qwk"), 2),
                e["verdict"] or "not measured",
            ]
        )
    judge = report["judge"]
    temperature = (judge.get("settings") or {}).get("temperature")
    lines = [
        f"{report['kind']} reliability: judge {judge.get('backend')} {judge.get('model')} "
        f"(temperature {temperature}), {report['n_items']} items of {', '.join(report['systems'])}, "
        f"k = {report['k']} repeats (seeds {report['seed']}..{report['seed'] + report['k'] - 1})",
        "",
        markdown_table(header, rows) if markdown else text_table(header, rows),
        "",
    ]
    if temperature == 0.0:
        lines.append("greedy decoding: the repeats measure only what changes the answer besides the seed.")
    sp = report["self_preference"]
    if sp["flag"]:
        shared = [n for n, s in sp["systems"].items() if s["shared"]]
        lines.append(
            f"self-preference: the judge ({sp['judge_family']}) shares its model family with "
            f"{', '.join(shared)}: {len(sp['rows'])} rows concerned"
        )
    else:
        lines.append(f"self-preference: no rated system shares the judge's family ({sp['judge_family']})")
    if report.get("human"):
        lines.append("human agreement (core meta):")
        lines.append(format_meta(report["human"]))
    return "\n".join(lines)
