"""Reading and validating a predictions file before anything is scored.

One JSON line per evaluated system turn, the record `trace_dataset.prediction.Prediction` (`schema.PREDICTION_*`):
`{"dialogue_id", "turn_id", "ranked_poi_ids", "response", "citations": {"R1": review_id, ...}, "meta"?}`.
`citations` may also be the Features form, a list of `{"label", "review_id"}`. A checked row is the record
(`check_row`; its `meta` dropped, as no metric reads it).

Validation fails (TraceDataError) on malformed rows and unless the rows are exactly the system turns of the
split: missing, duplicate and unknown rows are counted and the first ids named. Nothing is dropped or
repaired silently.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from trace_dataset.constants import POOL_FIELDS, POOLS, resolve_splits
from trace_dataset.io import TraceDataError, read_jsonl
from trace_dataset.prediction import Prediction
from trace_dataset.schema import PREDICTION_OPTIONAL_FIELDS, PREDICTION_REQUIRED_FIELDS

LABEL_RE = re.compile(r"R[1-9]\d{0,2}")  # R1 .. R999
SHOW = 5  # ids named in an error message
MAX_TURN_ID = 10_000  # far beyond any dialogue; a larger turn_id is garbage (and unreadable in a message)
MAX_ID_CHARS = 200  # a dialogue id or POI id longer than this is garbage

Key = tuple[str, int]


def load_predictions(path: str | os.PathLike) -> list[dict]:
    """Parse a predictions JSONL file (gzip if `.gz`); a line that is not a JSON object is an error."""
    path = Path(path)
    if not path.is_file():
        raise TraceDataError("predictions file not found", path=path)
    return list(read_jsonl(path))


_REQUIRED = frozenset(PREDICTION_REQUIRED_FIELDS)
_ALLOWED = frozenset(PREDICTION_REQUIRED_FIELDS + PREDICTION_OPTIONAL_FIELDS)
_LABEL_MATCH = LABEL_RE.fullmatch


def normalize_citations(value: Any) -> dict[str, str]:
    """{label: review_id} from the JSONL dict or the Features list form; raises ValueError when malformed."""
    if isinstance(value, dict):
        for label, review_id in value.items():
            if type(label) is not str or not _LABEL_MATCH(label):
                raise ValueError(
                    f"citation label {label!r} is not of the form 'R1', 'R2', ... (at most 'R999')"
                )
            if type(review_id) is not str or not review_id:
                raise ValueError(f"citation {label} has review_id {review_id!r}; expected a non-empty string")
        return value
    if not isinstance(value, list):
        raise ValueError(f"citations is {type(value).__name__}; expected an object {{'R1': review_id, ...}}")
    out: dict[str, str] = {}
    for c in value:
        if not (isinstance(c, dict) and "label" in c and "review_id" in c):
            raise ValueError(f"citation {c!r} is not a {{'label', 'review_id'}} object")
        label, review_id = c["label"], c["review_id"]
        if label in out and out[label] != review_id:
            raise ValueError(f"citation label {label} is given twice with different reviews")
        out[label] = review_id
    return normalize_citations(out)


def check_row(row: Mapping[str, Any]) -> Prediction:
    """One row checked and normalised into the record (citations as a dict, `meta` dropped); raises ValueError."""
    keys = row.keys()
    if not _REQUIRED <= keys:
        missing = [f for f in PREDICTION_REQUIRED_FIELDS if f not in row]
        raise ValueError(f"missing field(s) {missing}; required {list(PREDICTION_REQUIRED_FIELDS)}")
    if not keys <= _ALLOWED:
        extra = sorted(keys - _ALLOWED)
        raise ValueError(
            f"unknown field(s) {extra}; allowed {list(PREDICTION_REQUIRED_FIELDS + PREDICTION_OPTIONAL_FIELDS)}"
        )
    did, tid, ranked, response = row["dialogue_id"], row["turn_id"], row["ranked_poi_ids"], row["response"]
    if type(did) is not str or not did or len(did) > MAX_ID_CHARS:
        raise ValueError(
            f"dialogue_id {did!r:.60} is not a non-empty string of at most {MAX_ID_CHARS} characters"
        )
    if type(tid) is not int:
        raise ValueError(f"turn_id {tid!r:.60} is not an integer")
    if not 0 <= tid <= MAX_TURN_ID:
        raise ValueError(
            f"turn_id {str(tid)[:20]}{'...' if len(str(tid)) > 20 else ''} is out of range; expected a "
            f"turn number of the dialogue (0..{MAX_TURN_ID})"
        )
    _check_ranking(ranked)
    if type(response) is not str:
        raise ValueError(f"response is {type(response).__name__}; expected a string")
    return Prediction(did, tid, tuple(ranked), response, normalize_citations(row["citations"]))


def _check_ranking(ranked: Any) -> None:
    if (
        type(ranked) is not list
        or not set(map(type, ranked)) <= {str}
        or "" in ranked
        or any(len(p) > MAX_ID_CHARS for p in ranked)
    ):
        raise ValueError(
            f"ranked_poi_ids is not a list of non-empty strings (of at most {MAX_ID_CHARS} characters)"
        )
    if len(set(ranked)) != len(ranked):
        dup = [p for p, c in Counter(ranked).items() if c > 1]
        raise ValueError(f"ranked_poi_ids lists {dup[:SHOW]} more than once")


def _first(keys: Iterable[Key]) -> str:
    keys = list(keys)
    shown = ", ".join(f"{d}/{t}" for d, t in keys[:SHOW])
    return shown + (", ..." if len(keys) > SHOW else "")


def expected_keys(dialogues: Iterable[dict]) -> list[Key]:
    """(dialogue_id, turn_id) of every system turn, in corpus order."""
    return [(d["dialogue_id"], t["turn_id"]) for d in dialogues for t in d["turns"] if t["role"] == "system"]


def validate_predictions(
    preds: Sequence[Mapping[str, Any]],
    dialogues: Sequence[dict],
    pool: str = "closed",
    split: str = "test",
    known_poi_ids: Collection[str] | None = None,
    check_pool: bool = True,
    path: str | os.PathLike | None = None,
) -> dict[Key, Prediction]:
    """Check rows against the system turns of `dialogues` (the `split`); return {(dialogue_id, turn_id): record}.

    Fails on: malformed rows; rows missing for some system turn; duplicate rows; unknown rows (no such
    dialogue in the split, or not a system turn); with `check_pool`, ranked POIs outside the dialogue's `pool`
    candidates; with `known_poi_ids`, ranked POIs unknown to the knowledge base.
    """
    if pool not in POOLS:
        raise ValueError(f"unknown pool {pool!r}; expected one of {POOLS}")
    allowed = resolve_splits(split)  # "all": the dialogues of every split
    other = [d["dialogue_id"] for d in dialogues if d.get("split") not in allowed]
    if other:
        raise TraceDataError(
            f"{len(other)} dialogue(s) are not in split {split!r} (first: {', '.join(other[:SHOW])})",
            path=path,
        )
    rows = check_rows(preds, path)
    _check_turns(rows, expected_keys(dialogues), split, path)
    index = {(r.dialogue_id, r.turn_id): r for r in rows}
    if check_pool or known_poi_ids is not None:
        _check_ranked_ids(index, dialogues, pool, check_pool, known_poi_ids, path)
    return index


def check_rows(preds: Iterable[Mapping[str, Any]], path: str | os.PathLike | None = None) -> list[Prediction]:
    """Every row as a record; TraceDataError counting the malformed ones and naming the first (row number: line)."""
    bad_rows: list[str] = []
    rows: list[Prediction] = []
    for i, raw in enumerate(preds, start=1):
        try:
            rows.append(check_row(raw))
        except ValueError as e:
            bad_rows.append(f"row {i}: {e}")
    if bad_rows:
        raise TraceDataError(
            f"{len(bad_rows)} malformed prediction row(s): "
            + "; ".join(bad_rows[:SHOW])
            + ("; ..." if len(bad_rows) > SHOW else ""),
            path=path,
        )
    return rows


def _check_turns(
    rows: Sequence[Prediction], expected: Sequence[Key], split: str, path: str | os.PathLike | None
) -> None:
    """Exactly one row per system turn: missing, duplicate and unknown rows counted, the first named."""
    expected_set = set(expected)
    counts = Counter((r.dialogue_id, r.turn_id) for r in rows)
    duplicate = [k for k, c in counts.items() if c > 1]
    unknown = [k for k in counts if k not in expected_set]
    missing = [k for k in expected if k not in counts]
    if not (duplicate or unknown or missing):
        return
    parts = []
    if missing:
        parts.append(f"{len(missing)} missing (first: {_first(missing)})")
    if duplicate:
        parts.append(f"{len(duplicate)} duplicate (first: {_first(duplicate)})")
    if unknown:
        parts.append(
            f"{len(unknown)} unknown: no such system turn in split {split!r} (first: {_first(unknown)})"
        )
    raise TraceDataError(
        f"predictions do not match the {len(expected)} system turns of split {split!r}: "
        + "; ".join(parts)
        + ". Expected exactly one row per system turn (ask_preference, recommend, compare, farewell).",
        path=path,
    )


def _check_ranked_ids(
    index: Mapping[Key, Prediction],
    dialogues: Sequence[dict],
    pool: str,
    check_pool: bool,
    known_poi_ids: Collection[str] | None,
    path: str | os.PathLike | None,
) -> None:
    """Ranked POIs inside the dialogue's `pool` candidates (with `check_pool`) and the knowledge base (with
    `known_poi_ids`); TraceDataError counting those outside and naming the first."""
    field = POOL_FIELDS[pool]
    known = None if known_poi_ids is None else set(known_poi_ids)
    problems: list[str] = []
    n_problems = 0
    for d in dialogues:
        pool_ids = set(d[field]) if check_pool else None
        for t in d["turns"]:
            if t["role"] != "system":
                continue
            ranked = index[(d["dialogue_id"], t["turn_id"])].ranked_poi_ids
            if (pool_ids is None or pool_ids.issuperset(ranked)) and (
                known is None or known.issuperset(ranked)
            ):
                continue
            for p in ranked:
                why = None
                if known is not None and p not in known:
                    why = "not in the knowledge base"
                elif pool_ids is not None and p not in pool_ids:
                    why = f"not a {pool} candidate"
                if why:
                    n_problems += 1
                    if len(problems) < SHOW:
                        problems.append(f"{d['dialogue_id']}/{t['turn_id']}: {p!r} {why}")
    if n_problems:
        raise TraceDataError(
            f"{n_problems} ranked POI id(s) outside the {pool!r} pool or knowledge base (first: {'; '.join(problems)}). "
            f"Rank only the dialogue's {field} (pool {pool!r}).",
            path=path,
        )
