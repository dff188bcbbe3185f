"""The package's one reading of things the paper leaves open, shared by the metrics and the baselines.

The budget word and compare turns used to be read two ways inside the package (the metrics one way, the
baselines' dialogue state the other); they are defined here once and `trace_metrics.lib.practical`,
`recovery`, `selection` and `baselines.toolkit.state` all call these functions. The grounding turns (below) are a
switch of the suite and the CLIs. docs/leaderboard.md ("Conventions") gives the reasons.

**The budget word.** A user states a budget with a word of `constants.PRICE_KEYWORDS` (the paper's
budget/cheap/affordable -> $$, moderate -> $$$, luxury/upscale -> $$$$, plus "mid-range" -> $$$, which the
paper does not list but the generator uses beside "moderate"). A word counts when it stands whole
(case-insensitive, regex word boundaries: "budget-friendly" states "budget", "budgetary" states nothing).
When the user says several, the **latest** one sets the ceiling: users refine their constraints as the
dialogue goes (that is what reject_and_refine turns are), a later budget replaces an earlier one the way a
dialogue-state tracker updates its slot, and the strictest-word reading would fault a system for following a
user who relaxed the budget. (The built-in corpus never states two different ceilings in one dialogue, so
its numbers are the same under either reading.)

**Compare turns.** A compare turn puts two POIs in front of the user, its top two, side by side. Both count
as what the turn recommends: for practical value (the POIs a dialogue recommends, plus those whose reviews a
recommend or compare response cites, such as the Itinerary baseline's tour stops, which the paper's Table 9
credits) and for a *hit* (TSR, T2R, rejection recovery: a compare turn hits when a gold POI is among its top
two; a recommend turn when its top-1 is gold; the ranking metrics Recall@k/MRR keep their own k). Reasons:
the paper reports spatial coherence for Popularity (Table 9: 0.174), a system with no adaptation whose top-1
never changes within a dialogue, so its dialogues have POI pairs only if both compared POIs count; and a
comparison that shows the user the gold POI has recommended it, whichever of the two it favours.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Literal

from trace_dataset.constants import PRICE_KEYWORDS, RECOMMENDATION_ACTIONS

GroundingTurns = Literal["recommendation", "system"]
# Which turns the grounding metrics average over. App. J averages PC "over the dialogue's recommend/compare
# turns" (the paper's corpus has 32,475 of them, App. S), while Table 20 reports grounding with n = 52,274
# *system turns* per baseline. Default: recommend/compare turns; "system" is the other reading
# (`--grounding-turns system`); docs/leaderboard.md explains.
GROUNDING_TURNS: tuple[str, ...] = ("recommendation", "system")
DEFAULT_GROUNDING_TURNS: GroundingTurns = "recommendation"


def check_grounding_turns(value: str) -> None:
    if value not in GROUNDING_TURNS:
        raise ValueError(f"unknown grounding_turns {value!r}; expected one of {GROUNDING_TURNS}")


BUDGET_RULE = "latest"  # which of several budget words sets the ceiling (see the module docstring)
COMPARE_TOP_K = 2  # POIs a compare turn recommends: its top two

_PRICE_RE = re.compile(
    r"\b(" + "|".join(re.escape(k) for k in sorted(PRICE_KEYWORDS, key=len, reverse=True)) + r")\b",
    re.IGNORECASE,
)


def budget_words(texts: Iterable[str]) -> list[str]:
    """The budget words of `texts` (the user's turns, in order), lower-cased, in order of mention."""
    return [m.group(1).lower() for text in texts for m in _PRICE_RE.finditer(text)]


def price_ceiling(texts: Iterable[str]) -> int | None:
    """The price ceiling (1-4 dollar signs) the user's latest budget word sets; None if no budget is stated."""
    words = budget_words(texts)
    return PRICE_KEYWORDS[words[-1]] if words else None


def _top_k(action: str) -> int:
    return COMPARE_TOP_K if action == "compare" else 1


def is_hit(action: str, ranked: Sequence[str], gold: Iterable[str]) -> bool:
    """A recommend/compare turn hits when a POI it recommends (top-1; top two of a compare) is gold."""
    if action not in RECOMMENDATION_ACTIONS:
        raise ValueError(f"only recommend/compare turns hit or miss; got {action!r}")
    gold = set(gold)
    return any(p in gold for p in ranked[: _top_k(action)])


def recommended_by_turn(action: str, ranked: Sequence[str], cited_pois: Sequence[str] = ()) -> list[str]:
    """The POIs one system turn recommends: the top-1 of a recommend turn or the top two of a compare turn,
    then the POIs whose reviews its response cites (in label order). Other actions recommend nothing."""
    if action not in RECOMMENDATION_ACTIONS:
        return []
    return [*ranked[: _top_k(action)], *cited_pois]
