"""Score an uploaded predictions file and store it as a leaderboard row.

The upload is first streamed in bounded memory (spaces_app.uploads: size after decompression, line length,
UTF-8), then goes through exactly the validation of `trace-bench evaluate` (`trace_metrics.lib.suite.evaluate_run`
with its defaults: every system turn of the split once, known POIs from the dialogue's pool); only a file
that validated and scored reaches the store, and the store lets only the row's owner replace it
(spaces_app.owners), keeping every earlier version. Scoring runs without the NLI model and the LLM judge
(their columns stay empty for submissions).
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from spaces_app.names import invisible_char
from spaces_app.owners import Owner, OwnerError, check_replace
from spaces_app.store import ResultsStore, check_description, check_name, lookalike_of, slugify
from spaces_app.uploads import UploadError, first_unparsable_line, read_upload
from trace_bench.errors import TraceBenchError
from trace_dataset.io import TraceDataError
from trace_harness.leaderboard.build import result_row

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
) -> dict[str, Any]:
    """Validate, score and store one predictions file; returns the stored row or raises SubmissionError.

    `owner`: who submits (spaces_app.owners); only the owner of an existing row of the same name and pool
    replaces it. `reserved`: system names of rows that are not submissions (baselines, paper rows); a
    submission whose name has the same slug, or looks like one of them or like a stored row of another name
    (spaces_app.names: TR39 skeletons), is refused: before the scoring, and again by the store under its lock
    just before the row is written, so of two look-alikes submitted at the same moment one is stored. `kb`: an
    already loaded KnowledgeBase of `settings.data_dir`. `before_store`: called once the file has scored, before
    the store is asked for the row (the CLI shows a new submitter token there); when it raises, nothing is
    stored.
    """
    try:
        name = check_name(name)
        description = check_description(description)
    except ValueError as e:
        raise SubmissionError(str(e)) from None
    if slugify(name) in {slugify(r) for r in reserved}:
        raise SubmissionError(f"the name {name!r} belongs to a baseline or paper row; choose another name")
    refuse_lookalike(
        name, store.rows(), reserved, owner, pool
    )  # early, before the scoring; again under the lock
    if pool not in SUBMIT_POOLS:
        raise SubmissionError(f"unknown pool {pool!r}; expected one of {SUBMIT_POOLS}")
    if settings.data_dir is None:
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
        result = _score(settings, upload.plain, path.name, pool, kb)
        if pool == "open" and _closed_pool_only(settings, upload.plain):
            raise SubmissionError(
                f"{path.name}: every ranking stays inside its dialogue's closed pool of candidates: these are "
                "closed-pool predictions; submit them to the closed pool (an open-pool system ranks the city's "
                "whole open set)"
            )
        row = result_row(
            result, system=name, family="submitted", source="submission", description=description
        )
        if before_store is not None:
            before_store()
        try:
            stored = store.put(
                row,
                path,
                owner,
                suffix=upload.suffix,
                check=lambda rows: refuse_lookalike(name, rows, reserved, owner, pool),
            )
        except OwnerError as e:
            raise SubmissionError(str(e)) from None
    log.info("stored submission %r (%s pool), version %s", name, pool, stored.get("version"))
    return stored


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


def _closed_pool_only(settings, plain: Path) -> bool:
    """Whether at least CLOSED_AS_OPEN_MIN_TURNS rankings of a (validated) file are non-empty and every
    ranking lies inside its dialogue's closed candidate pool (which the open set contains)."""
    from trace_dataset.constants import POOL_FIELDS
    from trace_dataset.datadir import iter_dialogues
    from trace_dataset.io import read_jsonl

    closed = {
        d["dialogue_id"]: set(d[POOL_FIELDS["closed"]])
        for d in iter_dialogues(settings.data_dir, settings.split)
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


def _score(settings, plain: Path, shown: str, pool: str, kb: Any) -> dict[str, Any]:
    """evaluate_run on the plain copy; every failure becomes one line naming the uploaded file."""
    from trace_metrics.lib.suite import evaluate_run

    options: dict[str, Any] = {"with_std": False}
    if kb is not None:
        options["kb"] = kb
    try:
        return evaluate_run(settings.data_dir, plain, split=settings.split, pool=pool, **options)
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
