"""What a run did not do itself: its fallbacks and failures per kind, as plain counts and shares, in ONE shape
that every table showing the run reads (docs/leaderboard.md "Fallbacks and failures"; docs/llm.md).

    {"rows": 28, "threshold": 0.1, "share": 1.0, "replaced_share": 1.0, "own_result": false,
     "kinds": {"fallback_popularity": {"count": 28, "of": 28, "share": 1.0, "per": "system turn",
                                       "what": "answered by the Popularity fallback",
                                       "marked": true, "replaces": true},
               "json_failures": {"count": 28, "of": 84, "share": 0.333, "per": "LLM answer ...", ...}, ...}}

- `rows`: the run's system turns (a teacher-forced run's predictions; an interactive run's system turns).
- `kinds`: every kind the run counted (the predictions' `meta.counts`, summed by the runner into the metadata's
  `summary.rows`, and the LLM layer's usage summed over every invocation of the run), with `count`, the
  denominator `of` (`per` says of what), `share` = count / of (None when `of` is 0), `what` in words,
  `marked`: a fallback or failure of the system's answer (it moves the mark), and `replaces`: an answer the
  system did not make itself (a Popularity fallback, a turn whose state extraction failed, a failed agent call).
- `share`: the largest share among the `marked` kinds, capped at 1 (a lower bound of the turns touched by any
  kind, exact when one kind dominates): the "[fb N%]" mark.
- `replaced_share`: the largest share among the `replaces` kinds, capped at 1; `own_result` is False when it is
  over `threshold` (NOT_OWN_SHARE, 10%): the row's numbers are then not the system's own, every table marks
  them so (": not own") and the leaderboard marks them against no other row.

`fallback_report(meta)` reads a run's `.meta.json` (the runner stores it as `summary.fallbacks`, the leaderboard
reads it through `run_fallbacks`); the interactive view gives `report_of(counts, rows)` the counters of an
interactive run's predictions (`row_counts`, which the runner sums into `summary.rows` too). `mark`, `describe`, `csv_fields` and `LEGEND` are what the CLI tables,
the CSV/JSON files, the Space's hover and the gap plot show: one reading of one shape.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from trace_dataset.constants import NOT_OWN_SHARE

MARKED, REPLACES = "marked", "replaces"
# kind -> (denominator, what it counts, role); denominators: "rows" (system turns), another count of the same
# summary (its key), or an LLM usage key. Roles: REPLACES (an answer not the system's own; decides own_result),
# MARKED (a failure of the system's answer; moves the mark), "" (counted and shown, not a fallback).
ROW_KINDS: dict[str, tuple[str, str, str]] = {
    "fallback_popularity": ("rows", "answered by the Popularity fallback", REPLACES),
    "dst_extraction_failed": ("rows", "state extraction failed (the latest delta stayed invalid)", REPLACES),
    "agent_failures": ("agent_calls", "agent call failed (no valid JSON after the repairs)", REPLACES),
    "empty_response": ("rows", "empty response", MARKED),
    "quote_check_failed": ("rows", "quote check failed", MARKED),
    "query_failures": ("rows", "SnipRec query extraction failed", MARKED),
    "clarify_fallbacks": ("rows", "SnipRec clarifying question fell back to the template", MARKED),
    "quote_fallbacks": ("rows", "SnipRec evidence quote taken from the rules", MARKED),
    "quote_retry_invalid": ("rows", "quote-check retry with no valid JSON", ""),
    "unknown_labels": ("rows", "response citing a label never shown", ""),
    "hallucinated_names": ("rows", "agent name outside the catalogue", ""),
}
USAGE_KINDS: dict[str, tuple[str, str, str]] = {
    "json_failures": ("answers", "LLM answer with no valid JSON after the repairs", ""),
    "json_repairs": ("answers", "repair request after an invalid reply", ""),
    "dialect_fallbacks": (
        "requests",
        "request answered by prompt because constrained decoding was refused",
        "",
    ),
    "constraint_violations": ("constrained", "constrained reply that still failed the schema", ""),
}
NOT_KINDS = (
    "agent_calls",
    "rounds",
    "quote_retries",
    "memory_hits",
)  # counts that are no failure of any kind
PER = {
    "rows": "system turn",
    "agent_calls": "agent call",
    "requests": "LLM request",
    "constrained": "constrained request",
    "answers": "LLM answer (sent or from the cache)",
}


def _llm_usage(meta: Mapping[str, Any]) -> dict[str, Any]:
    summary = meta.get("summary") or {}
    usage = summary.get("usage_all_invocations") or summary.get("usage") or {}
    found = usage.get("llm_usage") if isinstance(usage, Mapping) else None
    return dict(found) if isinstance(found, Mapping) else {}


def _kind(count: Any, of: Any, per: str, what: str, role: str) -> dict[str, Any]:
    count, of = int(count or 0), int(of or 0)
    share = round(count / of, 4) if of else None
    return {
        "count": count,
        "of": of,
        "share": share,
        "per": per,
        "what": what,
        "marked": role in (MARKED, REPLACES),
        "replaces": role == REPLACES,
    }


def _largest(kinds: Mapping[str, Mapping[str, Any]], flag: str) -> float:
    return min(
        1.0, max((k["share"] for k in kinds.values() if k[flag] and k["share"] is not None), default=0.0)
    )


def report_of(
    counts: Mapping[str, Any],
    rows: int,
    usage: Mapping[str, Any] | None = None,
    threshold: float = NOT_OWN_SHARE,
) -> dict[str, Any]:
    """The report (module docstring) of a run that answered `rows` system turns with these counters and this
    LLM usage."""
    kinds: dict[str, dict[str, Any]] = {}
    for key, (base, what, role) in ROW_KINDS.items():
        if isinstance(counts.get(key), (int, float)):
            of = rows if base == "rows" else counts.get(base, 0)
            kinds[key] = _kind(counts[key], of, PER.get(base, base), what, role)
    for key, value in counts.items():  # a kind counted by a system this module does not know yet: shown too
        if (
            key not in kinds
            and key not in NOT_KINDS
            and isinstance(value, int)
            and not isinstance(value, bool)
        ):
            kinds[key] = _kind(value, rows, PER["rows"], key.replace("_", " "), "")
    if usage:
        usage = {**usage, "answers": int(usage.get("requests") or 0) + int(usage.get("cache_hits") or 0)}
        for key, (base, what, role) in USAGE_KINDS.items():
            kinds[key] = _kind(usage.get(key, 0), usage.get(base, 0), PER[base], what, role)
    replaced = _largest(kinds, REPLACES)
    return {
        "rows": int(rows),
        "threshold": threshold,
        "share": _largest(kinds, MARKED),
        "replaced_share": replaced,
        "own_result": replaced <= threshold,
        "kinds": kinds,
    }


def fallback_report(meta: Mapping[str, Any], threshold: float = NOT_OWN_SHARE) -> dict[str, Any]:
    """The report of a teacher-forced run from its `.meta.json` dict (`summary.rows`, `n_rows`, the usage)."""
    counts = (meta.get("summary") or {}).get("rows") or {}
    return report_of(
        counts if isinstance(counts, Mapping) else {},
        int(meta.get("n_rows") or 0),
        _llm_usage(meta),
        threshold,
    )


def run_fallbacks(meta: Mapping[str, Any]) -> dict[str, Any] | None:
    """A leaderboard row's `fallbacks` field: `fallback_report(meta)`; None (unknown: no field, no mark) when the
    metadata does not say how many rows the run has."""
    turns = meta.get("n_rows")
    if not isinstance(turns, int) or isinstance(turns, bool) or turns <= 0:
        return None
    return fallback_report(meta)


def fallback_line(report: Mapping[str, Any]) -> str:
    """One line for a CLI: the kinds that happened, with their shares, and the mark of a run not the system's own."""
    parts = [
        f"{k} {v['count']}/{v['of']} ({v['share']:.0%})" if v["share"] is not None else f"{k} {v['count']}"
        for k, v in report["kinds"].items()
        if v["count"]
    ]
    text = ", ".join(parts) or "none"
    if not report["own_result"]:
        text += (
            f"  [NOT THE SYSTEM'S OWN RESULT: {report['replaced_share']:.0%} of its answers were not its own, "
            f"over the {report['threshold']:.0%} limit]"
        )
    return text


def own_result(row: Mapping[str, Any]) -> bool:
    """False for a row marked as not the system's own result; True otherwise (no `fallbacks`: unknown)."""
    fb = row.get("fallbacks")
    return not isinstance(fb, Mapping) or fb.get("own_result", True) is not False


def share_text(share: float) -> str:
    """A share as a percentage for a mark: "100%", "12%", "<1%"."""
    pct = 100 * share
    return "<1%" if 0 < pct < 1 else f"{pct:.0f}%"


def mark_text(row: Mapping[str, Any]) -> str:
    """The mark of a row without brackets: "" (nothing fell back, or unknown), "fb 12%", "fb 100%: not own"."""
    fb = row.get("fallbacks")
    if not isinstance(fb, Mapping) or not fb.get("share"):  # a row not its own has a share over the limit
        return ""
    return f"fb {share_text(fb.get('share') or 0.0)}{'' if own_result(row) else ': not own'}"


def mark(row: Mapping[str, Any]) -> str:
    """The mark after a row's name in a text table: "", " [fb 12%]" or " [fb 100%: not own]"."""
    text = mark_text(row)
    return f" [{text}]" if text else ""


def _marked(fb: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    kinds = fb.get("kinds") or {}
    return {k: v for k, v in kinds.items() if isinstance(v, Mapping) and v.get("marked") and v.get("count")}


def describe(row: Mapping[str, Any]) -> str:
    """One sentence for a hover text: what fell back or failed, how often, and what the row's numbers are."""
    fb = row.get("fallbacks")
    if not isinstance(fb, Mapping) or not _marked(fb):
        return ""
    parts = [f"{v['what']}: {v['count']} of {v['of']} {v['per']}s" for v in _marked(fb).values()]
    text = (
        f"Fallbacks and failures ({share_text(fb.get('share') or 0.0)} of the run): " + "; ".join(parts) + "."
    )
    if not own_result(row):
        text += (
            f" Over {share_text(fb.get('threshold', NOT_OWN_SHARE))} of its answers were not its own: these "
            "numbers are not the system's own result."
        )
    return text


CSV_FIELDS = ("fallback_share", "replaced_share", "fallbacks", "own_result")


def csv_fields(row: Mapping[str, Any]) -> list[Any]:
    """CSV_FIELDS of a row: the mark's share, the replaced share, the counts of the marked kinds
    ("kind=n;kind=n") and own_result (1 / 0); empty where the row has no run metadata (unknown)."""
    fb = row.get("fallbacks")
    if not isinstance(fb, Mapping):
        return [None] * len(CSV_FIELDS)
    counts = ";".join(f"{k}={v['count']}" for k, v in _marked(fb).items())
    return [fb["share"], fb["replaced_share"], counts, int(own_result(row))]


LEGEND = (
    "[fb N%]: N% of the run's system turns fell back or failed (the largest kind; counts per kind in the CSV "
    f"and JSON, `fallbacks`); ': not own': over {share_text(NOT_OWN_SHARE)} of its answers were not its own "
    "(Popularity fallback, failed state extraction, failed agent call), so the row's numbers are not the "
    "system's own result, and it is marked against no other row"
)


def add_counts(total: dict[str, Any], more: Mapping[str, Any]) -> dict[str, Any]:
    """Sum nested dicts of numbers into `total` (in place); returns it."""
    for key, value in more.items():
        if isinstance(value, Mapping):
            add_counts(total.setdefault(key, {}), value)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            total[key] = total.get(key, 0) + value
    return total


def row_counts(out: Path) -> dict[str, Any]:
    """The sum of every prediction's `meta.counts` in a predictions file."""
    total: dict[str, Any] = {}
    with open(out, encoding="utf-8") as f:
        for line in f:
            if '"counts"' in line:
                counts = (json.loads(line).get("meta") or {}).get("counts")
                if isinstance(counts, Mapping):
                    add_counts(total, counts)
    return total
