"""Leaderboard rows -> the table the app shows. Pure functions over rows.

Rows come from three places: the paper's reported numbers (reference rows: facts from the paper, not our
runs), the baseline runs (`trace-bench leaderboard` writes leaderboard.json) and the results store
(submissions). `collect_rows` reads them, drops (and logs) any row the app cannot show, and recomputes the
"not significantly different from the best" marks, ranks and rank intervals over the merged rows
(`trace_harness.leaderboard.build.mark_best`); everything else only transforms. Columns come from `trace_metrics.tables` (`BOARD_VIEWS`: the paper's
Tables 5, 6 and 9, and every metric the suite computes), each from its metric's declaration; data keys stay
canonical metric ids.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib.resources import files
from typing import Any, cast

import pandas as pd

from baselines.identity import BY_NAME, IDENTITIES, identity
from spaces_app.blind import PUBLIC_TRACK, row_track
from spaces_app.store import forbidden_char
from trace_dataset.io import read_json
from trace_metrics.tables import BOARD_VIEWS, DECIMALS, Column, format_value, header

log = logging.getLogger(__name__)

PAPER_SUFFIX = " (paper)"
FAMILIES: tuple[str, ...] = ("non-LLM", "LLM", "submitted")  # the family filter
SOURCE_LABELS = {"paper": "paper (reported)", "baseline": "run here", "submission": "submission"}
POOL_CHOICES: tuple[str, ...] = ("closed", "open")
TEXT_COLUMNS: tuple[str, ...] = ("System", "Family", "Source")
TAIL_COLUMNS: tuple[str, ...] = ("Corpus version", "KB version", "Description")
_TEXT_FIELDS = ("family", "source", "description", "corpus_version", "kb_version", "split", "baseline")


def paper_label(row: dict[str, Any]) -> str:
    """A paper row's label, built as for a run of ours (the label, then the model of a cross-family row)."""
    from trace_harness.leaderboard.build import system_label

    return system_label({"baseline": row["baseline"], "parameters": {"llm": {"model": row.get("model")}}})


def paper_rows() -> list[dict[str, Any]]:
    """The paper's own numbers (Tables 5, 6, 9; Itinerary-LLM and Memory-Aug. from its appendix tables) as
    labelled reference rows. paper_results.json names each row by its baseline (and the model, for the
    cross-family rows); label, family and isolation come from `baselines.identity`, the label built as for a run
    of ours (`paper_label`)."""
    doc = json.loads(files("spaces_app").joinpath("paper_results.json").read_text(encoding="utf-8"))
    return [
        {
            "system": paper_label(r) + PAPER_SUFFIX,
            "baseline": r["baseline"],
            "family": identity(r["baseline"]).family,
            "source": "paper",
            "description": "Reported in the Trace paper, "
            + (
                r.get("note")
                or (
                    "Tables 5, 6, 9 (its 10,000-dialogue corpus)"
                    if r["pool"] == "closed"
                    else "Table 6 (open-set R@1, 1,000 dialogues)"
                )
            ),
            "pool": r["pool"],
            "split": (
                "1,000-dialogue subset" if r.get("note") or r["pool"] == "open" else "all (10,000 dialogues)"
            ),
            "corpus_version": doc["corpus_version"],
            "kb_version": doc["kb_version"],
            "metrics": r["metrics"],
            "session_isolated": identity(
                r["baseline"]
            ).session_isolated,  # False: Memory-Aug., reported apart
        }
        for r in doc["rows"]
    ]


def baseline_rows(path) -> list[dict[str, Any]]:
    """Rows of a leaderboard.json (with its per-dialogue side file); a missing or unreadable file gives none
    (logged)."""
    if path is None:
        return []
    if not path.exists():
        log.warning("baseline rows file %s not found (TRACE_SPACE_BASELINES); showing no baseline rows", path)
        return []
    from trace_harness.leaderboard.build import (
        read_leaderboard,  # puts back the per-dialogue data of the side file
    )

    rows: list[dict[str, Any]] | None
    try:
        rows = read_leaderboard(path)
    except ValueError as e:  # not JSON
        log.error("baseline rows file %s is unreadable (%s); showing no baseline rows", path, e)
        return []
    except (
        KeyError,
        TypeError,
        AttributeError,
    ) as e:  # malformed rows: read them plain, clean_rows sorts them
        log.warning(
            "baseline rows file %s: per-dialogue data not attached (%s: %s)", path, type(e).__name__, e
        )
        doc = read_json(path)
        rows = doc.get("rows") if isinstance(doc, dict) else None
    if not isinstance(rows, list):
        log.error("baseline rows file %s has no list of rows; showing no baseline rows", path)
        return []
    for r in rows:
        if isinstance(r, dict) and not r.get("description"):
            r["description"] = (
                f"trace-bench run {r.get('baseline') or r.get('system')}, on the "
                f"{r.get('split', '?')} split, scored by this package"
            )
    return rows


def row_problem(row: Any) -> str | None:
    """Why the app cannot show `row`, or None. Names are shown as text, but a name with control or
    bidirectional-override characters would still garble the table, so it is refused here too."""
    if not isinstance(row, dict):
        return f"a row is a JSON object, not {type(row).__name__}"
    system = row.get("system")
    if not isinstance(system, str) or not system.strip():
        return "no system name"
    if forbidden_char(system):
        return f"system name holds the control character {forbidden_char(system)}"
    if not isinstance(row.get("pool"), str):
        return "no pool"
    if any(row.get(k) is not None and not isinstance(row[k], str) for k in _TEXT_FIELDS):
        return "a text field that is not a string"
    metrics = row.get("metrics")
    if not isinstance(metrics, dict) or not all(_is_number(v) for v in metrics.values()):
        return "metrics are not all numbers"
    ci = row.get("ci", {})
    if not isinstance(ci, dict) or not all(
        isinstance(v, (list, tuple)) and len(v) == 2 and all(_is_number(x) for x in v) for v in ci.values()
    ):
        return "ci is not {metric: [low, high]}"
    tied = row.get("tied_best", {})
    if not isinstance(tied, dict) or not all(isinstance(v, bool) for v in tied.values()):
        return "tied_best is not {metric: true/false}"
    if not isinstance(row.get("per_dialogue", {}), dict):
        return "per_dialogue is not an object"
    fallbacks = row.get("fallbacks")
    if fallbacks is not None and not (
        isinstance(fallbacks, dict)
        and all(_is_share(fallbacks.get(k)) for k in ("share", "replaced_share"))
        and isinstance(fallbacks.get("own_result"), bool)
        and isinstance(fallbacks.get("rows"), int)
        and isinstance(fallbacks.get("kinds"), dict)
        and all(
            isinstance(k, str)
            and isinstance(v, dict)
            and isinstance(v.get("count"), int)
            and isinstance(v.get("of"), int)
            and isinstance(v.get("what"), str)
            and isinstance(v.get("per"), str)
            for k, v in fallbacks["kinds"].items()
        )
    ):
        return "fallbacks is not {rows, kinds, share, replaced_share, own_result} (trace_harness.fallbacks)"
    return None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_share(value: Any) -> bool:
    return _is_number(value) and 0 <= value <= 1


def clean_rows(rows: Iterable[Any], origin: str) -> list[dict[str, Any]]:
    """The rows the app can show; each other one is skipped with a warning naming it and why."""
    out = []
    for i, row in enumerate(rows):
        problem = row_problem(row)
        if problem is None:
            out.append(row)
        else:
            name = row.get("system") if isinstance(row, dict) else None
            log.warning("skipping row %d of %s (%r): %s", i, origin, name, problem)
    return out


def collect_rows(settings, store, marks: BestMarks | None = None) -> list[dict[str, Any]]:
    """Every row the leaderboard shows: paper reference rows, baseline runs, stored submissions, with the
    best-row marks recomputed over the public track's (`marks` keeps them until the rows change)."""
    rows: list[dict[str, Any]] = paper_rows() if settings.show_paper_rows else []
    rows.extend(clean_rows(baseline_rows(settings.baselines_file), str(settings.baselines_file)))
    rows.extend(clean_rows(store.rows(), repr(store)))
    blind = [
        r for r in rows if row_track(r) != PUBLIC_TRACK
    ]  # own tracks: never compared with the public one
    return (marks or BestMarks()).apply([r for r in rows if row_track(r) == PUBLIC_TRACK]) + blind


def _identity(row: dict[str, Any]) -> tuple:
    return row["system"], row.get("source"), row["pool"], row.get("split")


def _comparable(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`rows` whose per-dialogue data decodes; a row with damaged data is still shown, without marks."""
    from trace_metrics.lib.intervals import decode

    out = []
    for r in rows:
        stored = r.get("per_dialogue")
        if isinstance(stored, dict) and "data" in stored:
            try:
                decode(stored)
            except (ValueError, KeyError, TypeError) as e:
                log.warning(
                    "row %r (%s pool): per-dialogue data unreadable (%s); shown without best marks",
                    r["system"],
                    r["pool"],
                    e,
                )
                r = {k: v for k, v in r.items() if k != "per_dialogue"}
        elif stored is not None:
            r = {k: v for k, v in r.items() if k != "per_dialogue"}  # no data: nothing to compare
        out.append(r)
    return out


class BestMarks:
    """`tied_best` (with `marks_method`, `rank`, `rank_ci`, `robustness`) of merged rows by the leaderboard's own
    rule (`trace_harness.leaderboard.build.mark_best`: the best row of each column and those not significantly
    different from it after Holm's correction, by a paired bootstrap over the rows' per-dialogue data, and
    each row's rank with its bootstrap interval), recomputed only when the rows change: the bootstrap takes
    seconds, and the app re-reads the rows on every control."""

    def __init__(self) -> None:
        self._key: str | None = None
        self._marks: dict[tuple, dict[str, Any]] = {}
        self._lock = threading.Lock()

    @staticmethod
    def fingerprint(rows: Sequence[dict[str, Any]]) -> str:
        parts = [
            [
                *_identity(r),
                r.get("version"),
                (r.get("per_dialogue") or {}).get("dialogues"),
                sorted(r["metrics"].items()),
            ]
            for r in rows
        ]
        return hashlib.sha256(json.dumps(parts, default=str).encode("utf-8")).hexdigest()

    def apply(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        from trace_harness.leaderboard.build import mark_best
        from trace_harness.leaderboard.marks import MARK_FIELDS

        key = self.fingerprint(rows)
        with self._lock:
            if key != self._key:
                self._marks = {
                    _identity(r): {k: r[k] for k in MARK_FIELDS if r.get(k) is not None}
                    for r in mark_best(_comparable(rows))
                }
                self._key = key
            marks = self._marks
        out = []
        for r in rows:
            r = {k: v for k, v in r.items() if k not in MARK_FIELDS}
            r.update(marks.get(_identity(r), {}))
            out.append(r)
        return out


def reserved_names(rows: Iterable[dict[str, Any]]) -> list[str]:
    """System names a submission may not take: every row that is not a submission, and every registered
    baseline's name and label (`baselines.identity`), run here or not."""
    names = {r["system"] for r in rows if r.get("source") != "submission"}
    return sorted(names | {i.name for i in IDENTITIES} | {i.label for i in IDENTITIES})


def family(row: dict[str, Any]) -> str:
    """non-LLM, LLM or submitted (the paper's reference rows keep the family of the system they report)."""
    return "submitted" if row.get("source") == "submission" else (row.get("family") or "non-LLM")


def system_note(row: dict[str, Any]) -> str | None:
    """The note shown next to a system's name (its record's `notes` in `baselines.identity`), for its run and
    its paper row alike."""
    found = BY_NAME.get(row.get("baseline") or "")
    if row.get("source") == "submission" or found is None:
        return None
    return found.notes or None


def view_columns(view: str) -> tuple[Column, ...]:
    """The columns of a board view: one of the paper's tables, or every metric the suite computes."""
    if view not in BOARD_VIEWS:
        raise ValueError(f"unknown view {view!r}; expected one of {tuple(BOARD_VIEWS)}")
    return BOARD_VIEWS[view]


def sort_choices(view: str) -> list[str]:
    """What the table can be sorted by: each metric column of the view, then the system name."""
    return [header(c) for c in view_columns(view)] + ["System"]


def frame_columns(view: str) -> list[str]:
    return [*TEXT_COLUMNS, *(header(c) for c in view_columns(view)), *TAIL_COLUMNS]


@dataclass(frozen=True)
class Cell:
    """One metric cell: the value, its 95% interval when the row has one, and the best-row mark."""

    value: float | None
    low: float | None = None
    high: float | None = None
    tied_best: bool = False

    def text(self) -> str:
        return format_value(self.value, missing="")


def _finite(value: Any) -> float | None:
    return float(value) if _is_number(value) and math.isfinite(value) else None


def _cell(value: Any, ci: Any, tied: Any) -> Cell:
    """A stored cell (`trace_harness.leaderboard.render.row_cells`) as shown: non-finite values are none."""
    value = _finite(value)
    if value is None:
        return Cell(None)
    low, high = (_finite(ci[0]), _finite(ci[1])) if ci is not None else (None, None)
    return Cell(value, low, high, bool(tied))


@dataclass(frozen=True)
class Rank:
    """A row's rank on one column among the rows scored here, with its 95% bootstrap interval."""

    metric: str  # the column's header
    rank: int
    low: int | None = None
    high: int | None = None


@dataclass(frozen=True)
class Line:
    """One row of the shown table, with its rank on the sorted column (the view's first when sorted by name)."""

    row: dict[str, Any]
    cells: tuple[Cell, ...]
    rank: Rank | None = None

    @property
    def system(self) -> str:
        return self.row["system"]


def board_lines(
    rows: Sequence[dict[str, Any]],
    view: str,
    pool: str = "closed",
    families: Iterable[str] = FAMILIES,
    query: str = "",
    show_paper: bool = True,
    sort_by: str | None = None,
    reverse: bool = False,
) -> list[Line]:
    """The lines of one view (Table 5/6/9 columns) for one pool, filtered and sorted.

    `families`: which of non-LLM / LLM / submitted to show (paper rows by their family too, and only with
    `show_paper`); `query`: case-insensitive text in the system name or description; `sort_by`: a column of
    `sort_choices(view)` (default the view's first metric), best first (A-Z for System) unless `reverse`.
    Missing values sort last either way. `open:` columns read the system's open-pool row.
    """
    columns = view_columns(view)
    if pool not in POOL_CHOICES:
        raise ValueError(f"unknown pool {pool!r}; expected one of {POOL_CHOICES}")
    wanted = set(families)
    unknown = wanted - set(FAMILIES)
    if unknown:
        raise ValueError(f"unknown families {sorted(unknown)}; expected some of {FAMILIES}")
    sort_by = sort_by or header(columns[0])
    if sort_by not in sort_choices(view):
        raise ValueError(f"cannot sort {view!r} by {sort_by!r}; expected one of {sort_choices(view)}")
    query = (query or "").strip().lower()
    from trace_harness.leaderboard.render import open_rows, row_cells

    opened = open_rows(rows)
    index = next((i for i, c in enumerate(columns) if header(c) == sort_by), 0)
    lines = []
    for r in rows:
        if r["pool"] != pool or family(r) not in wanted or (r.get("source") == "paper" and not show_paper):
            continue
        if query and query not in r["system"].lower() and query not in (r.get("description") or "").lower():
            continue
        cells = tuple(_cell(*cell) for cell in row_cells(r, columns, opened))
        lines.append(Line(r, cells, _rank(r, columns[index], opened)))
    if sort_by == "System":
        lines.sort(key=lambda line: line.system.lower(), reverse=reverse)
        return by_corpus(lines)
    descending = columns[index].higher_is_better != reverse
    present = [x for x in lines if x.cells[index].value is not None]
    # the values of `present` are not None
    present.sort(
        key=lambda line: cast(float, line.cells[index].value), reverse=descending
    )  # stable: ties keep row order
    return by_corpus(present + [x for x in lines if x.cells[index].value is None])


def corpus_of(row: dict[str, Any]) -> tuple[bool, str]:
    """The corpus a row was scored on: (is it the paper's, its corpus version). The paper's reported rows are
    on its 10,000-dialogue corpus over the real Yelp data, the rows scored here on the corpus of this
    leaderboard's data: numbers of two corpora are never ranked together."""
    return row.get("source") == "paper", str(row.get("corpus_version") or "")


def by_corpus(lines: list[Line]) -> list[Line]:
    """`lines` grouped by corpus (`corpus_of`): the rows scored here first, then the paper's as a reference
    block; each group keeps its own order (stable)."""
    first: dict[tuple[bool, str], int] = {}
    for line in lines:
        first.setdefault(corpus_of(line.row), len(first))
    return sorted(lines, key=lambda line: (corpus_of(line.row)[0], first[corpus_of(line.row)]))


def corpus_heading(row: dict[str, Any]) -> str:
    """The heading of a row's corpus group (`corpus_of`), naming the corpus."""
    paper, version = corpus_of(row)
    if paper:
        return (
            f"Reported in the Trace paper (corpus: {version}): a reference, ranked on its own, not "
            "comparable with rows of another corpus"
        )
    return f"Scored here (corpus {short_version(version) or 'unversioned'}), ranked on their own"


def _rank(row: dict[str, Any], column: Column, opened: dict[tuple[str, Any], dict[str, Any]]) -> Rank | None:
    """The row's rank on `column` (an `open:` column: its open-pool row's), None where it has none."""
    from trace_metrics.tables import OPEN_PREFIX

    metric = column.metric
    if metric.startswith(OPEN_PREFIX):
        row, metric = opened.get((row["system"], row.get("source"))) or {}, metric[len(OPEN_PREFIX) :]
    rank = (row.get("rank") or {}).get(metric)
    if not isinstance(rank, int) or isinstance(rank, bool):
        return None
    ci = (row.get("rank_ci") or {}).get(metric)
    if isinstance(ci, list) and len(ci) == 2 and all(isinstance(x, int) for x in ci):
        return Rank(header(column), rank, ci[0], ci[1])
    return Rank(header(column), rank)


def short_version(version: str) -> str:
    """The first 12 hex digits of a SHA-256 version; other version strings (the paper's) as they are."""
    return version[:12] if len(version) == 64 else version


def leaderboard_frame(
    rows: Sequence[dict[str, Any]],
    view: str,
    pool: str = "closed",
    families: Iterable[str] = FAMILIES,
    query: str = "",
    show_paper: bool = True,
    sort_by: str | None = None,
    reverse: bool = False,
) -> pd.DataFrame:
    """`board_lines` as a DataFrame (values rounded to DECIMALS; NaN = empty), for tests and exports."""
    columns = view_columns(view)
    lines = board_lines(rows, view, pool, families, query, show_paper, sort_by, reverse)
    records = []
    for line in lines:
        r = line.row
        rec: dict[str, Any] = {
            "System": r["system"],
            "Family": family(r),
            "Source": SOURCE_LABELS.get(r.get("source") or "", r.get("source") or ""),
        }
        for c, cell in zip(columns, line.cells, strict=True):
            rec[header(c)] = None if cell.value is None else round(cell.value, DECIMALS)
        rec["Corpus version"] = short_version(r.get("corpus_version") or "")
        rec["KB version"] = short_version(r.get("kb_version") or "")
        rec["Description"] = r.get("description") or ""
        records.append(rec)
    frame = pd.DataFrame.from_records(records, columns=frame_columns(view))
    for c in columns:
        frame[header(c)] = frame[header(c)].astype("float64")
    return frame
