"""The one scored system turn of each blind dialogue (`trace_dataset.release.blind`).

Under teacher forcing a system turn is predicted with the reference conversation before it as history, so a
blind set that kept every turn would show each turn's reference answer (which names its gold POI) to the
system, in that turn and in the history of every later one. A blind dialogue is therefore scored on one system
turn only, and the inputs end there:

    scored_turn(dialogue, seed) -> the index of the scored turn s: uniform among the dialogue's system turns,
                                   drawn by random.Random(f"{seed}:{dialogue_id}") (a str seed is hashed with
                                   SHA-512, the same in every process; Python's hash() is salted per process)
    truncate(dialogue, s)       -> turns 0..s with the quote spans of their quotes (the gold side: the scored
                                   turn is the last system turn)

The pick is uniform so that the scored turns' action mix is the corpus's in expectation: the expected share of
an action among the scored turns is the mean, over dialogues, of its share of the dialogue's system turns
(`expected_scored_shares`, computed on the public test split beside the blind set's `scored_action_shares`).
Another rule (the last recommend turn, say) would score a mix no public-split row is measured on.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from trace_dataset.constants import SYSTEM_ACTIONS
from trace_dataset.io import TraceDataError
from trace_dataset.quotes import extract_quotes

# period.json (both sides) and what it says of the scored turns: only the last system turn of each dialogue
SCORED_TURNS_FIELD = "scored_turns"
LAST_SYSTEM_TURN = "last_system_turn"
# the scored turn's reference content, emptied in the inputs beside its gold (turn_id, role, action stay)
SCORED_TURN_CONTENT: tuple[str, ...] = ("text", "referenced_poi_ids", "referenced_review_ids", "citations")


def scored_turn(dialogue: dict[str, Any], seed: int) -> int:
    """The index (in `turns`) of the system turn the blind dialogue scores (module docstring)."""
    system = [i for i, t in enumerate(dialogue["turns"]) if t["role"] == "system"]
    if not system:
        raise TraceDataError(f"dialogue {dialogue['dialogue_id']!r} has no system turn to score")
    return random.Random(f"{seed}:{dialogue['dialogue_id']}").choice(system)


def quotes_in(turns: Iterable[dict[str, Any]]) -> int:
    """How many quotes the turns' texts hold (quote_spans lists them in order of appearance)."""
    return sum(len(extract_quotes(t["text"])) for t in turns)


def truncate(dialogue: dict[str, Any], s: int) -> dict[str, Any]:
    """The dialogue's turns 0..s and the quote spans of their quotes (a prefix; key order kept)."""
    turns = dialogue["turns"][: s + 1]
    return {**dialogue, "turns": turns, "quote_spans": dialogue["quote_spans"][: quotes_in(turns)]}


def blank_scored_turn(turn: dict[str, Any]) -> dict[str, Any]:
    """The scored turn as the inputs show it: its reference content emptied (key order kept)."""
    return {k: (("" if k == "text" else []) if k in SCORED_TURN_CONTENT else v) for k, v in turn.items()}


def scored_action_shares(actions: Sequence[str]) -> dict[str, float]:
    """Each system action's share of the scored turns (one per dialogue)."""
    counts = Counter(actions)
    n = len(actions)
    return {a: round(counts[a] / n, 4) if n else 0.0 for a in SYSTEM_ACTIONS}


def expected_scored_shares(dialogues: Iterable[dict[str, Any]]) -> dict[str, float]:
    """Each system action's expected share of the scored turns, were one system turn per dialogue drawn
    uniformly: the mean over dialogues of its share of the dialogue's system turns."""
    totals = dict.fromkeys(SYSTEM_ACTIONS, 0.0)
    n = 0
    for d in dialogues:
        system = [t["action"] for t in d["turns"] if t["role"] == "system"]
        if not system:
            continue
        n += 1
        for action, count in Counter(system).items():
            totals[action] = totals.get(action, 0.0) + count / len(system)
    return {a: round(totals[a] / n, 4) if n else 0.0 for a in SYSTEM_ACTIONS}
