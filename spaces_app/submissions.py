"""Score an uploaded predictions file and store it as a leaderboard row.

The file goes through exactly the validation of `trace-bench evaluate` (`trace_metrics.lib.suite.evaluate_run`
with its defaults: every system turn of the split once, known POIs from the dialogue's pool); only a file
that validated and scored reaches the store, so a same-name resubmission replaces the old row only then.
Scoring runs without the NLI model and the LLM judge (their columns stay empty for submissions).
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from pathlib import Path
from typing import Any

from baselines.leaderboard import result_row
from spaces_app.store import DESCRIPTION_MAX_CHARS, ResultsStore, check_name, slugify

log = logging.getLogger(__name__)

SUBMIT_POOLS: tuple[str, ...] = ("closed", "open")  # the pools the leaderboard shows


class SubmissionError(ValueError):
    """A submission that cannot be accepted; the message is shown to the submitter."""


def submit(store: ResultsStore, settings, predictions_path: str | Path, *, name: str, description: str = "",
           pool: str = "closed", reserved: Collection[str] = (), kb: Any = None) -> dict[str, Any]:
    """Validate, score and store one predictions file; returns the stored row or raises SubmissionError.

    `reserved`: system names of rows that are not submissions (baselines, paper rows); a submission whose
    name has the same slug is refused. `kb`: an already loaded KnowledgeBase of `settings.data_dir`.
    """
    from trace_metrics.lib.suite import evaluate_run

    try:
        name = check_name(name)
    except ValueError as e:
        raise SubmissionError(str(e)) from None
    if slugify(name) in {slugify(r) for r in reserved}:
        raise SubmissionError(f"the name {name!r} belongs to a baseline or paper row; choose another name")
    description = (description or "").strip()
    if len(description) > DESCRIPTION_MAX_CHARS:
        raise SubmissionError(f"description is {len(description)} characters; at most {DESCRIPTION_MAX_CHARS} "
                              "are allowed")
    if pool not in SUBMIT_POOLS:
        raise SubmissionError(f"unknown pool {pool!r}; expected one of {SUBMIT_POOLS}")
    if settings.data_dir is None:
        raise SubmissionError("this leaderboard has no data directory configured (TRACE_SPACE_DATA): "
                              "submissions cannot be scored")
    if predictions_path is None or not Path(predictions_path).is_file():
        raise SubmissionError("no predictions file uploaded")
    path = Path(predictions_path)
    size = path.stat().st_size
    if size > settings.max_upload_mb * 2**20:
        raise SubmissionError(f"file is {size / 2**20:.1f} MB; the limit is {settings.max_upload_mb} MB")
    if size == 0:
        raise SubmissionError(f"{path.name}: the file is empty")
    options: dict[str, Any] = {"with_std": False}
    if kb is not None:
        options["kb"] = kb
    try:
        result = evaluate_run(settings.data_dir, path, split=settings.split, pool=pool, **options)
    except (ValueError, KeyError, TypeError) as e:  # TraceDataError and the validators' messages
        message = str(e) if not isinstance(e, KeyError) else f"malformed predictions: missing {e}"
        raise SubmissionError(message.replace(str(path), path.name)) from None
    row = result_row(result, system=name, family="submitted", source="submission", description=description)
    store.put(row, path)
    log.info("stored submission %r (%s pool)", name, pool)
    return row
