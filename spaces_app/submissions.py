"""Score an uploaded predictions file and store it as a leaderboard row.

The upload is first streamed in bounded memory (spaces_app.uploads: size after decompression, line length,
UTF-8), then goes through exactly the validation of `trace-bench evaluate` (`trace_metrics.lib.suite.evaluate_run`
with its defaults: every system turn of the split once, known POIs from the dialogue's pool); only a file
that validated and scored reaches the store, and the store lets only the row's owner replace it
(spaces_app.owners), keeping every earlier version. Scoring runs without the NLI model and the LLM judge
(their columns stay empty for submissions). A submission to a blind period (spaces_app.blind) is scored the
same way against the period's private gold; every submission is counted for its owner, and a blind one only
within the period's quota (spaces_app.accountability).
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spaces_app.accountability import QuotaError, count_check, read_manifest, track_key
from spaces_app.blind import BLIND_SPLIT, Period, blind_fields, hide_gold, strip_gold
from spaces_app.names import invisible_char
from spaces_app.owners import Owner, OwnerError, check_replace
from spaces_app.store import Checked, ResultsStore, check_description, check_name, lookalike_of, slugify
from spaces_app.uploads import UploadError, first_unparsable_line, read_upload
from trace_bench.errors import TraceBenchError
from trace_dataset.io import TraceDataError
from trace_harness.leaderboard.build import result_row
from trace_harness.leaderboard.reproduction import ManifestError

log = logging.getLogger(__name__)

SUBMIT_POOLS: tuple[str, ...] = ("closed", "open")  # the pools the leaderboard shows
CLOSED_AS_OPEN_MIN_TURNS = 20  # ranked turns all inside the closed pool before an "open" file is refused


class SubmissionError(TraceBenchError, ValueError):
    """A submission that cannot be accepted; the message is shown to the submitter."""


def submit(
    store: ResultsStore,
    settings,
    predictions_path: str | Path | None,
    *,
    name: str,
    owner: Owner,
    description: str = "",
    pool: str = "closed",
    reserved: Collection[str] = (),
    kb: Any = None,
    before_store: Callable[[], None] | None = None,
    period: Period | None = None,
    manifest_path: str | Path | None = None,
) -> dict[str, Any]:
    """Validate, score and store one predictions file; returns the stored row or raises SubmissionError.

    `owner`: who submits (spaces_app.owners); only the owner of an existing row of the same name and pool
    replaces it. `reserved`: system names of rows that are not submissions (baselines, paper rows); a
    submission whose name has the same slug, or looks like one of them or like a stored row of another name
    (spaces_app.names: TR39 skeletons), is refused: before the scoring, and again by the store under its lock
    just before the row is written, so of two look-alikes submitted at the same moment one is stored. `kb`: an
    already loaded KnowledgeBase of `settings.data_dir`. `before_store`: called once the file has scored, before
    the store is asked for the row (the CLI shows a new submitter token there); when it raises, nothing is
    stored. `period`: a blind period (spaces_app.blind): the file is scored against its gold, within the
    owner's quota (spaces_app.accountability, counted again under the store's lock). `manifest_path`: the
    `trace-bench reproduce` manifest of the run, checked and kept on the row.
    """
    name, description = _checked_texts(name, description, pool, reserved, store, owner)
    if period is not None and not period.open:
        raise SubmissionError(f"blind period {period.name!r} is {period.state}: it takes no new submissions")
    counting = count_check(owner, track_key(_track_fields(period)), settings.quota if period else None)
    try:
        if period is not None:  # the quota early, before the scoring; again under the store's lock
            counting(store.rows())
        manifest = read_manifest(manifest_path)
    except (QuotaError, ManifestError) as e:
        raise SubmissionError(str(e)) from None
    data_dir, split = (period.gold_dir, BLIND_SPLIT) if period else (settings.data_dir, settings.split)
    if data_dir is None:
        raise SubmissionError(
            "this leaderboard has no data directory configured (TRACE_SPACE_DATA): "
            "submissions cannot be scored"
        )
    if not predictions_path:
        raise SubmissionError("no predictions file uploaded")
    path = Path(predictions_path)
    if not path.is_file():
        raise SubmissionError(f"{path.name}: no such file")
    with tempfile.TemporaryDirectory(prefix="trace-submission-") as tmp:
        try:
            upload = read_upload(path, Path(tmp) / "predictions.jsonl", settings.max_upload_mb * 2**20)
        except UploadError as e:
            raise SubmissionError(str(e)) from None
        where = Scoring(Path(data_dir), split, period)
        row = _scored_row(where, upload.plain, path.name, pool, None if period else kb, name, description)
        if manifest is not None:
            row["manifest"] = manifest
        if before_store is not None:
            before_store()

        def check(rows: list[dict[str, Any]]) -> Checked:
            retire = refuse_lookalike(name, rows, reserved, owner, pool)
            return Checked(fields=counting(rows) or {}, retire=retire)

        try:
            stored = store.put(row, path, owner, suffix=upload.suffix, check=check)
        except (OwnerError, QuotaError) as e:
            raise SubmissionError(str(e)) from None
    log.info("stored submission %r (%s pool), version %s", name, pool, stored.get("version"))
    return stored


def _checked_texts(
    name: str, description: str, pool: str, reserved: Collection[str], store: ResultsStore, owner: Owner
) -> tuple[str, str]:
    try:
        name = check_name(name)
        description = check_description(description)
    except ValueError as e:
        raise SubmissionError(str(e)) from None
    if slugify(name) in {slugify(r) for r in reserved}:
        raise SubmissionError(f"the name {name!r} belongs to a baseline or paper row; choose another name")
    refuse_lookalike(name, store.rows(), reserved, owner, pool)  # early; again under the store's lock
    if pool not in SUBMIT_POOLS:
        raise SubmissionError(f"unknown pool {pool!r}; expected one of {SUBMIT_POOLS}")
    return name, description


def _track_fields(period: Period | None) -> dict[str, Any]:
    return blind_fields(period) if period is not None else {}


@dataclass(frozen=True)
class Scoring:
    """Where a file is scored: a data directory and split, and the blind period whose gold it is."""

    data_dir: Path
    split: str
    period: Period | None = None


def _scored_row(
    where: Scoring, plain: Path, shown: str, pool: str, kb: Any, name: str, description: str
) -> dict[str, Any]:
    """The row of a validated, scored file (a blind one without what would tell its gold)."""
    try:
        result = _score(where, plain, shown, pool, kb)
        if pool == "open" and _closed_pool_only(where, plain):
            raise SubmissionError(
                f"{shown}: every ranking stays inside its dialogue's closed pool of candidates: these are "
                "closed-pool predictions; submit them to the closed pool (an open-pool system ranks the city's "
                "whole open set)"
            )
    except SubmissionError as e:
        if where.period is None:
            raise
        raise SubmissionError(hide_gold(str(e), where.period)) from None
    row = result_row(result, system=name, family="submitted", source="submission", description=description)
    if where.period is not None:
        row = strip_gold({**row, **blind_fields(where.period)})
    return row


def refuse_lookalike(
    name: str,
    rows: list[dict[str, Any]],
    reserved: Collection[str] = (),
    owner: Owner | None = None,
    pool: str | None = None,
) -> list[dict[str, Any]]:
    """SubmissionError when `name` looks like a reserved name or one of the stored `rows`' names but is
    another system (spaces_app.names.lookalike_key); returns the rows it may retire instead.

    A stored row whose name today's checks refuse (an invisible character stored before they were refused:
    `Alice` + U+FE0F) is its owner's: `owner`, when it owns that row, may submit the look-alike name the
    checks accept (`Alice`), and the old row of the same `pool` is returned, to be retired from the board by
    the store in the same write (its history and requests stay); anyone else is told whose row it is.
    """
    other = lookalike_of(name, [{"system": r} for r in reserved])
    if other is not None:
        raise SubmissionError(
            f"the name {name!r} looks like the existing row {other!r} (the same letters to a "
            "reader, Unicode TR39); choose a name that reads differently"
        )
    retire = []
    for row in rows:
        other = lookalike_of(name, [row])
        if other is None:
            continue
        hidden = invisible_char(other)
        if hidden is None:
            raise SubmissionError(
                f"the name {name!r} looks like the existing row {other!r} (the same letters to a "
                "reader, Unicode TR39); choose a name that reads differently"
            )
        try:
            if owner is None:
                raise OwnerError("no owner given")
            check_replace(row, owner)
        except OwnerError:
            raise SubmissionError(
                f"the name {name!r} looks like the existing row {other!r}, whose name holds an invisible "
                f"character ({hidden}) and was stored before such names were refused; only that row's owner "
                "can take this name (and so replace it, with the token or account it was stored with); "
                "choose a name that reads differently"
            ) from None
        if row.get("pool") == pool:
            retire.append(row)
    return retire


def _closed_pool_only(where: Scoring, plain: Path) -> bool:
    """Whether at least CLOSED_AS_OPEN_MIN_TURNS rankings of a (validated) file are non-empty and every
    ranking lies inside its dialogue's closed candidate pool (which the open set contains)."""
    from trace_dataset.constants import POOL_FIELDS
    from trace_dataset.datadir import iter_dialogues
    from trace_dataset.io import read_jsonl

    closed = {
        d["dialogue_id"]: set(d[POOL_FIELDS["closed"]]) for d in iter_dialogues(where.data_dir, where.split)
    }
    ranked = 0
    for row in read_jsonl(plain):
        ids = row.get("ranked_poi_ids") or []
        if not ids:
            continue
        if not set(ids) <= closed.get(row.get("dialogue_id"), set()):
            return False
        ranked += 1
    return ranked >= CLOSED_AS_OPEN_MIN_TURNS


def _score(where: Scoring, plain: Path, shown: str, pool: str, kb: Any) -> dict[str, Any]:
    """evaluate_run on the plain copy; every failure becomes one line naming the uploaded file."""
    from trace_metrics.lib.suite import evaluate_run

    options: dict[str, Any] = {"with_std": False}
    if kb is not None:
        options["kb"] = kb
    try:
        return evaluate_run(where.data_dir, plain, split=where.split, pool=pool, **options)
    except TraceDataError as e:  # the validators' messages name the file and line
        raise SubmissionError(_one_line(str(e).replace(str(plain), shown))) from None
    except (ValueError, KeyError, TypeError, RecursionError, OverflowError) as e:
        bad = first_unparsable_line(plain)  # what the JSON reader rejects without naming a line
        if bad is not None:
            message = f"{shown}:{bad[0]}: {bad[1]}"
        elif isinstance(e, KeyError):
            message = f"{shown}: malformed predictions: missing {e}"
        else:
            message = f"{shown}: {e or type(e).__name__}"
        raise SubmissionError(_one_line(message.replace(str(plain), shown))) from None


def _one_line(message: str) -> str:
    return " ".join(message.split()) or "invalid predictions"
