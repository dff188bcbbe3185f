"""Tasks side by side in forked worker processes: shared state is inherited, not pickled; failures come back."""

from __future__ import annotations

import os
import threading

import pytest

from trace_harness.engine.forks import WorkerFailed, can_fork, run_forked

pytestmark = pytest.mark.skipif(not can_fork(), reason="fork is not available on this platform")


def test_workers_share_what_the_function_closes_over_without_pickling_it():
    lock = threading.Lock()  # not picklable: a spawned worker, or a pickled task, could not carry it
    table = {i: i * i for i in range(10)}

    def square(i: int) -> tuple[int, int, int]:
        with lock:
            return i, table[i], os.getpid()

    results = run_forked(square, list(range(6)), workers=3)
    assert sorted((i, sq) for i, sq, _ in results) == [(i, i * i) for i in range(6)]
    pids = {pid for _, _, pid in results}
    assert os.getpid() not in pids and len(pids) == 6  # one fresh process per task


def test_one_worker_runs_the_tasks_here_in_order():
    assert run_forked(lambda i: (i, os.getpid()), [3, 1, 2], workers=1) == [
        (i, os.getpid()) for i in (3, 1, 2)
    ]


def test_a_task_that_raises_stops_the_run_with_the_workers_traceback():
    def fails(i: int) -> int:
        if i == 2:
            raise ValueError("task two is broken")
        return i

    with pytest.raises(WorkerFailed, match="task two is broken"):
        run_forked(fails, [1, 2, 3], workers=2)
