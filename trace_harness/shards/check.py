"""What every merge checks before it joins anything: that the shards are the N shards of one job.

Each shard's run metadata holds its record (`trace_dataset.shards.Shard.record`: index, count, how many units the
whole run has, and its units with their positions). A merge is refused, naming the shard, when a shard's run is
not complete, when the shards differ in anything but their own share (settings, data or prompt hashes: the
`identity` each kind of output compares), when their counts differ, a shard is missing or given twice, or two
shards hold the same dialogue or a position is left uncovered. What it returns is the one order an unsharded run
writes: every unit's (position, shard, id).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trace_dataset.io import TraceDataError
from trace_dataset.shards import SHARD_KEY


class MergeError(TraceDataError):
    """Shards that do not belong together (the message names the shard and what differs)."""


@dataclass(frozen=True)
class ShardPart:
    """One shard's output as a merge reads it: where it is, its metadata, and what must match across shards."""

    path: Path
    meta: dict[str, Any]
    identity: dict[str, Any]

    @property
    def record(self) -> dict[str, Any]:
        return dict(self.meta[SHARD_KEY])


def shard_record(path: Path, meta: Mapping[str, Any]) -> dict[str, Any]:
    """The shard record of one output's metadata; refused when the output was not written as a shard."""
    record = meta.get(SHARD_KEY)
    keys = ("index", "count", "of", "units")
    if not isinstance(record, Mapping) or any(k not in record for k in keys):
        raise MergeError(
            f"not a shard's output (its metadata has no {SHARD_KEY!r} record): run it with --shard I/N",
            path=path,
        )
    return dict(record)


def check_parts(parts: Sequence[ShardPart]) -> list[tuple[int, int, str]]:
    """(position, part number, unit id) of every unit of the job, in the unsharded run's order (module docstring)."""
    if not parts:
        raise MergeError("no shards to merge")
    records = [shard_record(p.path, p.meta) for p in parts]
    first, count = parts[0], records[0]["count"]
    for part, record in zip(parts, records, strict=True):
        if part.meta.get("complete") is not True:
            raise MergeError(
                f"shard {record['index']}/{record['count']} is not complete: rerun its command to finish it",
                path=part.path,
            )
        if record["count"] != count or record["of"] != records[0]["of"]:
            raise MergeError(
                f"shard {record['index']}/{record['count']} of {record['of']} units does not belong with shard "
                f"{records[0]['index']}/{count} of {records[0]['of']} units ({first.path})",
                path=part.path,
            )
        differing = sorted(
            k
            for k in set(part.identity) | set(first.identity)
            if part.identity.get(k) != first.identity.get(k)
        )
        if differing:
            raise MergeError(
                f"shard {record['index']}/{count} was run with other settings than shard "
                f"{records[0]['index']}/{count} ({first.path}); differing: {', '.join(differing)}",
                path=part.path,
            )
    _check_indices(parts, records, count)
    return _order(parts, records)


def _check_indices(parts: Sequence[ShardPart], records: Sequence[dict[str, Any]], count: int) -> None:
    seen: dict[int, Path] = {}
    for part, record in zip(parts, records, strict=True):
        if record["index"] in seen:
            raise MergeError(
                f"shard {record['index']}/{count} is given twice (also {seen[record['index']]})",
                path=part.path,
            )
        seen[record["index"]] = part.path
    missing = [str(i) for i in range(count) if i not in seen]
    if missing:
        raise MergeError(
            f"shard(s) {', '.join(f'{i}/{count}' for i in missing)} missing: a merge needs all {count} shards"
        )


def _order(parts: Sequence[ShardPart], records: Sequence[dict[str, Any]]) -> list[tuple[int, int, str]]:
    by_unit: dict[str, int] = {}
    by_position: dict[int, int] = {}
    order: list[tuple[int, int, str]] = []
    for n, record in enumerate(records):
        for position, unit in record["units"]:
            other = by_unit.get(unit, by_position.get(position))
            if other is not None:
                what = f"dialogue {unit!r}" if unit in by_unit else f"position {position}"
                raise MergeError(
                    f"shard {record['index']}/{record['count']} and shard {records[other]['index']}/"
                    f"{record['count']} ({parts[other].path}) both hold {what}",
                    path=parts[n].path,
                )
            by_unit[unit], by_position[position] = n, n
            order.append((position, n, unit))
    total = records[0]["of"]
    if len(by_position) != total or any(p not in by_position for p in range(total)):
        gap = next((p for p in range(total) if p not in by_position), None)
        raise MergeError(
            f"the shards cover {len(by_position)} of the job's {total} units (position {gap} is in none)"
        )
    return sorted(order)
