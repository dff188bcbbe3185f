"""What every benchmark script prints alongside its figures: wall and CPU time, and the machine."""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable
from typing import Any


def timed(fn: Callable[[], Any]) -> tuple[Any, float, float]:
    """(result, wall seconds, CPU seconds of this process) of calling fn()."""
    t, c = time.perf_counter(), time.process_time()
    result = fn()
    return result, time.perf_counter() - t, time.process_time() - c


def machine() -> str:
    """CPU model, cores, load average and Python: a shared machine's load inflates wall-clock figures."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), cpu)
    except OSError:
        pass
    load = " load {:.1f}/{:.1f}/{:.1f},".format(*os.getloadavg()) if hasattr(os, "getloadavg") else ""
    return f"{cpu}, {os.cpu_count()} cores,{load} Python {platform.python_version()}, {platform.system()}"
