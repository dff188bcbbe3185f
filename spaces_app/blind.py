"""The blind track: test periods whose gold stays on the server.

A period is one gold folder written by `trace-bench corpus blind --data DIR --period NAME --out OUT`
(OUT/gold: a hydrated data directory with the gold, and period.json: period, created, split, dialogues,
statistics, seed); the submitters get OUT/inputs, the same dialogues without gold. The Space reads the folders of TRACE_SPACE_BLIND (and the private
Hub datasets of TRACE_SPACE_BLIND_REPOS, downloaded with HF_TOKEN when the app starts) and scores each blind
submission against its period's gold with the same `evaluate_run` as every other row.

A period's state is the one word in the gold folder's `state` file (no file: open):
    open       submissions are scored and shown
    closed     no new submission or replacement; the rows stay as they are (frozen)
    published  as closed, and the gold may be published (the board says so); a new period is a new folder

Nothing of the gold leaves the server: it is read only to score; a blind row keeps its aggregate scores and
intervals but not its per-dialogue data, nor the gold's corpus version (its hash is the period name instead);
a refused blind file gets a message that names no gold POI (`hide_gold`). The period's seed is never read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trace_bench.errors import TraceBenchError
from trace_dataset.io import TraceDataError, read_json
from trace_dataset.release.blind import BLIND_SPLIT, PERIOD_FILE, PERIOD_RE
from trace_dataset.release.blind import GOLD_TURN_FIELDS as GOLD_FIELDS

STATE_FILE = "state"
STATES: tuple[str, ...] = ("open", "closed", "published")
PUBLIC_TRACK = "public"
PERIOD_NAME = PERIOD_RE  # the names `corpus blind` accepts
REFUSED_MESSAGE = (
    "the predictions file does not match this period's inputs (one row per system turn of the inputs "
    "release, ranking only each dialogue's candidates); the details would name the hidden gold, so they are "
    "not shown"
)


class PeriodError(TraceBenchError, ValueError):
    """A blind period's folder that cannot be served; the message names the folder and the field."""


@dataclass(frozen=True)
class Period:
    name: str
    gold_dir: Path
    state: str = "open"
    created: str = ""
    n_dialogues: int = 0

    @property
    def track(self) -> str:
        return row_track({"period": self.name})

    @property
    def open(self) -> bool:
        return self.state == "open"

    def label(self) -> str:
        return f"{self.track} ({self.state})"


def row_track(row: dict[str, Any]) -> str:
    """The track a row is shown in: PUBLIC_TRACK, or its blind period's (`Period.track`)."""
    period = row.get("period")
    return f"blind {period}" if isinstance(period, str) and period else PUBLIC_TRACK


def read_state(gold_dir: Path) -> str:
    path = gold_dir / STATE_FILE
    if not path.exists():
        return "open"
    state = path.read_text(encoding="utf-8").strip()
    if state not in STATES:
        raise PeriodError(f"{path}: state {state!r}; expected one of {STATES}")
    return state


def load_period(gold_dir: str | Path) -> Period:
    """The period of a gold folder (PeriodError naming the file and field)."""
    gold_dir = Path(gold_dir)
    path = gold_dir / PERIOD_FILE
    try:
        meta = read_json(path)
    except (OSError, ValueError, TraceDataError) as e:
        raise PeriodError(f"{path}: not a blind period's gold folder ({e})") from None
    name = meta.get("period") if isinstance(meta, dict) else None
    if not isinstance(name, str) or not PERIOD_NAME.fullmatch(name):
        raise PeriodError(
            f"{path}: field 'period' is {name!r}; expected a name of letters, digits, '.', '_', '-'"
        )
    n = meta.get("dialogues", meta.get("n_dialogues"))
    return Period(
        name, gold_dir, read_state(gold_dir), str(meta.get("created") or ""), n if isinstance(n, int) else 0
    )


def load_periods(dirs: Iterable[Path]) -> tuple[Period, ...]:
    """The periods of the gold folders, in the given order (PeriodError when two share a name)."""
    periods = tuple(load_period(d) for d in dirs)
    names = [p.name for p in periods]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise PeriodError(
            f"blind periods {twice} are configured twice (TRACE_SPACE_BLIND): one folder per period"
        )
    return periods


def current(period: Period) -> Period:
    """`period` with its state as its folder says now (a maintainer closes a period while the app serves)."""
    state = read_state(period.gold_dir)
    return (
        period
        if state == period.state
        else Period(period.name, period.gold_dir, state, period.created, period.n_dialogues)
    )


def download_repos(
    repos: Iterable[str], token: str | None, download: Callable[..., str] | None = None
) -> list[Path]:
    """The local folders of private Hub datasets holding gold folders (snapshot_download; cached)."""
    repos = list(repos)
    if not repos:
        return []
    if download is None:
        from huggingface_hub import snapshot_download

        download = snapshot_download
    fetch = download
    return [Path(fetch(repo_id=repo, repo_type="dataset", token=token)) for repo in repos]


def gold_ids(period: Period) -> frozenset[str]:
    """Every gold and acceptable-alternative POI id of the period (what no message may name)."""
    from trace_dataset.datadir import iter_dialogues

    ids: set[str] = set()
    for d in iter_dialogues(period.gold_dir, BLIND_SPLIT):
        for t in d["turns"]:
            for key in GOLD_FIELDS:
                ids.update(t.get(key) or ())
    return frozenset(ids)


def hide_gold(message: str, period: Period) -> str:
    """`message` unless it names a gold POI of the period; then one fixed message, the same whichever POI."""
    return REFUSED_MESSAGE if any(pid in message for pid in gold_ids(period)) else message


def blind_fields(period: Period) -> dict[str, Any]:
    """What a blind row carries instead of the gold's versions: its track and period."""
    return {"track": "blind", "period": period.name, "corpus_version": f"blind period {period.name}"}


def strip_gold(row: dict[str, Any]) -> dict[str, Any]:
    """A blind row without what would tell the gold: per-dialogue scores (with the public predictions, a
    dialogue's hit tells its gold POI) and per-dialogue leads."""
    return {k: v for k, v in row.items() if k not in ("per_dialogue", "lead")}


def find_period(periods: Iterable[Period], name: str) -> Period:
    for p in periods:
        if p.name == name:
            return current(p)
    known = [p.name for p in periods]
    raise PeriodError(f"unknown blind period {name!r}; expected one of {known}")
