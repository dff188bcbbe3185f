"""Shards: a run's share of several (`--shard I/N`), a deterministic partition of the dialogues.

A dialogue belongs to shard `int(sha256(dialogue_id)[:8 bytes]) % N`: the same shard on every machine, in every
re-run and whatever order the dialogues are read in, so that N jobs started anywhere (a Slurm array, N shells)
cover each dialogue exactly once. Inside a shard the dialogues keep their corpus order, and each one's position
in the whole run is recorded (`Shard.record`), which is what lets a merge put the shards' rows back in the one
order an unsharded run writes (`trace-bench merge`).
"""

from __future__ import annotations

import argparse
import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from trace_bench.errors import UsageError

T = TypeVar("T")

SHARD_KEY = "shard"  # the run metadata's field holding a shard's record


def shard_of(unit_id: str, count: int) -> int:
    """The shard (0 .. count-1) that `unit_id` belongs to among `count`."""
    digest = hashlib.sha256(unit_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count


@dataclass(frozen=True)
class Shard:
    """Shard `index` of `count` (0-based)."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if isinstance(self.count, bool) or not isinstance(self.count, int) or self.count < 1:
            raise UsageError(f"a shard count must be a positive whole number, got {self.count!r}")
        if (
            isinstance(self.index, bool)
            or not isinstance(self.index, int)
            or not 0 <= self.index < self.count
        ):
            raise UsageError(
                f"shard index {self.index!r} is not in 0..{self.count - 1} (of {self.count} shards)"
            )

    @classmethod
    def parse(cls, text: str) -> Shard:
        """`I/N` (0 <= I < N), as `--shard` takes it."""
        index, sep, count = str(text).partition("/")
        if not sep or not index.strip().isdigit() or not count.strip().isdigit():
            raise UsageError(f"--shard takes I/N (shard I of N, 0 <= I < N), got {text!r}")
        return cls(int(index), int(count))

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def owns(self, unit_id: str) -> bool:
        return shard_of(unit_id, self.count) == self.index

    def pick(self, items: Iterable[T], key: Callable[[T], str]) -> tuple[list[T], list[int], int]:
        """(this shard's items in their order, each one's position among all items, how many items there are)."""
        mine: list[T] = []
        positions: list[int] = []
        n = 0
        for n, item in enumerate(items, start=1):
            if self.owns(key(item)):
                mine.append(item)
                positions.append(n - 1)
        return mine, positions, n

    def record(self, unit_ids: Sequence[str], positions: Sequence[int], total: int) -> dict[str, Any]:
        """What the run metadata keeps of the shard: which it is, and its units with their positions."""
        return {
            "index": self.index,
            "count": self.count,
            "of": total,
            "units": [[p, u] for p, u in zip(positions, unit_ids, strict=True)],
        }


def shard_argument(text: str) -> Shard:
    """argparse's type for `--shard I/N`."""
    try:
        return Shard.parse(text)
    except UsageError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def add_shard_argument(parser: argparse.ArgumentParser) -> None:
    """`--shard I/N`, the same on every command that takes it."""
    parser.add_argument(
        "--shard",
        type=shard_argument,
        default=None,
        metavar="I/N",
        help="only shard I of N (0 <= I < N): the dialogues whose id hashes to I, the same on any machine; "
        "each shard writes its own resumable output, joined by trace-bench merge",
    )
