"""Dialogue success and recovery (App. J "Dialogue", App. N).

A dialogue is its turns' actions in order plus, for each recommend/compare turn, whether it recommended a gold
POI of that turn (a *hit*, `conventions.is_hit`: the top-1 of a recommend turn, either of the top two of a
compare turn, which puts both forward). Other turns carry `None`.

- **TSR**: 1 if any recommend/compare turn of the dialogue is a hit, else 0. Dialogues without a
  recommend/compare turn have no value.
- **T2R**: the number of recommend/compare turns up to and including the first hit (1 = the first
  recommendation was right); lower is better. Dialogues without a hit have no T2R: it is the mean over
  successful dialogues, read together with TSR (its n is the number of successful dialogues). The other reading
  (`t2r="turn_index"`, `conventions.T2R_READINGS`): the first hit's position among all the dialogue's turns
  (0-based), the reading the paper's 3.00-5.57 fit (conventions.py says why).
- **Rejection recovery**: for every reject_and_refine turn (an *episode*), whether the first recommend/compare
  turn after it is a hit. Episodes with no later recommend/compare turn have no value (counted apart).
"""

from __future__ import annotations

from collections.abc import Sequence

from trace_dataset.constants import RECOMMENDATION_ACTIONS, REJECTION_ACTION
from trace_metrics.lib._util import mean_or_none
from trace_metrics.lib.conventions import DEFAULT_T2R, T2RReading, check_t2r

RECOVERY_IDS: tuple[str, ...] = ("tsr", "t2r", "rejection_recovery")

Turn = tuple[str, bool | None]  # (action, hit on recommend/compare turns else None)


def _check(turns: Sequence[Turn]) -> None:
    for i, (action, hit) in enumerate(turns):
        if action in RECOMMENDATION_ACTIONS and hit is None:
            raise ValueError(
                f"turn {i} ({action}) has no hit value; recommend/compare turns need True or False"
            )


def task_success(turns: Sequence[Turn]) -> float | None:
    _check(turns)
    hits = [hit for action, hit in turns if action in RECOMMENDATION_ACTIONS]
    if not hits:
        return None
    return 1.0 if any(hits) else 0.0


def turns_to_first_hit(turns: Sequence[Turn], reading: T2RReading = DEFAULT_T2R) -> int | None:
    """T2R of one dialogue (`turns`: every turn, in order): recommend/compare turns up to and including the
    first hit ("count"), or the first hit's 0-based position among all turns ("turn_index"); None without a hit."""
    _check(turns)
    check_t2r(reading)
    count = 0
    for i, (action, hit) in enumerate(turns):
        if action in RECOMMENDATION_ACTIONS:
            count += 1
            if hit:
                return count if reading == "count" else i
    return None


def rejection_episodes(turns: Sequence[Turn]) -> list[tuple[int, bool | None]]:
    """(index of the reject_and_refine turn, hit of the next recommend/compare turn or None) per episode."""
    _check(turns)
    out = []
    for i, (action, _) in enumerate(turns):
        if action != REJECTION_ACTION:
            continue
        nxt = next((hit for a, hit in turns[i + 1 :] if a in RECOMMENDATION_ACTIONS), None)
        out.append((i, nxt))
    return out


def score(
    dialogues: Sequence[Sequence[Turn]], return_per_item: bool = False, t2r_reading: T2RReading = DEFAULT_T2R
) -> dict:
    """TSR and T2R over dialogues, rejection recovery over episodes, each with its `<id>_n`."""
    check_t2r(t2r_reading)
    tsr: list[float | None] = []
    t2r: list[float | None] = []
    episodes: list[bool | None] = []
    for turns in dialogues:
        tsr.append(task_success(turns))
        t = turns_to_first_hit(turns, t2r_reading)
        t2r.append(None if t is None else float(t))
        episodes.extend(hit for _, hit in rejection_episodes(turns))
    recovered = [None if h is None else (1.0 if h else 0.0) for h in episodes]
    out: dict = {
        "tsr": mean_or_none(tsr),
        "t2r": mean_or_none(t2r),
        "rejection_recovery": mean_or_none(recovered),
        "tsr_n": sum(v is not None for v in tsr),
        "t2r_n": sum(v is not None for v in t2r),
        "rejection_recovery_n": sum(v is not None for v in recovered),
        "rejection_episodes_without_followup": sum(v is None for v in recovered),
        "n": len(dialogues),
    }
    if return_per_item:
        out["tsr_per_item"] = tsr
        out["t2r_per_item"] = t2r
        out["rejection_recovery_per_item"] = recovered
    return out
