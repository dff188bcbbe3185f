"""What a run did not answer itself: its fallbacks and failures, per kind, and the share of its system turns
they touched, as every table that shows the run carries them (docs/leaderboard.md, "Fallbacks and failures").

A leaderboard row (and an interactive row) carries

    fallbacks  {"system_turns": N, "counts": {kind: n}, "share": s, "own_result": bool}
               (+ "calls": {kind: n} for the kinds counted per call, PER)

`counts` are the run's own counters (each prediction's `meta.counts`, summed by the runner into the run
metadata's `summary.rows`) for the kinds of KINDS; `share` is the largest per-kind share of the system turns
(of the agent calls for `agent_failures`), capped at 1: a lower bound of the turns touched by any kind,
exact when one kind dominates (a turn answered by the Popularity fallback counts once). `own_result` is False
when `share` > NOT_OWN_SHARE: then more of the row's turns are another system's answers (or failures) than its
own, so its numbers are not the system's own result. A row without run metadata (the paper's rows,
submissions) has no `fallbacks`: unknown, shown as nothing.

`run_fallbacks(meta)` is the one place the counts of a teacher-forced run are read (from its metadata; point
it at another reader when the runner records them differently), `predictions_fallbacks(path, n)` that of an
interactive run (from its predictions); `fallbacks_of(counts, system_turns)` builds the field from any counts.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

NOT_OWN_SHARE = 0.5  # above it, a row's numbers are mostly not the system's own (docs/leaderboard.md)
# Counters that say a turn's answer (or part of it) did not come from the system: what each means.
KINDS: dict[str, str] = {
    "fallback_popularity": "answered by the Popularity fallback",
    "dst_extraction_failed": "state extraction failed",
    "empty_response": "empty response",
    "quote_check_failed": "quote check failed",
    "query_failures": "query failed",
    "clarify_fallbacks": "clarifying question fell back",
    "quote_fallbacks": "quote fell back",
    "agent_failures": "agent call failed",
}
# Kinds counted per call rather than per system turn: their share is of this other counter.
PER: dict[str, str] = {"agent_failures": "agent_calls"}


def fallbacks_of(counts: Mapping[str, Any], system_turns: int) -> dict[str, Any]:
    """The `fallbacks` field of a row whose run answered `system_turns` turns with these counters."""
    kept = {k: int(counts[k]) for k in KINDS if isinstance(counts.get(k), (int, float)) and counts[k] > 0}
    calls = {
        k: int(counts[PER[k]]) for k in kept if k in PER and isinstance(counts.get(PER[k]), (int, float))
    }
    shares = [
        min(1.0, n / (calls.get(k, 0) if k in PER else system_turns))
        for k, n in kept.items()
        if (calls.get(k, 0) if k in PER else system_turns) > 0
    ]
    share = max(shares, default=0.0)
    out: dict[str, Any] = {
        "system_turns": int(system_turns),
        "counts": kept,
        "share": share,
        "own_result": share <= NOT_OWN_SHARE,
    }
    if calls:
        out["calls"] = calls
    return out


def run_fallbacks(meta: Mapping[str, Any]) -> dict[str, Any] | None:
    """The `fallbacks` field of a teacher-forced run, from its `.meta.json` (`summary.rows` and `n_rows`);
    None when the metadata does not say how many rows the run has."""
    turns = meta.get("n_rows")
    if not isinstance(turns, int) or turns <= 0:
        return None
    counts = (meta.get("summary") or {}).get("rows") or {}
    return fallbacks_of(counts if isinstance(counts, Mapping) else {}, turns)


def predictions_fallbacks(predictions: str | os.PathLike, system_turns: int) -> dict[str, Any]:
    """The `fallbacks` field of an interactive run, from the counters of its predictions file."""
    from trace_harness.runner import row_counts

    return fallbacks_of(row_counts(Path(predictions)), system_turns)


def own_result(row: Mapping[str, Any]) -> bool:
    """False for a row marked as not the system's own result; True otherwise (no `fallbacks`: unknown)."""
    fb = row.get("fallbacks")
    return not isinstance(fb, Mapping) or fb.get("own_result", True) is not False


def share_text(share: float) -> str:
    """A share as a percentage for a mark: "100%", "12%", "<1%"."""
    pct = 100 * share
    return "<1%" if 0 < pct < 1 else f"{pct:.0f}%"


def mark(row: Mapping[str, Any]) -> str:
    """The mark after a row's name in a text table: "" (no fallback, or unknown), " [fb 12%]", or
    " [fb 100%: not own]" when the row is not the system's own result."""
    fb = row.get("fallbacks")
    if not isinstance(fb, Mapping) or not fb.get("share"):
        return ""
    return f" [fb {share_text(fb['share'])}{'' if own_result(row) else ': not own'}]"


def describe(row: Mapping[str, Any]) -> str:
    """One sentence for a hover text: what fell back or failed, how often, and what the row's numbers are."""
    fb = row.get("fallbacks")
    if not isinstance(fb, Mapping) or not fb.get("counts"):
        return ""
    turns, calls = fb.get("system_turns", 0), fb.get("calls") or {}
    parts = [
        f"{KINDS.get(k, k)}: {n} of "
        + (f"{calls.get(k, '?')} calls" if k in PER else f"{turns} system turns")
        for k, n in fb["counts"].items()
    ]
    text = (
        f"Fallbacks and failures ({share_text(fb.get('share', 0.0))} of the run): " + "; ".join(parts) + "."
    )
    if not own_result(row):
        text += (
            f" Over {share_text(NOT_OWN_SHARE)} of its turns: these numbers are mostly not the system's "
            "own result."
        )
    return text


CSV_FIELDS = ("fallback_share", "fallbacks", "own_result")


def csv_fields(row: Mapping[str, Any]) -> list[Any]:
    """CSV_FIELDS of a row: the share, the counts ("kind=n;kind=n") and own_result (1 / 0); empty where the
    row has no run metadata (unknown)."""
    fb = row.get("fallbacks")
    if not isinstance(fb, Mapping):
        return [None, None, None]
    return [fb["share"], ";".join(f"{k}={n}" for k, n in fb["counts"].items()), int(own_result(row))]


LEGEND = (
    f"[fb N%]: N% of the run's system turns fell back or failed (the largest kind; counts per kind in "
    f"the CSV and JSON, `fallbacks`); ': not own': over {share_text(NOT_OWN_SHARE)}, so the row's numbers "
    "are mostly not the system's own result, and it is marked against no other row"
)
