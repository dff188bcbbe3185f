"""SnipRec's item score (§3.3): reciprocal-rank fusion of signed query-snippet groups, accumulated over turns.

    SCORE_t(i) = SCORE_{t-1}(i) + sum over groups g of turn t of  sgn(q_g) / (kappa + rank_g(i))

A group is the ranked list of units one query snippet retrieved (after the NLI filter when it is on). An item's
rank in a group is the position (1-based, counting every unit of every item) of its best unit there: "if
multiple snippets for item i are included in the same ranking, we only consider the one with the highest
rank". sgn is +1 for a preference, -1 for a dislike. Items with no unit in any group keep their score (0 from
the start); ranking ties go by business_id (`baselines.base.rank_by_score`), where the paper's evaluation
assigns a random rank within a tie.

Parameters the paper does not give (our choices, exposed): kappa = 60 (Cormack et al.'s RRF constant, also
Trace's Hybrid-RRF), and k, the units retrieved per query snippet, scaled to the searched catalogue:
k = max(k_min, round(500 x n_items / 3007)) with k_min = 10. The paper's k = 500 was tuned for 3,007 items;
the same ratio gives k = 1 for Trace's 8-POI closed pool, so the floor keeps about one review's worth of
units per query snippet (an item here has ~14 reviews). A fixed `k` overrides the rule.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

PAPER_K = 500
PAPER_ITEMS = 3007
DEFAULT_KAPPA = 60.0
DEFAULT_K_MIN = 10


class RankedUnit(Protocol):
    @property
    def poi_id(self) -> str: ...  # read-only, so frozen records (index.Hit) match


def k_for(n_items: int, k: int | None = None, k_min: int = DEFAULT_K_MIN) -> int:
    """Units retrieved per query snippet for a catalogue of `n_items` (rule in the module docstring)."""
    if k is not None:
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        return int(k)
    if k_min < 1:
        raise ValueError(f"k_min must be >= 1, got {k_min}")
    return max(int(k_min), round(PAPER_K * n_items / PAPER_ITEMS))


def group_weights(hits: Sequence[RankedUnit], sign: int, kappa: float) -> dict[str, tuple[float, int]]:
    """poi id -> (sign / (kappa + rank), rank) of the item's best (first) unit in one ranked group."""
    if sign not in (1, -1):
        raise ValueError(f"sign must be +1 or -1, got {sign!r}")
    out: dict[str, tuple[float, int]] = {}
    for rank, hit in enumerate(hits, start=1):
        if hit.poi_id not in out:
            out[hit.poi_id] = (sign / (kappa + rank), rank)
    return out


def turn_scores(groups: Iterable[tuple[int, Sequence[RankedUnit]]], kappa: float) -> dict[str, float]:
    """One turn's increment: the sum over its (sign, ranked hits) groups of each item's group weight."""
    out: dict[str, float] = {}
    for sign, hits in groups:
        for pid, (weight, _) in group_weights(hits, sign, kappa).items():
            out[pid] = out.get(pid, 0.0) + weight
    return out


def accumulate(
    turns: Iterable[Iterable[tuple[int, Sequence[RankedUnit]]]], kappa: float = DEFAULT_KAPPA
) -> list[dict[str, float]]:
    """SCORE_1, ..., SCORE_T: the cumulative item scores after each turn (items never retrieved are absent)."""
    if kappa < 0:
        raise ValueError(f"kappa must be >= 0, got {kappa}")
    total: dict[str, float] = {}
    out = []
    for groups in turns:
        for pid, inc in turn_scores(groups, kappa).items():
            total[pid] = total.get(pid, 0.0) + inc
        out.append(dict(total))
    return out


def final_scores(
    turns: Iterable[Iterable[tuple[int, Sequence[RankedUnit]]]],
    candidates: Sequence[str],
    kappa: float = DEFAULT_KAPPA,
) -> dict[str, float]:
    """SCORE_T of every candidate (0.0 for those never retrieved)."""
    history = accumulate(turns, kappa)
    last: Mapping[str, float] = history[-1] if history else {}
    return {pid: last.get(pid, 0.0) for pid in candidates}
