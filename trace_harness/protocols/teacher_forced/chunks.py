"""The predictions of a run's chunks of dialogues, in this process or in a pool of worker processes.

`chunk_results` yields each chunk's JSON lines in chunk order (a process pool's ordered imap), with the pid that
made them and that process's pipeline summary so far (in a single process, a callback per row as the
pipeline hands it over, so that a run's progress bar moves inside a chunk); `predict_lines` is one chunk's lines, each checked
against the one-row limit that `trace-bench submit` accepts.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from baselines import pipeline
from baselines.base import TracePipeline
from trace_dataset.constants import MAX_PREDICTION_LINE_BYTES
from trace_dataset.io import TraceDataError
from trace_dataset.kb.store import KnowledgeBase
from trace_dataset.prediction import Prediction
from trace_dataset.views import turn_rows

_WORKER: TracePipeline | None = None


def _init_worker(name: str, kb_root: str, params: dict[str, Any], batch_size: int) -> None:
    global _WORKER
    # N workers already use N cores: a model-backed baseline (dense, hybrid_rrf) must not also start a
    # thread pool per worker, which oversubscribes the cores (measured: 2x the CPU time for the same work).
    os.environ["OMP_NUM_THREADS"] = "1"
    _WORKER = pipeline(name, kb=KnowledgeBase.load(kb_root), batch_size=batch_size, **params)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)


def predict_lines(
    pipe: TracePipeline,
    dialogues: Sequence[dict[str, Any]],
    pool: str,
    skip: int = 0,
    on_row: Callable[[], object] | None = None,
) -> list[str]:
    """JSON lines for every system turn of `dialogues`, in order, without the first `skip` rows; `on_row` is
    called for each kept row as the pipeline hands it over (a progress bar moves inside a chunk)."""
    rows = (r for d in dialogues for r in turn_rows(d, pool))
    lines = []
    for rec in pipe(rows):
        lines.append(_checked_line(pipe.name, rec))
        if on_row is not None and len(lines) > skip:
            on_row()
    return lines[skip:]


def _checked_line(name: str, record: Prediction) -> str:
    """The prediction as a JSON line; TraceDataError when it passes the one-row limit that `trace-bench submit`
    and the Space accept (a run stops there rather than write a file nobody can submit)."""
    line = record.to_json() + "\n"
    size = len(line.encode("utf-8"))
    if size > MAX_PREDICTION_LINE_BYTES:
        raise TraceDataError(
            f"{name}: the prediction of dialogue {record.dialogue_id!r} turn {record.turn_id} is "
            f"{size:,} bytes as a JSON line; a prediction row is at most {MAX_PREDICTION_LINE_BYTES:,} bytes (what "
            "trace-bench submit accepts): shorten the system's response"
        )
    return line


def _work(task: tuple[list[dict[str, Any]], str, int]) -> tuple[list[str], int, dict[str, Any]]:
    """A chunk's lines, with this worker's pid and its summary so far (the parent keeps the latest per pid)."""
    if _WORKER is None:
        raise RuntimeError("worker process was not initialised")
    dialogues, pool, skip = task
    return predict_lines(_WORKER, dialogues, pool, skip), os.getpid(), _WORKER.summary()


def chunk_results(
    pipe: TracePipeline,
    name: str,
    kb: KnowledgeBase,
    params: dict[str, Any],
    batch_size: int,
    tasks: list[tuple[list[dict[str, Any]], int, int]],
    pool: str,
    num_proc: int,
    on_row: Callable[[], object] | None = None,
) -> Iterator[tuple[list[str], int, dict[str, Any]]]:
    """(lines, pid, the process's summary so far) of each chunk, in chunk order (single process, or a process
    pool's ordered imap); `on_row`: called per row in a single process (predict_lines)."""
    if num_proc == 1 or len(tasks) <= 1:
        for chunk, skip, _ in tasks:
            yield predict_lines(pipe, chunk, pool, skip, on_row), os.getpid(), pipe.summary()
        return
    if kb.root is None:
        raise ValueError("num_proc > 1 needs a knowledge base loaded from a folder (KnowledgeBase.load)")
    # spawn: workers rebuild the pipeline from its name and parameters; no inherited threads or locks.
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(
        num_proc, initializer=_init_worker, initargs=(name, str(kb.root), params, batch_size)
    ) as mp:
        yield from mp.imap(_work, [(chunk, pool, skip) for chunk, skip, _ in tasks])
