"""What every protocol shares: the run config (what a run covers) and the protocol type (how it runs).

`RunConfig` is frozen: the data, the split and candidate pool, which of the split's units the run covers (a
seeded subset, or the first `limit`), the seed, and the shard (`shard`: this run's share of several,
`trace_dataset.shards`). Every protocol picks its units through `RunConfig.select` (or `units`): the first
`limit`, then the shard's among them, whose record (each unit's position in the whole run) the protocol keeps
in its metadata for `trace-bench merge`.

`Protocol` is a template: `run()` starts the run (its settings checked against what an earlier run left, the
work already done read back), then takes `steps()` to the end, a progress bar counting the units each step
finished, and returns what `finish()` writes; the output's lock is held from start to finish, so two
processes never write one output. A protocol implements those three hooks: teacher-forced runs
(`teacher_forced.runner.TeacherForcedRun`), the interactive `trace` and `sniprec` protocols
(`interactive.run.TraceRun`, `interactive.sniprec.SnipRecRun`, both on `interactive.session.InteractiveRun`)
and Collab-REC's benchmark (`collab_rec.run.CollabRecRun`). The commands' functions (`run_baseline`,
`run_interactive`, `run_sniprec`, `run_benchmark`) build one and run it.
"""

from __future__ import annotations

import itertools
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from trace_dataset.constants import SEED
from trace_dataset.lock import output_lock
from trace_dataset.shards import Shard

T = TypeVar("T")


@dataclass(frozen=True)
class RunConfig:
    """What a run covers, whichever protocol runs it."""

    data: Path  # a Trace data directory (a catalogue for SnipRec's protocol, the city CSV for Collab-REC's)
    split: str = "test"
    pool: str = "closed"  # the candidate pool a system ranks (where the protocol has pools)
    subset: int | None = None  # a seeded N-dialogue subset of the split (App. Q's open set), written once
    limit: int | None = None  # the first N units of the split (dialogues, seed pairs, queries); None: all
    seed: int = SEED  # the subset's seed; the simulator's and the tie-breaking's
    shard: Shard | None = None  # this run's share of several (a partition of the units by their id)

    def select(self, items: Iterable[T], key: Callable[[T], str]) -> tuple[list[T], dict[str, Any] | None]:
        """(the units of `items` this run covers, in corpus order; the shard's record, None when unsharded):
        the first `limit`, read no further, then the shard's share of them (`key`: a unit's id)."""
        first = itertools.islice(items, self.limit)
        if self.shard is None:
            return list(first), None
        mine, positions, total = self.shard.pick(first, key)
        return mine, self.shard.record([key(u) for u in mine], positions, total)

    def units(self, items: Iterable[T], key: Callable[[T], str] | None = None) -> list[T]:
        """The units this run covers (`select` without the record); a sharded run needs `key`."""
        if key is None:
            if self.shard is not None:
                raise ValueError("a sharded run picks its units by their id: pass key")
            return list(itertools.islice(items, self.limit))
        return self.select(items, key)[0]


class Protocol(ABC):
    """A resumable run under one protocol (module docstring)."""

    name: ClassVar[str]  # the protocol ("teacher_forced", "trace", "sniprec", "collab_rec")
    unit: ClassVar[str]  # what its progress bar counts
    output_kind: ClassVar[str] = "output folder"  # what `out` is, as a refused second writer is told

    def __init__(self, config: RunConfig, out: Path, *, overwrite: bool = False, progress: bool = True):
        self.config, self.out = config, Path(out)
        self.overwrite, self.progress = overwrite, progress
        self.total, self.done = 0, 0  # units in all, and already done when the run starts (set by start)
        self.label = ""  # what the progress bar is called (set by start)
        self.bar: Any = None

    def run(self) -> Any:
        """Start, take every step, finish (the template), holding the output's lock throughout: a second
        process writing the same output is refused (`trace_dataset.lock.output_lock`)."""
        from tqdm.auto import tqdm

        with output_lock(self.out, what=self.output_kind):
            self.start()
            self.bar = tqdm(
                total=self.total,
                initial=self.done,
                desc=self.label,
                unit=self.unit,
                disable=not self.progress,
                dynamic_ncols=True,
            )
            for finished in self.steps():
                self.bar.update(finished)
            self.bar.close()
            return self.finish()

    @abstractmethod
    def start(self) -> None:
        """Check the settings, record the run's identity, read back what an earlier run finished; set `total`,
        `done` and `label`."""

    @abstractmethod
    def steps(self) -> Iterator[int]:
        """Do the work left, one chunk at a time, each recorded as it finishes; yield the units it finished."""

    @abstractmethod
    def finish(self) -> Any:
        """Write what the whole run makes (metrics, final files), mark it complete, return its result."""
