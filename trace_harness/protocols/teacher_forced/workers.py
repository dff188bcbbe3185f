"""The predictions of a run's chunks of dialogues, in this process or in worker processes (`num_proc > 1`).

`chunk_results` yields each chunk's JSON lines in chunk order, with the pid that made them and that process's
pipeline summary so far; in a single process a callback runs per row as the pipeline hands it over, so that a
run's progress bar moves inside a chunk. `predict_lines` is one chunk's lines, each checked against the one-row
limit that `trace-bench submit` accepts. With workers, each predicts whole chunks with its own copy of the
pipeline, and the parent takes the chunks' lines back in chunk order (a process pool's ordered imap).

Workers are forked where that is safe (`forks`): a non-LLM pipeline, no torch loaded in the parent (its thread
pools do not survive a fork) and a platform that forks. A forked worker starts with the parent's knowledge base
and pipeline in copy-on-write memory instead of loading the knowledge base and building the pipeline again; a
pipeline keeps only knowledge-base caches (`baselines.base`, session isolation), so what it predicts is the
same. Otherwise workers are spawned and rebuild the pipeline from its name and parameters, with no inherited
threads or locks.
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

Task = tuple[list[dict[str, Any]], str, int]  # (dialogues, pool, rows to skip)


def forks(pipe: TracePipeline) -> bool:
    """Whether workers may be forked from this process with `pipe` (module docstring)."""
    return (
        pipe.family == "non-LLM"
        and "torch" not in sys.modules
        and "fork" in multiprocessing.get_all_start_methods()
    )


def _init_worker(name: str, kb_root: str, params: dict[str, Any], batch_size: int) -> None:
    global _WORKER
    # N workers already use N cores: a model-backed baseline (dense, hybrid_rrf) must not also start a
    # thread pool per worker, which oversubscribes the cores (measured: 2x the CPU time for the same work).
    os.environ["OMP_NUM_THREADS"] = "1"
    if _WORKER is None:  # spawned; a forked worker has the parent's pipeline already
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


def _work(task: Task) -> tuple[list[str], int, dict[str, Any]]:
    """A chunk's lines, with this worker's pid and its summary so far (the parent keeps the latest per pid)."""
    if _WORKER is None:
        raise RuntimeError("worker process was not initialised")
    dialogues, pool, skip = task
    return predict_lines(_WORKER, dialogues, pool, skip), os.getpid(), _WORKER.summary()


def worker_results(
    pipe: TracePipeline,
    name: str,
    kb_root: str,
    params: dict[str, Any],
    batch_size: int,
    tasks: list[Task],
    num_proc: int,
) -> Iterator[tuple[list[str], int, dict[str, Any]]]:
    """(lines, pid, the worker's summary so far) of each task, in task order, from `num_proc` workers."""
    global _WORKER
    fork = forks(pipe)
    _WORKER = pipe if fork else None
    ctx = multiprocessing.get_context("fork" if fork else "spawn")
    try:
        with ctx.Pool(num_proc, initializer=_init_worker, initargs=(name, kb_root, params, batch_size)) as mp:
            yield from mp.imap(_work, tasks)
    finally:
        _WORKER = None


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
    """(lines, pid, the process's summary so far) of each chunk, in chunk order (single process, or workers);
    `on_row`: called per row in a single process (predict_lines)."""
    if num_proc == 1 or len(tasks) <= 1:
        for chunk, skip, _ in tasks:
            yield predict_lines(pipe, chunk, pool, skip, on_row), os.getpid(), pipe.summary()
        return
    if kb.root is None:
        raise ValueError("num_proc > 1 needs a knowledge base loaded from a folder (KnowledgeBase.load)")
    work = [(chunk, pool, skip) for chunk, skip, _ in tasks]
    yield from worker_results(pipe, name, str(kb.root), params, batch_size, work, num_proc)
