"""The items and per-item functions of the declarations outside the Trace suite (`specs.benchmarks`, and the
human evaluation's in `specs.trace`): what `lib.scoring.score` runs for SnipRec's ranked turns, the live
dialogues, Collab-REC, CoRE and the annotations. The Trace suite's are in `lib.items`.

Each function takes one item, then its fixed arguments, and returns a float, or None where the metric is
undefined on that item (left out of the mean and of n):

- a SnipRec ranked turn: the target's position among every candidate (an int; None without a target among
  the candidates, `lib.interactive.target_position`);
- a live dialogue: its record (`turns` with `role` and `action`: the traveller's acceptance ends it well);
- Collab-REC: a query's final list with each item's filter fraction (`QueryOffer`), a catalogue item with the
  times the lists recommend it (`Exposure`), an agent's values in one round (`AgentRound`);
- CoRE: a conversation's record (`core.scoring.score_logs`);
- the human evaluation: an annotated response's scores (`lib.human.item_scores`), a quote's majority label.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple


# ---------------------------------------------------------------------------------------------------
# SnipRec: the target's position among every candidate (SnipRec §5.1, `lib.interactive`)
# ---------------------------------------------------------------------------------------------------
def position_hit(position: int | None, k: int) -> float | None:
    return None if position is None else float(position <= k)


def position_reciprocal_rank(position: int | None) -> float | None:
    return None if position is None else 1.0 / position


def position_value(position: int | None) -> float | None:
    return None if position is None else float(position)


# ---------------------------------------------------------------------------------------------------
# Live dialogues (the `trace` protocol of `trace-bench interact`)
# ---------------------------------------------------------------------------------------------------
def _acceptance(record: Mapping[str, Any]) -> int | None:
    """The index of the traveller's first acceptance among the dialogue's turns; None without one."""
    return next(
        (i for i, t in enumerate(record["turns"]) if t["role"] == "user" and t["action"] == "accept"), None
    )


def accepted(record: Mapping[str, Any]) -> float:
    """1 if the simulated traveller accepted a recommendation."""
    return 0.0 if _acceptance(record) is None else 1.0


def turns_to_acceptance(record: Mapping[str, Any]) -> float | None:
    """System turns before the traveller's acceptance; None when it never came."""
    at = _acceptance(record)
    return None if at is None else float(sum(t["role"] == "system" for t in record["turns"][:at]))


def system_turns(record: Mapping[str, Any]) -> float:
    return float(sum(t["role"] == "system" for t in record["turns"]))


# ---------------------------------------------------------------------------------------------------
# Collab-REC (Banerjee et al., Eq. 10-12, Table 3; `lib.collab_rec`)
# ---------------------------------------------------------------------------------------------------
class QueryOffer(NamedTuple):
    """A query's final list and, aligned with it, each item's share of the query's filters it satisfies."""

    items: Sequence[str]
    fractions: Sequence[float]


class Exposure(NamedTuple):
    """A catalogue item and how many lists recommend it (0 for one never recommended)."""

    item: str
    times: int


class AgentRound(NamedTuple):
    """An agent's reliability d (None where it is not a measurement: round 1, where d = 1 by definition) and
    hallucination rate h in one round."""

    reliability: float | None
    hallucination: float | None


def offer_success(query: QueryOffer) -> float:
    """Eq. 12 on one query: the mean filter fraction of its list (0 for an empty list)."""
    fractions = query.fractions
    return sum(fractions) / len(fractions) if fractions else 0.0


def mean_in_order(values: Iterable[float | None]) -> float | None:
    """The mean of the defined values as a left-to-right float sum over their count (moderator success has
    always been averaged so; `mean_or_none`'s correctly rounded sum could move its last digit)."""
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def exposure(item: Exposure) -> float:
    return float(item.times)


def agent_reliability(item: AgentRound) -> float | None:
    return item.reliability


def agent_hallucination(item: AgentRound) -> float | None:
    return item.hallucination


# ---------------------------------------------------------------------------------------------------
# CoRE (`core.scoring`) and the human evaluation (App. K, `lib.human`)
# ---------------------------------------------------------------------------------------------------
def core_factor_mean(record: Mapping[str, Any]) -> float | None:
    """The mean of the conversation's rated factors (0-4); None when none was rated."""
    return record["factor_mean"]


def core_debate_score(record: Mapping[str, Any]) -> float | None:
    """The debate's final score (0-100); None when the debate failed."""
    return record["overall"]


def quote_supported(majority_label: str) -> float:
    """1 if the quote's majority label is Supported."""
    return 1.0 if majority_label == "Supported" else 0.0


def annotator_mean(item: Mapping[str, Any], scale: str) -> float | None:
    """The response's mean rating on a Likert scale over its annotators (None: nobody rated it)."""
    return item[f"human_{scale}"]
