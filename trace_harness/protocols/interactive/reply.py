"""What every system the simulated traveler talks to meets: the `System` interface (turn rows in, one
`SystemReply` per row out), the check that turns a bad reply into a lost turn (`check_reply`, `LOST_REASONS`),
the limits an external system runs under, and `SystemUnreachable`, which stops a run (resumable) instead.
The systems themselves are in `trace_harness.protocols.interactive.systems` (and `http_system`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from trace_bench.errors import TraceBenchError
from trace_dataset.constants import MAX_PREDICTION_LINE_BYTES
from trace_dataset.io import dumps

DEFAULT_TIMEOUT_S = 30.0
DEFAULT_CONCURRENCY = 8
DEFAULT_MAX_REPLY_BYTES = (
    MAX_PREDICTION_LINE_BYTES  # a reply longer than the row it becomes could not be submitted
)
LOST_REASONS: tuple[str, ...] = ("timeout", "error", "garbage", "out_of_pool")


class SystemUnreachable(TraceBenchError):
    """The system under test cannot be reached: the run stops (resumable) instead of losing every turn."""


def not_unicode(*texts: str) -> bool:
    """Whether a text holds a lone surrogate (valid in a Python str and in JSON escapes, not in UTF-8)."""
    try:
        for text in texts:
            text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


@dataclass
class SystemReply:
    """One system turn as the loop records it."""

    action: str
    ranked_poi_ids: list[str]
    response: str
    citations: dict[str, str]
    meta: dict[str, Any] = field(default_factory=dict)
    scores: Mapping[str, Any] | None = (
        None  # the system's scores, when known (tie groups of the turn metrics)
    )
    lost: str | None = None  # why the turn was lost (LOST_REASONS), None when it counts

    @classmethod
    def lost_turn(cls, action: str, reason: str, detail: str) -> SystemReply:
        if reason not in LOST_REASONS:
            raise ValueError(f"unknown lost-turn reason {reason!r}; expected one of {LOST_REASONS}")
        return cls(action, [], "", {}, {"lost": reason, "detail": detail[:300]}, None, reason)


def check_reply(row: Mapping[str, Any], reply: SystemReply) -> SystemReply:
    """The reply, or a lost turn when it ranks POIs outside the row's candidates (or ranks one twice), holds
    text that is not valid Unicode, or would make a prediction row over the submission limit."""
    ranked = reply.ranked_poi_ids
    if not_unicode(reply.response, *ranked, *reply.citations, *reply.citations.values()):
        return SystemReply.lost_turn(
            reply.action, "garbage", "the reply holds a lone surrogate (not valid Unicode)"
        )
    size = len(
        dumps({"ranked_poi_ids": ranked, "response": reply.response, "citations": reply.citations}).encode()
    )
    if size > MAX_PREDICTION_LINE_BYTES:
        return SystemReply.lost_turn(
            reply.action,
            "garbage",
            f"the reply makes a prediction row of {size:,} bytes; "
            f"the limit is {MAX_PREDICTION_LINE_BYTES:,} (what trace-bench submit accepts)",
        )
    pool = set(row["candidate_poi_ids"])
    outside = [p for p in ranked if p not in pool]
    if outside:
        return SystemReply.lost_turn(
            reply.action, "out_of_pool", f"ranked {len(outside)} POI(s) outside the pool: {outside[:3]}"
        )
    if len(set(ranked)) != len(ranked):
        return SystemReply.lost_turn(reply.action, "garbage", "ranked_poi_ids lists a POI more than once")
    return reply


class System:
    """Interface: `respond(rows) -> replies` (one per row, in order) and `describe()`."""

    name: str = ""
    # False for a system that carries state across dialogues: the loop then runs its dialogues one at a time,
    # in corpus order, instead of in lockstep (a registered pipeline says so itself; see PipelineSystem).
    session_isolated: bool = True

    def respond(self, rows: Sequence[dict[str, Any]]) -> list[SystemReply]:
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        return {"system": self.name}

    def close(self) -> None:
        return None
