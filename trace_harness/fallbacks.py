"""What a run did not do itself: its fallbacks and failures per kind, as plain counts and shares, in ONE shape
that every table showing the run reads (`fallback_report(meta)`; docs/llm.md "Fallbacks and failures").

    {"rows": 28, "threshold": 0.1, "fallback_share": 1.0, "own_result": false,
     "kinds": {"fallback_popularity": {"count": 28, "of": 28, "share": 1.0, "per": "prediction",
                                       "what": "turns answered by the Popularity fallback", "replaces": true},
               "json_failures": {"count": 28, "of": 84, "share": 0.333, "per": "LLM request", ...}, ...}}

- `kinds`: every kind the run counted (the predictions' `meta.counts`, summed into the metadata's
  `summary.rows`, and the LLM layer's usage summed over every invocation of the run), with `count`, the
  denominator `of` (`per` says of what), `share` = count / of (None when `of` is 0), `what` in words, and
  `replaces`: whether the kind stands for an answer the system did not make itself (a Popularity fallback, a
  turn whose state extraction failed, a failed agent call).
- `fallback_share`: the largest share among the `replaces` kinds (0.0 when there are none).
- `own_result`: False when `fallback_share` is over `threshold` (NOT_OWN_THRESHOLD, 10%): the row's numbers are
  then mostly not the system's own, and every table marks them so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from trace_dataset.constants import NOT_OWN_SHARE

NOT_OWN_THRESHOLD = NOT_OWN_SHARE  # more than 1 answer in 10 not the system's own: the row is marked

# kind -> (denominator, what it counts, replaces the system's answer); denominators: "rows" (predictions),
# another count of the same summary (its key), or an LLM usage key.
ROW_KINDS: dict[str, tuple[str, str, bool]] = {
    "fallback_popularity": ("rows", "turns answered by the Popularity fallback", True),
    "dst_extraction_failed": ("rows", "turns whose latest state delta stayed invalid", True),
    "empty_response": ("rows", "empty responses", False),
    "quote_check_failed": ("rows", "responses whose quote check failed", False),
    "quote_retry_invalid": ("rows", "quote-check retries with no valid JSON", False),
    "quote_fallbacks": ("rows", "SnipRec evidence quotes taken from the rules", False),
    "clarify_fallbacks": ("rows", "SnipRec turns answered by the clarify template", False),
    "query_failures": ("rows", "SnipRec query extractions that failed", False),
    "unknown_labels": ("rows", "citations of labels that were never shown", False),
    "agent_failures": ("agent_calls", "failed agent calls (no valid JSON after the repairs)", True),
    "hallucinated_names": ("rows", "agent names outside the catalogue", False),
}
USAGE_KINDS: dict[str, tuple[str, str, bool]] = {
    "json_failures": ("answers", "LLM answers with no valid JSON after the repairs", False),
    "json_repairs": ("answers", "repair requests after an invalid reply", False),
    "dialect_fallbacks": (
        "requests",
        "requests answered by prompt because constrained decoding was refused",
        False,
    ),
    "constraint_violations": ("constrained", "constrained replies that still failed the schema", False),
}
PER = {
    "rows": "prediction",
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


def _kind(count: Any, of: Any, per: str, what: str, replaces: bool) -> dict[str, Any]:
    count, of = int(count or 0), int(of or 0)
    share = round(count / of, 4) if of else None
    return {"count": count, "of": of, "share": share, "per": per, "what": what, "replaces": replaces}


def fallback_report(meta: Mapping[str, Any], threshold: float = NOT_OWN_THRESHOLD) -> dict[str, Any]:
    """The run's fallbacks and failures (module docstring) from its `.meta.json` dict."""
    summary = meta.get("summary") or {}
    counts = summary.get("rows") or {}
    rows = int(meta.get("n_rows") or 0)
    usage = _llm_usage(meta)
    kinds: dict[str, dict[str, Any]] = {}
    for key, (base, what, replaces) in ROW_KINDS.items():
        if key in counts:
            of = rows if base == "rows" else counts.get(base, 0)
            kinds[key] = _kind(counts[key], of, PER.get(base, base), what, replaces)
    for key, value in counts.items():  # a kind counted by a system this module does not know yet: shown too
        if (
            key not in kinds
            and key not in ("agent_calls", "rounds", "quote_retries", "memory_hits")
            and isinstance(value, int)
        ):
            kinds[key] = _kind(value, rows, PER["rows"], key.replace("_", " "), False)
    if usage:
        usage["answers"] = int(usage.get("requests") or 0) + int(usage.get("cache_hits") or 0)
        for key, (base, what, replaces) in USAGE_KINDS.items():
            kinds[key] = _kind(usage.get(key, 0), usage.get(base, 0), PER[base], what, replaces)
    shares = [k["share"] for k in kinds.values() if k["replaces"] and k["share"] is not None]
    worst = max(shares, default=0.0)
    return {
        "rows": rows,
        "threshold": threshold,
        "fallback_share": worst,
        "own_result": worst <= threshold,
        "kinds": kinds,
    }


def fallback_line(report: Mapping[str, Any]) -> str:
    """One line for a CLI: the kinds that happened, with their shares, and the mark of a row not the system's own."""
    parts = [
        f"{k} {v['count']}/{v['of']} ({v['share']:.0%})" if v["share"] is not None else f"{k} {v['count']}"
        for k, v in report["kinds"].items()
        if v["count"]
    ]
    text = ", ".join(parts) or "none"
    if not report["own_result"]:
        text += (
            f"  [NOT THE SYSTEM'S OWN RESULT: {report['fallback_share']:.0%} of its answers fell back, "
            f"over the {report['threshold']:.0%} limit]"
        )
    return text
