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
**Switch** (`compare_hit`, `--compare-hit`): "top2" (default, the above) or "top1" (a compare turn hits only
with its top-1, as a recommend turn; App. J's "recommends a gold POI" read strictly). It changes TSR, T2R and
rejection recovery only; practical value keeps both compared POIs.

**T2R** (`t2r`, `--t2r`). App. J: "counts system turns with recommend or compare actions until the first
gold-POI hit", averaged over the dialogues that have a hit ("count", default: App. J as written). That count
is at most the recommend/compare turns of a dialogue (3.3 on average in the paper's corpus, App. S), so its mean
cannot reach the 3.00-5.57 of Table 5. "turn_index" is the reading those numbers fit: the position of the
first hit among all of the dialogue's turns (its 0-based turn_id), also over the dialogues with a hit. Its
floor is the earliest turn a recommendation can take in a dialogue that opens greet_and_seek, ask_preference,
answer: 3, Table 5's LLM Zero-Shot (3.00 with TSR 1.000); on the built-in corpus it gives 5.08-5.63 for the
non-LLM baselines (Popularity 5.57) where "count" gives 2.04-2.32. docs/metrics.md has the table.

**Scored turns** (`scored_turns`, `--scored-turns`). "all": every system turn is scored (the public splits).
"last": only the last system turn of each dialogue, the one turn a blind test set scores
(`trace_dataset.release.blind`: its inputs end at that turn, so no reference content of it is visible).
Predictions are still validated against every system turn; the per-turn metrics average over the scored
turns; the dialogue-level metrics (TSR, T2R, practical value) have no value, since one scored turn per dialogue
is no dialogue's success nor its itinerary; a rejection episode counts when the scored turn is its follow-up
(the first recommend/compare turn after the reject_and_refine turn). "auto" (default): "last" on a data
directory whose period.json says one scored turn per dialogue (a blind set's gold), else "all"; an explicit
"all" on such a directory is refused (the reference answers of its earlier system turns are in the inputs).
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

CompareHit = Literal["top2", "top1"]
# When a compare turn is a hit (TSR, T2R, rejection recovery): a gold POI among its top two (default) or top-1.
COMPARE_HITS: tuple[str, ...] = ("top2", "top1")
DEFAULT_COMPARE_HIT: CompareHit = "top2"
T2RReading = Literal["count", "turn_index"]
# T2R: recommend/compare turns up to the first hit (default, App. J as written) or the first hit's turn index.
T2R_READINGS: tuple[str, ...] = ("count", "turn_index")
DEFAULT_T2R: T2RReading = "count"


ScoredTurns = Literal["auto", "all", "last"]
# Which system turns the suite scores: every one, only each dialogue's last (a blind set), or as the data
# directory's period.json says ("auto", default; the module docstring says why).
SCORED_TURNS: tuple[str, ...] = ("auto", "all", "last")
DEFAULT_SCORED_TURNS: ScoredTurns = "auto"
WITHOUT_VALUE_ONE_TURN = (
    "one scored turn per dialogue (scored_turns=last): a dialogue-level metric needs every system turn of the "
    "dialogue scored"
)


def resolve_scored_turns(one_per_dialogue: bool, scored_turns: ScoredTurns = DEFAULT_SCORED_TURNS) -> str:
    """ "all" or "last": `scored_turns` on data whose dialogues score one turn each (`one_per_dialogue`, a
    blind set's gold) or not; ValueError for "all" on such data."""
    if scored_turns not in SCORED_TURNS:
        raise ValueError(f"unknown scored_turns {scored_turns!r}; expected one of {SCORED_TURNS}")
    if one_per_dialogue and scored_turns == "all":
        raise ValueError(
            "scored_turns='all' on a blind set's gold: its period.json says one scored turn per dialogue (the "
            "last system turn: the reference answers of the earlier ones are in the inputs); use 'auto' or 'last'"
        )
    if scored_turns == "auto":
        return "last" if one_per_dialogue else "all"
    return scored_turns


def check_compare_hit(value: str) -> None:
    if value not in COMPARE_HITS:
        raise ValueError(f"unknown compare_hit {value!r}; expected one of {COMPARE_HITS}")


def check_t2r(value: str) -> None:
    if value not in T2R_READINGS:
        raise ValueError(f"unknown t2r reading {value!r}; expected one of {T2R_READINGS}")


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


def is_hit(
    action: str, ranked: Sequence[str], gold: Iterable[str], compare_hit: CompareHit = DEFAULT_COMPARE_HIT
) -> bool:
    """A recommend/compare turn hits when a POI it recommends (top-1; top two of a compare, or only its top-1
    with compare_hit="top1") is gold."""
    if action not in RECOMMENDATION_ACTIONS:
        raise ValueError(f"only recommend/compare turns hit or miss; got {action!r}")
    check_compare_hit(compare_hit)
    gold = set(gold)
    k = 1 if compare_hit == "top1" else _top_k(action)
    return any(p in gold for p in ranked[:k])


def recommended_by_turn(action: str, ranked: Sequence[str], cited_pois: Sequence[str] = ()) -> list[str]:
    """The POIs one system turn recommends: the top-1 of a recommend turn or the top two of a compare turn,
    then the POIs whose reviews its response cites (in label order). Other actions recommend nothing."""
    if action not in RECOMMENDATION_ACTIONS:
        return []
    return [*ranked[: _top_k(action)], *cited_pois]
