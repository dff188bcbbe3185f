"""A second process holding an output's lock, for the one-writer-per-output tests."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

_HOLD = (
    "import sys\n"
    "from trace_dataset.lock import output_lock\n"
    "with output_lock(sys.argv[1]):\n"
    "    print('held', flush=True)\n"
    "    sys.stdin.read()\n"
)


@contextlib.contextmanager
def held_elsewhere(path: str | os.PathLike) -> Iterator[subprocess.Popen]:
    """A child process holding the lock of output `path` for the block (it lets go when the block ends)."""
    child = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(Path(path))],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "held"
        yield child
    finally:
        if child.poll() is None:
            assert child.stdin is not None
            child.stdin.close()
        child.wait(timeout=30)
