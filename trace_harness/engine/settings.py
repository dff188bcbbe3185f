"""The settings record of a job's output folder: the settings that shape its data are written on the first run,
and a rerun in the same folder with other values is refused rather than mixing two corpora in one folder."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from trace_dataset.io import TraceDataError, read_json, write_json


def check_settings(path: Path, settings: Mapping[str, Any], what: str = "job") -> None:
    """Record `settings` at `path`, or refuse (TraceDataError naming each differing key) when the record there
    holds other values; `what` names the job in the message."""
    if not path.exists():
        write_json(path, dict(settings))
        return
    old = read_json(path)
    diff = sorted(k for k in settings if old.get(k) != settings[k])
    if diff:
        raise TraceDataError(
            f"this folder holds a {what} made with other settings ("
            + ", ".join(f"{k}: {old.get(k)!r} there, {settings[k]!r} now" for k in diff)
            + "); use another --out or delete the folder",
            path=path,
        )
