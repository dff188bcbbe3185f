"""The human-evaluation annotation file (App. K): its fields, labels and checks.

Annotation file: JSON lines, one row per (item, annotator), as the annotation tool exports it:

    {"item_id": "crs_yelp_00012:5:tfidf", "annotator": "A1", "baseline": "tfidf",
     "dialogue_id": "crs_yelp_00012", "quote_labels": ["Supported", "Partial", null],
     "errors": ["too_vague"], "informativeness": 2, "naturalness": 3}

- `quote_labels`: one label per double-quoted span of the response, in order of appearance: "Supported",
  "Partial" or "Not supported" (case, spaces, "_" and "-" are ignored), null when the annotator left it
  blank. Every annotator of an item must list the same number of quotes ([] when the response has none).
- `errors`: the checked categories of the App. K.2 checklist (`ERROR_CATEGORIES`); "no_errors" excludes every
  other; [] = the checklist was not answered.
- `informativeness`, `naturalness`: integers 1-5, or null when not answered.
- `item_id` is unique per rated response; `baseline` and `dialogue_id` must agree across its rows.

Bad rows raise TraceDataError naming the file, the line and the field.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from trace_dataset.io import TraceDataError, read_jsonl

CITATION_LABELS: tuple[str, ...] = ("Supported", "Partial", "Not supported")
ERROR_CATEGORIES: tuple[str, ...] = (
    "fabrication",
    "wrong_poi",
    "irrelevant_citation",
    "too_vague",
    "missing_citation",
    "exaggeration",
    "factual_error",
    "no_errors",
)
NO_ERRORS = "no_errors"
LIKERT_SCALES: tuple[str, ...] = ("informativeness", "naturalness")
LIKERT_DOMAIN: tuple[int, ...] = (1, 2, 3, 4, 5)
REQUIRED_FIELDS: tuple[str, ...] = (
    "item_id",
    "annotator",
    "baseline",
    "dialogue_id",
    "quote_labels",
    "errors",
    "informativeness",
    "naturalness",
)

_LABEL_ALIASES: dict[str, str] = {
    "supported": "Supported",
    "partial": "Partial",
    "partiallysupported": "Partial",
    "notsupported": "Not supported",
    "unsupported": "Not supported",
}


def _normalise_label(value: Any, where: str, path, line) -> str | None:
    if value is None:
        return None
    key = "".join(ch for ch in str(value).lower() if ch.isalpha())
    if not isinstance(value, str) or key not in _LABEL_ALIASES:
        raise TraceDataError(
            f"{where}: citation label {value!r}; expected one of {CITATION_LABELS} or null",
            path=path,
            line=line,
        )
    return _LABEL_ALIASES[key]


def _likert(value: Any, field: str, path, line) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value not in LIKERT_DOMAIN:
        raise TraceDataError(
            f"field {field!r} is {value!r}; expected an integer 1-5 or null", path=path, line=line
        )
    return value


def validate_annotation(row: Mapping[str, Any], path=None, line: int | None = None) -> dict:
    """One annotation row, checked and normalised (labels canonical, errors sorted in checklist order)."""
    missing = [f for f in REQUIRED_FIELDS if f not in row]
    if missing:
        raise TraceDataError(
            f"missing field(s) {missing}; every row needs {list(REQUIRED_FIELDS)}", path=path, line=line
        )
    for field in ("item_id", "annotator", "baseline", "dialogue_id"):
        if not isinstance(row[field], str) or not row[field].strip():
            raise TraceDataError(
                f"field {field!r} is {row[field]!r}; expected a non-empty string", path=path, line=line
            )
    labels = row["quote_labels"]
    if not isinstance(labels, list):
        raise TraceDataError(
            f"field 'quote_labels' is {labels!r}; expected a list (one label per quote)", path=path, line=line
        )
    errors = row["errors"]
    if not isinstance(errors, list):
        raise TraceDataError(
            f"field 'errors' is {errors!r}; expected a list of categories", path=path, line=line
        )
    unknown = [e for e in errors if e not in ERROR_CATEGORIES]
    if unknown:
        raise TraceDataError(
            f"unknown error categories {unknown}; expected some of {ERROR_CATEGORIES}", path=path, line=line
        )
    if NO_ERRORS in errors and len(set(errors)) > 1:
        raise TraceDataError(
            f"errors {errors} combine 'no_errors' with other categories; they are exclusive",
            path=path,
            line=line,
        )
    return {
        "item_id": row["item_id"],
        "annotator": row["annotator"],
        "baseline": row["baseline"],
        "dialogue_id": row["dialogue_id"],
        "quote_labels": [_normalise_label(v, f"quote_labels[{i}]", path, line) for i, v in enumerate(labels)],
        "errors": [c for c in ERROR_CATEGORIES if c in errors],
        "informativeness": _likert(row["informativeness"], "informativeness", path, line),
        "naturalness": _likert(row["naturalness"], "naturalness", path, line),
    }


def load_annotations(path: str | os.PathLike) -> list[dict]:
    """Read and check an annotation file (format in the module docstring)."""
    rows = [validate_annotation(r, path, i) for i, r in enumerate(read_jsonl(path), start=1)]
    check_annotations(rows, path)
    return rows


def annotation_columns(path: str | os.PathLike) -> dict[str, list]:
    """An annotation file as column lists (the inputs of the `human` evaluate module)."""
    rows = load_annotations(path)
    return {field: [r[field] for r in rows] for field in REQUIRED_FIELDS}


def check_annotations(rows: Sequence[dict], path=None) -> None:
    """Cross-row checks: unique (item, annotator); baseline, dialogue and quote count agree within an item."""
    if not rows:
        raise TraceDataError("no annotation rows", path=path)
    seen: dict[tuple[str, str], int] = {}
    first: dict[str, dict] = {}
    for i, r in enumerate(rows, start=1):
        key = (r["item_id"], r["annotator"])
        if key in seen:
            raise TraceDataError(
                f"item {key[0]!r} is annotated twice by {key[1]!r} (rows {seen[key]} and {i})",
                path=path,
                line=i,
            )
        seen[key] = i
        f = first.setdefault(r["item_id"], r)
        for field in ("baseline", "dialogue_id"):
            if r[field] != f[field]:
                raise TraceDataError(
                    f"item {r['item_id']!r}: {field} {r[field]!r} differs from {f[field]!r} in an earlier row",
                    path=path,
                    line=i,
                )
        if len(r["quote_labels"]) != len(f["quote_labels"]):
            raise TraceDataError(
                f"item {r['item_id']!r}: {len(r['quote_labels'])} quote labels, an earlier row has {len(f['quote_labels'])}; "
                "every annotator labels the same quotes",
                path=path,
                line=i,
            )
