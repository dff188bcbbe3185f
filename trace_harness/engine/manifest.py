"""What every job manifest holds, whichever job writes it (`trace-bench reproduce`'s OUT/manifest.json): the
environment the job ran in, and the usage totals that add up over the invocations of a resumed job."""

from __future__ import annotations

import importlib.metadata
import platform
import sys
from collections.abc import Mapping
from typing import Any

USAGE_TOTALS: tuple[str, ...] = ("requests", "cache_hits", "prompt_tokens", "completion_tokens", "seconds")


def package_version() -> str:
    try:
        return importlib.metadata.version("trace-bench")
    except importlib.metadata.PackageNotFoundError:  # a source tree that was never installed
        from trace_dataset import __version__

        return __version__


def environment() -> dict[str, str]:
    """The package version, Python and platform."""
    return {"version": package_version(), "python": sys.version.split()[0], "platform": platform.platform()}


def add_usage(total: dict[str, Any], more: Mapping[str, Any] | None) -> dict[str, Any]:
    """Add the USAGE_TOTALS numbers of `more` into `total` (in place; rounded to 3 decimals); returns it."""
    for key, value in (more or {}).items():
        if isinstance(value, (int, float)) and not isinstance(value, bool) and key in USAGE_TOTALS:
            total[key] = round(total.get(key, 0) + value, 3)
    return total
