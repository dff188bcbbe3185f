"""The protocol type: the run config picks every protocol's units, the template runs start, steps, finish; each
protocol of the harness is one."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from trace_harness.protocols.base import Protocol, RunConfig
from trace_harness.protocols.collab_rec.run import CollabRecRun
from trace_harness.protocols.interactive.run import TraceRun
from trace_harness.protocols.interactive.sniprec import SnipRecRun
from trace_harness.protocols.teacher_forced.runner import TeacherForcedRun


def test_the_run_config_is_frozen_and_picks_the_first_units_lazily():
    config = RunConfig(Path("data"), limit=2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.split = "train"  # type: ignore[misc]

    def units() -> Iterator[int]:
        yield from (1, 2)
        raise AssertionError("read past the limit")

    assert config.units(units()) == [1, 2]
    assert RunConfig(Path("data")).units(range(4)) == [0, 1, 2, 3]


def test_the_template_starts_steps_and_finishes():
    calls: list[str] = []

    class Count(Protocol):
        name, unit = "count", "item"

        def start(self) -> None:
            calls.append("start")
            self.total, self.done, self.label = 3, 1, "count"

        def steps(self) -> Iterator[int]:
            for _ in range(2):
                calls.append("step")
                yield 1

        def finish(self) -> dict[str, int]:
            calls.append("finish")
            return {"total": self.bar.total, "initial": self.bar.n}  # the bar counts from what was done

    assert Count(RunConfig(Path(".")), Path("out"), progress=False).run() == {"total": 3, "initial": 1}
    assert calls == ["start", "step", "step", "finish"]


def test_every_protocol_of_the_harness_is_one():
    assert all(issubclass(c, Protocol) for c in (TeacherForcedRun, TraceRun, SnipRecRun, CollabRecRun))
    assert [c.name for c in (TeacherForcedRun, TraceRun, SnipRecRun, CollabRecRun)] == [
        "teacher_forced",
        "trace",
        "sniprec",
        "collab_rec",
    ]


def test_a_teacher_forced_run_covers_its_split_or_a_seeded_subset(tmp_path):
    with pytest.raises(ValueError, match="a seeded subset of it"):
        TeacherForcedRun("tfidf", RunConfig(tmp_path, limit=3), tmp_path / "out.jsonl")
