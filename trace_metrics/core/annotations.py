"""Human ratings for the meta-evaluation, from the project's annotation format (`trace_metrics.lib.human_format`).

The Trace human study (App. K) rates single responses (citation labels, error checklist, informativeness and
naturalness 1-5); CoRE's human study rates whole conversation logs on the twelve factors (0-4) and overall
(0-100). An annotation row carries CoRE ratings in an optional field beside the usual ones:

    {"item_id": "crs_yelp_00012:5:tfidf", "annotator": "A1", "baseline": "tfidf", "dialogue_id": "crs_yelp_00012",
     "quote_labels": [...], "errors": [...], "informativeness": 2, "naturalness": 3,
     "core": {"coherence": 3, "naturalness": 2, ..., "overall": 55}}

`core` keys: the twelve factor ids (integer 0-4 or null) and "overall" (0-100 or null); any subset. The row is
otherwise checked exactly as `trace_metrics.lib.human_format` checks it. Conversion to `{"id", "factor", "score"}`:
- the log id is `DIALOGUE_ID:BASELINE` (what `trace-bench core score` writes for that system's log);
- per (log, factor, annotator), the annotator's ratings over the log's rows; then per (log, factor) over
  annotators. Factors take the lower median at both steps (an integer on the 0-4 scale; the less favourable of
  two middle values, as `lib.human` breaks ties); overall takes the median;
- `likert_naturalness=True` also maps the response-level naturalness Likert (1-5) to the factor
  `naturalness` (n - 1) where a row has no `core.naturalness`: an approximation (a response's rating, not the
  interaction's), off by default.
"""

from __future__ import annotations

import os
import statistics
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from trace_dataset.io import TraceDataError, iter_jsonl_lines, write_jsonl
from trace_metrics.core.factors import RATING_LABELS
from trace_metrics.core.prompts import FACTOR_IDS
from trace_metrics.core.scoring import OVERALL
from trace_metrics.lib.human_format import check_annotations, validate_annotation

CORE_FIELD = "core"
KEYS: tuple[str, ...] = (*FACTOR_IDS, OVERALL)


def _lower_median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[(len(ordered) - 1) // 2]


def _core_ratings(value: Any, path: Any, line: int) -> dict[str, float]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise TraceDataError(
            f"field {CORE_FIELD!r} is {value!r}; expected an object of ratings", path=path, line=line
        )
    unknown = sorted(set(value) - set(KEYS))
    if unknown:
        raise TraceDataError(
            f"{CORE_FIELD}: unknown key(s) {unknown}; expected some of {list(KEYS)}", path=path, line=line
        )
    out: dict[str, float] = {}
    for key, v in value.items():
        if v is None:
            continue
        ok = not isinstance(v, bool) and isinstance(v, (int, float))
        if key == OVERALL and not (ok and 0 <= v <= 100):
            raise TraceDataError(
                f"{CORE_FIELD}.overall is {v!r}; expected a number 0-100 or null", path=path, line=line
            )
        if key != OVERALL and not (ok and float(v) in RATING_LABELS):
            raise TraceDataError(
                f"{CORE_FIELD}.{key} is {v!r}; expected an integer 0-4 or null", path=path, line=line
            )
        out[key] = float(v) if key == OVERALL else int(v)
    return out


def human_score_rows(path: str | os.PathLike, likert_naturalness: bool = False) -> list[dict[str, Any]]:
    """`{"id", "factor", "score", "system", "dialogue_id", "n_annotators"}` rows from an annotation file."""
    rows, ratings = [], []
    for line, _, raw in iter_jsonl_lines(path):
        rows.append(validate_annotation(raw, path, line))
        ratings.append(_core_ratings(raw.get(CORE_FIELD), path, line))
    check_annotations(rows, path)
    # (log, factor) -> annotator -> values
    found: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    logs: dict[str, tuple[str, str]] = {}
    for row, core in zip(rows, ratings, strict=True):
        log_id = f"{row['dialogue_id']}:{row['baseline']}"
        logs[log_id] = (row["dialogue_id"], row["baseline"])
        if likert_naturalness and "naturalness" not in core and row["naturalness"] is not None:
            core = {**core, "naturalness": row["naturalness"] - 1}
        for key, value in core.items():
            found[(log_id, key)][row["annotator"]].append(value)
    if not found:
        raise TraceDataError(
            f"no CoRE ratings: no row has a {CORE_FIELD!r} object (see trace_metrics.core.annotations); "
            "pass likert_naturalness=True (--likert-naturalness) to use the naturalness Likert",
            path=path,
        )
    out = []
    order = {k: i for i, k in enumerate(KEYS)}
    for (log_id, key), by_annotator in sorted(found.items(), key=lambda kv: (kv[0][0], order[kv[0][1]])):
        if key == OVERALL:
            score: float = statistics.median(statistics.median(v) for v in by_annotator.values())
        else:
            score = _lower_median([_lower_median(v) for v in by_annotator.values()])
        did, system = logs[log_id]
        out.append(
            {
                "id": log_id,
                "factor": key,
                "score": score,
                "system": system,
                "dialogue_id": did,
                "n_annotators": len(by_annotator),
            }
        )
    return out


def convert_annotations(
    path: str | os.PathLike, out: str | os.PathLike, likert_naturalness: bool = False
) -> dict:
    """Write the converted rows to `out` (JSON lines, atomically); returns counts."""
    rows = human_score_rows(path, likert_naturalness)
    write_jsonl(Path(out), rows)
    return {
        "rows": len(rows),
        "logs": len({r["id"] for r in rows}),
        "factors": sorted({r["factor"] for r in rows}, key=KEYS.index),
    }
