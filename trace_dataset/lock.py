"""One writer per output: an exclusive lock beside a file or folder a command writes.

`output_lock(path)` holds `<path>.lock` for the block: the file is created if missing, locked with `flock`
(released by the kernel when the holder exits, however it exits) and holds the holder's process id. A second
process asking for the same output is refused at once with OutputBusy, naming the output and the holder's pid.
A lock file a killed process left behind is not locked any more, so the next writer simply takes it over.

The holder removes the file on release, before unlocking; a process that locked a file just removed (it opened
the old one first) sees that the path no longer names what it holds and tries again, so two processes never
both believe they hold the lock. `output_lock(path, wait=True)` waits for the holder instead of refusing: for
an output that several processes may each write and then reuse (a seeded subset that the shards of one run all
read), the first writes it and the others find it written. Where `flock` is missing (not POSIX), the block runs
unlocked.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from trace_dataset.io import TraceDataError, output_error

LOCK_SUFFIX = ".lock"


class OutputBusy(TraceDataError):
    """Another process is writing the same output."""


def lock_path(path: str | os.PathLike) -> Path:
    """The lock file of output `path` (a file or a folder): `<path>.lock`, beside it."""
    path = Path(path).absolute()
    return path.with_name(path.name + LOCK_SUFFIX)


def _holder(lock: Path) -> str:
    try:
        text = lock.read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return "unknown"
    return text if text.isdigit() else "unknown"


def _same_file(fd: int, lock: Path) -> bool:
    try:
        here, there = os.fstat(fd), os.stat(lock)
    except FileNotFoundError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def _acquire(lock: Path, what: str, wait: bool = False) -> int | None:
    """The locked descriptor of `lock` (None without flock); OutputBusy when another process holds it (with
    `wait`, once it lets go)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        return None
    lock.parent.mkdir(parents=True, exist_ok=True)
    while True:
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise output_error(e, lock, "lock file") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise OutputBusy(
                f"another process (pid {_holder(lock)}) is writing this {what}; wait for it to finish, or "
                f"write to another output (a lock file that outlives its process, {lock.name}, is taken over)",
                path=lock.with_name(lock.name[: -len(LOCK_SUFFIX)]),
            ) from None
        if _same_file(fd, lock):
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode("ascii"))
            return fd
        os.close(fd)  # the holder removed it while this process waited to lock it: lock the new one


@contextlib.contextmanager
def output_lock(path: str | os.PathLike, what: str = "output", *, wait: bool = False) -> Iterator[Path]:
    """Hold the lock of output `path` for the block (module docstring); yields the lock file's path. `wait`:
    wait for another holder to let go rather than refuse."""
    lock = lock_path(path)
    fd = _acquire(lock, what, wait)
    try:
        yield lock
    finally:
        if fd is not None:
            with contextlib.suppress(FileNotFoundError):
                lock.unlink()
            os.close(fd)
