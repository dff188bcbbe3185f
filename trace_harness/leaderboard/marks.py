"""The leaderboard's statistics over rows, from `trace_metrics.lib.significance`: the corrected "best or not
significantly different from the best" marks, each row's rank with its bootstrap interval, and how many
dialogues each column's lead rests on; and how the tables say so.

`set_marks` fills, per comparison group (rows of one dialogue set, pool, split and isolation, each its own
result), the row fields

    tied_best     {id: bool}         the corrected mark (absent: not compared)
    marks_method  {test, correction, family, alpha, family_size: {id: tests corrected together}}
    rank          {id: int}          1 + the rows strictly better on the column
    rank_ci       {id: [low, high]}  95% interval of the rank over the bootstrap resamples
    robustness    {id: {removed, of, challenger, exact}}  (the column's top row only)

`trace_harness.leaderboard.build.mark_best` / `add_intervals` call it; docs/leaderboard.md ("Significance")
documents the choices.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from trace_harness import fallbacks as fb
from trace_metrics.lib import intervals as iv
from trace_metrics.lib import significance as sig
from trace_metrics.lib.significance.corrections import NAMES as CORRECTION_NAMES
from trace_metrics.specs import spec
from trace_metrics.tables import OPEN_PREFIX, Column

MARK_FIELDS: tuple[str, ...] = ("tied_best", "marks_method", "rank", "rank_ci", "robustness")
LEAD_LEGEND = (
    "Lead: per column, the top row and the fewest dialogues whose removal puts another row ahead of it (-> that "
    "row); a greedy upper bound, marked (bound), exact where both rows score the same items in every dialogue"
)


def without_marks(row: dict[str, Any]) -> dict[str, Any]:
    """A copy of the row without the fields `set_marks` writes (stale once the set of rows changes)."""
    return {k: v for k, v in row.items() if k not in MARK_FIELDS}


def _directions(metrics: Sequence[str]) -> dict[str, bool]:
    out = {}
    for m in metrics:
        try:
            out[m] = spec(m).higher_is_better
        except KeyError:
            continue
    return out


def set_marks(
    out: list[dict[str, Any]],
    members: list[int],
    tables: Sequence[iv.DialogueTable],
    reps: Sequence[Mapping[str, np.ndarray]],
    settings: sig.Settings,
) -> list[str]:
    """The fields above for the rows `members` of `out` (one dialogue set: `tables` and `reps` in the same
    order), compared within each (pool, split, isolation); the warnings of the tests. A row that is not the
    system's own result (replaced answers over NOT_OWN_SHARE) or not session-isolated takes no part."""
    groups: dict[tuple[str, str, bool], list[int]] = {}
    for k, i in enumerate(members):
        if not fb.own_result(out[i]):
            continue
        # a system with cross-dialogue memory (Memory-Aug.) is reported apart, never marked against the others
        groups.setdefault((out[i]["pool"], out[i]["split"], out[i].get("session_isolated", True)), []).append(
            k
        )
    warnings: list[str] = []
    for ks in groups.values():
        rows = [out[members[k]] for k in ks]
        points = [{m: row["metrics"].get(m) for m in reps[k]} for row, k in zip(rows, ks, strict=True)]
        directions = _directions(sorted({m for k in ks for m in reps[k]}))
        found = sig.mark_group([tables[k] for k in ks], points, [reps[k] for k in ks], directions, settings)
        warnings += found.warnings
        method = settings.describe()
        for pos, row in enumerate(rows):
            if found.tied[pos]:
                row["tied_best"] = found.tied[pos]
                row["marks_method"] = {**method, "family_size": found.family_size[pos]}
            if found.rank[pos]:
                row["rank"], row["rank_ci"] = found.rank[pos], found.rank_ci[pos]
            if found.robustness[pos]:
                row["robustness"] = {
                    m: {
                        **r,
                        "challenger": None if r["challenger"] is None else rows[r["challenger"]]["system"],
                    }
                    for m, r in found.robustness[pos].items()
                }
    return warnings


# ---------------------------------------------------------------------------------------------------
# What the tables say
# ---------------------------------------------------------------------------------------------------
def marks_description(rows: Sequence[Mapping[str, Any]]) -> str | None:
    """How the marks of these rows were made: the test, the correction over which family, its size per pool
    and alpha (None when no row has marks). The text tables and the Space say it under their tables."""
    marked = [r for r in rows if r.get("marks_method")]
    if not marked:
        return None
    method = marked[0]["marks_method"]
    sizes: dict[str, int] = {}
    for r in marked:
        sizes[r["pool"]] = max([sizes.get(r["pool"], 0), *r["marks_method"]["family_size"].values()])
    family = method["family"]
    scope = {
        "board": "every pair of rows in every column of a pool",
        "column": "every pair of rows of each column apart",
    }.get(family, f"every pair of rows in the columns {family[len('metrics ') :]}")
    largest = ", ".join(f"{pool} {n}" for pool, n in sorted(sizes.items()) if n)
    return (
        f"{sig.TEST_NAMES[method['test']]}, {CORRECTION_NAMES[method['correction']]} over {scope}"
        + (f" (tests per family: {largest})" if largest else "")
        + f", alpha {method['alpha']}"
    )


def marks_note(rows: Sequence[Mapping[str, Any]]) -> str | None:
    """'*: ...': the text tables' line on the marks (`marks_description`)."""
    how = marks_description(rows)
    return (
        None
        if how is None
        else f"*: the best row of the column or not significantly different from it: {how}"
    )


def robustness_line(rows: Sequence[Mapping[str, Any]], columns: Sequence[Column], pool: str) -> str | None:
    """'Lead: ...' (`LEAD_LEGEND`): per column, the top row and the fewest dialogues whose removal puts another
    row ahead (an `open:` column: the open pool's top row)."""
    parts = []
    for c in columns:
        metric, where = (
            (c.metric[len(OPEN_PREFIX) :], "open") if c.metric.startswith(OPEN_PREFIX) else (c.metric, pool)
        )
        for r in rows:
            found = (r.get("robustness") or {}).get(metric)
            if r["pool"] != where or found is None:
                continue
            removed = "none reverses it" if found["removed"] is None else f"{found['removed']}/{found['of']}"
            bound = "" if found["exact"] or found["removed"] is None else " (bound)"
            challenger = f" -> {found['challenger']}" if found.get("challenger") else ""
            parts.append(f"{c.label} {r['system']} {removed}{bound}{challenger}")
    if not parts:
        return None
    return "Lead: " + "; ".join(parts)


def csv_field(row: Mapping[str, Any]) -> str | None:
    """The CSV's `marks` field: "test=bootstrap;correction=holm;family=board;alpha=0.05" (None: no marks)."""
    method = row.get("marks_method")
    if not method:
        return None
    return ";".join(f"{k}={method[k]}" for k in ("test", "correction", "family", "alpha"))
