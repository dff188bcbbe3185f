"""Stage 5: difficulty tiers (Easy / Medium / Hard / Expert, paper Table 3: 24.8 / 34.8 / 30.6 / 9.8 %).

The tier is a generation-time target (quota-allocated, so the shares hold exactly at any corpus size up
to rounding) and the planner shapes each dialogue for it; stage 5 then re-derives the label from what the
dialogue actually contains and the validator rejects a mismatch. The rule:

- Expert: the user revises an earlier constraint to a conflicting one (rejections 2-3);
- Hard: no revision, two rejections and at least five stated constraints;
- Medium: no revision and four or more stated constraints (one or two rejections), not Hard;
- Easy: no revision, one rejection, three stated constraints.
"""

from __future__ import annotations

import random

from trace_dataset.constants import REJECTIONS_PER_TIER, TIER_SHARES, TIERS


def tier_quota(n: int) -> dict[str, int]:
    """Largest-remainder allocation of n dialogues to tiers (2,480 / 3,480 / 3,060 / 980 for 10,000)."""
    raw = {t: n * TIER_SHARES[t] for t in TIERS}
    counts = {t: int(raw[t]) for t in TIERS}
    left = n - sum(counts.values())
    for t in sorted(TIERS, key=lambda t: (-(raw[t] - counts[t]), TIERS.index(t)))[:left]:
        counts[t] += 1
    return counts


def tier_sequence(n: int, seed: int) -> list[str]:
    """The target tier of each dialogue index: the quota, shuffled with the corpus seed."""
    seq = [t for t, k in tier_quota(n).items() for _ in range(k)]
    random.Random(f"{seed}:tiers").shuffle(seq)
    return seq


def target_constraints(tier: str, rng: random.Random) -> int:
    """How many distinct constraints a dialogue of this tier states in total."""
    if tier == "Easy":
        return 3
    if tier == "Medium":
        return 4
    if tier == "Hard":
        return rng.choice((5, 5, 6))
    if tier == "Expert":  # the revision makes it Expert; the count only shapes the dialogue
        return rng.choice((4, 5, 5, 6))
    raise ValueError(f"unknown tier {tier!r}; expected one of {TIERS}")


def annotate(rejections: int, constraints: int, conflict: bool) -> str:
    """The tier a dialogue's content implies (the rule in the module docstring)."""
    if conflict:
        return "Expert"
    if rejections >= 2 and constraints >= 5:
        return "Hard"
    if constraints >= 4:
        return "Medium"
    return "Easy"


def rejections_ok(tier: str, rejections: int) -> bool:
    lo, hi = REJECTIONS_PER_TIER[tier]
    return lo <= rejections <= hi
