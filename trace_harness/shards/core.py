"""Merging the shards of one CoRE run (`trace-bench core score --shard I/N`) into the folder one run writes
(trace_metrics/core/runner.py): every dialogue's record as its shard wrote it, then scores.jsonl and summary.json
from all of them in the unsharded order, run.json with the run's identity, and usage.json summed over the shards.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from trace_dataset.io import atomic_open, read_json, write_json, write_jsonl
from trace_dataset.shards import SHARD_KEY
from trace_harness.shards.check import MergeError, ShardPart, check_parts
from trace_metrics.core.conversation import safe_file_stem
from trace_metrics.core.runner import (
    DIALOGUES_DIR,
    RUN_FILE,
    SCORES_FILE,
    SUMMARY_FILE,
    USAGE_FILE,
)
from trace_metrics.core.scoring import score_rows, summarize


def is_core(path: Path) -> bool:
    return (Path(path) / RUN_FILE).is_file() and (Path(path) / DIALOGUES_DIR).is_dir()


def unsharded(identity: dict[str, Any]) -> dict[str, Any]:
    """The run's identity without the shard's record (what the shards share, and what one run records)."""
    return {**identity, "source": {k: v for k, v in identity["source"].items() if k != SHARD_KEY}}


def read_part(path: Path) -> ShardPart:
    if not is_core(path):
        raise MergeError(f"not a CoRE output folder (no {RUN_FILE} and {DIALOGUES_DIR}/)", path=path)
    identity = read_json(Path(path) / RUN_FILE).get("identity") or {}
    meta: dict[str, Any] = {SHARD_KEY: (identity.get("source") or {}).get(SHARD_KEY)}
    meta["complete"] = (Path(path) / SUMMARY_FILE).is_file()  # written once every dialogue is scored
    return ShardPart(Path(path), meta, unsharded(identity))


def merge_core(shards: Sequence[str | os.PathLike], out: str | os.PathLike) -> dict[str, Any]:
    """Join the shards' CoRE folders into `out`; returns summary.json's content."""
    out = Path(out)
    parts = [read_part(Path(p)) for p in shards]
    order = check_parts(parts)
    if out.exists() and any(out.iterdir()):
        raise MergeError("the merged CoRE folder must be new or empty", path=out)
    (out / DIALOGUES_DIR).mkdir(parents=True, exist_ok=True)
    records = []
    for _, n, unit in order:
        name = f"{safe_file_stem(unit)}.json"
        source = parts[n].path / DIALOGUES_DIR / name
        record = read_json(source)
        if record.get("id") != unit:
            raise MergeError(f"holds the record of {record.get('id')!r}, expected {unit!r}", path=source)
        with atomic_open(out / DIALOGUES_DIR / name, "wb") as f:
            f.write(source.read_bytes())
        records.append(record)
    identity = parts[0].identity
    debate = bool(identity.get("options", {}).get("debate", True))
    write_json(out / RUN_FILE, {"identity": identity})
    write_jsonl(out / SCORES_FILE, score_rows(records, debate=debate))
    summary = {**summarize(records, debate=debate), "identity": identity}
    write_json(out / SUMMARY_FILE, summary)
    write_json(out / USAGE_FILE, _usage([read_json(p.path / USAGE_FILE) for p in parts]))
    return summary


def _usage(usages: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The shards' usage.json summed (the same keys, in the same order, as one run's)."""
    total: dict[str, Any] = {}
    for usage in usages:
        for key, value in usage.items():
            if isinstance(value, dict):
                inner = total.setdefault(key, {})
                for k, v in value.items():
                    inner[k] = inner.get(k, 0) + v
            else:
                total[key] = total.get(key, 0) + value
    return total
