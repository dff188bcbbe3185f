"""Tasks side by side in forked worker processes.

Each task runs in a fresh process forked from the caller, so the work shares whatever the task function
closes over (a knowledge base, seeded travellers) without pickling it and without a module-level global; only
the task and its result cross a pipe. At most `workers` processes run at once, one task each (the memory a
task took is given back when its process ends). Results come back in the order the tasks finish. Where fork
is not available, or one worker is asked for, the tasks run one after another in this process.
"""

from __future__ import annotations

import multiprocessing as mp
import traceback
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection, wait
from typing import Any, TypeVar, cast

T = TypeVar("T")
R = TypeVar("R")


class WorkerFailed(RuntimeError):
    """A task raised in its worker process (the worker's traceback is the message), or the worker died."""


def can_fork() -> bool:
    return "fork" in mp.get_all_start_methods()


def run_forked(fn: Callable[[T], R], tasks: Sequence[T], workers: int) -> list[R]:
    """fn(task) for every task, in at most `workers` forked processes at once (module docstring)."""
    if workers <= 1 or len(tasks) <= 1 or not can_fork():
        return [fn(task) for task in tasks]
    ctx = mp.get_context("fork")
    todo = list(tasks)
    running: dict[Connection, tuple[Any, T]] = {}
    results: list[R] = []
    try:
        while todo or running:
            while todo and len(running) < workers:
                task = todo.pop(0)
                receive, send = ctx.Pipe(duplex=False)
                process = ctx.Process(target=_child, args=(fn, task, send), daemon=True)
                process.start()
                send.close()  # the child holds its own copy
                running[receive] = (process, task)
            for ready in wait(list(running)):
                conn = cast(Connection, ready)  # wait() returns the connections it was given
                process, task = running.pop(conn)
                results.append(_receive(conn, process, task))
    finally:
        for conn, (process, _) in running.items():  # an error or Ctrl-C: stop what is still running
            process.terminate()
            process.join()
            conn.close()
    return results


def _child(fn: Callable[[Any], Any], task: Any, conn: Connection) -> None:
    try:
        conn.send(("ok", fn(task)))
    except BaseException:  # everything goes back to the parent, which raises it
        conn.send(("error", traceback.format_exc()))
    finally:
        conn.close()


def _receive(conn: Connection, process: Any, task: Any) -> Any:
    try:
        status, value = conn.recv()
    except EOFError:
        process.join()
        raise WorkerFailed(f"the worker of {task!r} died (exit code {process.exitcode})") from None
    finally:
        conn.close()
    process.join()
    if status != "ok":
        raise WorkerFailed(f"the worker of {task!r} failed:\n{value}")
    return value
