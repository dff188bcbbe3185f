"""Merging the shards of one teacher-forced run (`trace-bench run --shard I/N`) into the file one run writes.

Each shard's rows are checked against its own metadata first (the row count and running SHA-256 its run recorded:
an edited shard is refused), then every dialogue's rows are written in the unsharded run's order, and the metadata
is the shard's with the whole run's counts, row hash and summary (the rows' counts and the shards' LLM usage
summed): the same bytes as the unsharded run's for a deterministic system.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from trace_dataset.io import atomic_open, check_output_file, read_json, write_json
from trace_dataset.shards import SHARD_KEY
from trace_harness.fallbacks import add_counts, fallback_report, row_counts
from trace_harness.protocols.teacher_forced.resume import HASH_KEY, ROWS_KEY, RowLedger
from trace_harness.protocols.teacher_forced.runner import meta_path, run_identity
from trace_harness.shards.check import MergeError, ShardPart, check_parts

# What else the shards of one run must share beside the run's identity (a resume's IDENTITY_KEYS).
SHARED_KEYS: tuple[str, ...] = ("corpus_version", "trace_bench_version", "baseline", "parameters")


def read_part(path: Path) -> ShardPart:
    mpath = meta_path(path)
    if not Path(path).is_file() or not mpath.is_file():
        raise MergeError("not a predictions file with its .meta.json beside it", path=path)
    meta = read_json(mpath)
    identity = {k: v for k, v in run_identity(meta).items() if k != SHARD_KEY}
    identity.update({k: meta.get(k) for k in SHARED_KEYS if k not in identity})
    return ShardPart(Path(path), meta, identity)


def _rows_by_dialogue(part: ShardPart) -> dict[str, list[str]]:
    """The shard's lines per dialogue id, after checking them against the count and hash its run recorded."""
    with open(part.path, encoding="utf-8", newline="") as f:
        lines = f.read().splitlines(keepends=True)
    ledger = RowLedger()
    ledger.add(lines)
    if ledger.record() != {ROWS_KEY: part.meta.get(ROWS_KEY), HASH_KEY: part.meta.get(HASH_KEY)}:
        raise MergeError(
            f"shard {part.record['index']}/{part.record['count']}: its rows are not the ones its run recorded "
            "(count or SHA-256 differs): the file was edited or replaced since",
            path=part.path,
        )
    mine = {unit for _, unit in part.record["units"]}
    rows: dict[str, list[str]] = {}
    for lineno, line in enumerate(lines, start=1):
        unit = json.loads(line).get("dialogue_id")
        if unit not in mine:
            raise MergeError(
                f"row of dialogue {unit!r}, which shard {part.record['index']}/{part.record['count']} does "
                "not hold",
                path=part.path,
                line=lineno,
            )
        rows.setdefault(unit, []).append(line)
    return rows


def merge_predictions(shards: Sequence[str | os.PathLike], out: str | os.PathLike) -> dict[str, Any]:
    """Join the shards' predictions files into `out` (and its .meta.json); returns the merged metadata."""
    out = check_output_file(out)
    parts = [read_part(Path(p)) for p in shards]
    order = check_parts(parts)
    rows = [_rows_by_dialogue(p) for p in parts]
    ledger = RowLedger()
    with atomic_open(out, "w") as f:
        for _, n, unit in order:
            lines = rows[n].get(unit, [])
            f.write("".join(lines))
            ledger.add(lines)
    meta = dict(parts[0].meta)
    meta.pop(SHARD_KEY)
    meta["n_dialogues"] = len(order)
    meta["n_rows"] = sum(p.meta["n_rows"] for p in parts)
    meta.update(ledger.record())
    meta.pop("summary", None)
    _summary(meta, parts, out)
    write_json(meta_path(out), meta)
    return meta


def _summary(meta: dict[str, Any], parts: Sequence[ShardPart], out: Path) -> None:
    """The run's summary as one run writes it (runner.TeacherForcedRun.finish), the shards' usage summed."""
    usage: dict[str, Any] = {}
    all_invocations: dict[str, Any] = {}
    for part in parts:
        summary = part.meta.get("summary") or {}
        add_counts(usage, summary.get("usage") or {})
        add_counts(all_invocations, summary.get("usage_all_invocations") or {})
    rows = row_counts(out)
    if rows or usage or all_invocations:
        meta["summary"] = {"rows": rows, "usage": usage, "usage_all_invocations": all_invocations}
        meta["summary"]["fallbacks"] = fallback_report(meta)
