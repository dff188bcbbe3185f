"""Collab-REC's deterministic, non-LLM moderator (Banerjee et al. §3.3-3.6, Eq. 2-13) in plain Python.

One function per equation; `Moderator` holds one query's state (scores s, collective offer Φ, rejection set
Φ', each agent's last grounded list) and `step` runs one round in the paper's order:

1. Eq. 3: omit votes v_t(c) over Φ_{t-1} from the agents' lists; Φ'_t = Φ'_{t-1} ∪ {c: v_t(c) >= τ}
   (τ = 1 aggressive, 2 majority). An agent without a valid reply abstains (it omits nothing).
2. Eq. 11: h = |{positions j <= k: L_j ∉ C \\ Φ'_t}| / k on the agent's list as it came (first k distinct names).
3. Grounding: V = the list's items in C \\ Φ'_t, in the agent's order ("the moderator grounds, then scores").
4. Eq. 6: r = filter success of V on the agent's role filters; Eq. 7-10: d from V_{t-1}, V_t and Φ_{t-1}.
5. Eq. 4-5: s(c) += (λ_r r + λ_d d - λ_h h) / rank_V(c) for c in V.
6. Eq. 2: Φ_t = the k items of C \\ Φ'_t with the highest min-max normalised score (normalising keeps the
   order); ties in catalogue order. Eq. 12: S(Φ_t) on all query filters.
7. Eq. 13 (`stop_reason`): stop when S = 1, or from round T_min on when the last p rounds improved S by less
   than ε over S_{t-p}. `m_early_round` is the authors' post-hoc selection over a fixed 10 rounds.

Choices where the paper is silent (docs/collab_rec.md): Eq. 9 compares against Φ_{t-1} (Φ_t does not exist
yet when d_t is computed); Eq. 10's denominator, printed with one μ2, takes the mean of Eq. 9's μ2 over the
list's new items (μ1 when it has none; `mu2_is_mu1` gives the authors' code's μ2 = μ1); d = 1 without a
previous list (d_{a,0} = 1) and d = 0 when an agent keeps no valid item; a failed agent gets no r, d, h for the
round.

`CODE_BEHAVIOURS` names the switches that give the authors' code's behaviour where it differs from the paper.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from trace_metrics.lib.collab_rec import filter_success

Rejection = Literal["aggressive", "majority"]
Stopping = Literal["eq13", "m_early", "fixed"]
REJECTION_TAU: dict[str, int] = {"aggressive": 1, "majority": 2}
STOPPING: tuple[str, ...] = ("eq13", "m_early", "fixed")
K_REJECT = 3  # App. D.3: "You CAN replace at most 3 cities" (keep at least 7 of k = 10)

# name -> what the authors' code does instead of the paper (each documented in docs/collab_rec.md)
CODE_BEHAVIOURS: dict[str, str] = {
    "renormalise_scores": "cumulative scores are replaced by their min-max normalisation every round, so "
    "later increments weigh more than the paper's raw sums",
    "h_over_returned": "Eq. 11 divides by the number of items the agent returned, not by k",
    "rejected_reenter": "grounding uses Φ'_{t-1}: a city rejected this round but proposed by another agent is "
    "scored afresh (its old score dropped) and may sit in Φ_t for that round",
    "filters_always_match": "a month filter matches every city and a seasonality filter every catalogue city",
    "success_all_filters": "an agent's success r is computed on all query filters, not on its role's",
    "skip_nonpositive_weight": "an agent whose r + d - h <= 0 adds nothing (the paper allows negative increments)",
    "mu1_is_k": "Eq. 8's μ1 is k instead of the length of the agent's current list",
    "mu2_is_mu1": "Eq. 10's denominator takes μ2 = μ1 (|A| 2μ1, the code's worst case) instead of the μ2 of "
    "Eq. 9 for the new items",
    "sasi_role_filters": "the SASI prompt shows only the query's sustainability filters (the code renders it "
    "with the sustainability agent's filter keys); the paper gives SASI the full query",
}


@dataclass(frozen=True)
class ModeratorConfig:
    """The moderator's parameters; defaults are the paper's (k 10, λ 1, T_min 3, p 2, ε 0.005, T_max 10)."""

    k: int = 10
    rejection: Rejection = "aggressive"
    lambda_r: float = 1.0
    lambda_d: float = 1.0
    lambda_h: float = 1.0
    k_reject: int | None = None  # App. D: at most 3 replacements per round; None: min(3, k - 1)
    t_min: int = 3
    patience: int = 2
    eps: float = 0.005
    t_max: int = 10
    stopping: Stopping = "eq13"
    code_behaviours: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        if self.rejection not in REJECTION_TAU:
            raise ValueError(
                f"unknown rejection policy {self.rejection!r}; expected one of {list(REJECTION_TAU)}"
            )
        if self.stopping not in STOPPING:
            raise ValueError(f"unknown stopping mode {self.stopping!r}; expected one of {STOPPING}")
        object.__setattr__(self, "code_behaviours", frozenset(self.code_behaviours))
        unknown = sorted(self.code_behaviours - set(CODE_BEHAVIOURS))
        if unknown:
            raise ValueError(
                f"unknown code behaviour(s) {unknown}; expected some of {sorted(CODE_BEHAVIOURS)}"
            )
        for name in ("k", "t_min", "patience", "t_max"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.k_reject is None:
            object.__setattr__(self, "k_reject", min(K_REJECT, self.k - 1))
        if (
            isinstance(self.k_reject, bool)
            or not isinstance(self.k_reject, int)
            or not 0 <= self.k_reject <= self.k
        ):
            raise ValueError(f"k_reject must be between 0 and k={self.k}, got {self.k_reject!r}")
        for name in ("lambda_r", "lambda_d", "lambda_h", "eps"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < math.inf:
                raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
        if self.stopping == "eq13" and self.t_min > self.t_max:
            raise ValueError(
                f"t_min ({self.t_min}) must not exceed t_max ({self.t_max}): Eq. 13 could never stop "
                "a negotiation early"
            )

    @property
    def tau(self) -> int:
        return REJECTION_TAU[self.rejection]

    def code(self, behaviour: str) -> bool:
        return behaviour in self.code_behaviours

    def to_dict(self) -> dict[str, Any]:
        return {
            "k": self.k,
            "rejection": self.rejection,
            "tau": self.tau,
            "lambda_r": self.lambda_r,
            "lambda_d": self.lambda_d,
            "lambda_h": self.lambda_h,
            "k_reject": self.k_reject,
            "t_min": self.t_min,
            "patience": self.patience,
            "eps": self.eps,
            "t_max": self.t_max,
            "stopping": self.stopping,
            "code_behaviours": sorted(self.code_behaviours),
            "eq10": "code" if self.code("mu2_is_mu1") else "printed",
        }


# ---------------------------------------------------------------------------------------------------
# The equations
# ---------------------------------------------------------------------------------------------------
def clip_list(items: Sequence[str] | None, k: int) -> tuple[list[str], int, int]:
    """(the first k distinct names, stripped; duplicates dropped; items beyond k dropped)."""
    if items is None:
        return [], 0, 0
    seen: dict[str, None] = {}
    duplicates = 0
    for item in items:
        name = str(item).strip()
        if name in seen:
            duplicates += 1
        else:
            seen[name] = None
    distinct = list(seen)
    return distinct[:k], duplicates, max(0, len(distinct) - k)


def omit_votes(previous_offer: Sequence[str], lists: Mapping[str, Sequence[str] | None]) -> dict[str, int]:
    """v_t(c) = Σ_a 1[c ∉ L_{a,t}] for c ∈ Φ_{t-1}; agents without a list (None) abstain."""
    answered = [set(items) for items in lists.values() if items is not None]
    return {c: sum(1 for items in answered if c not in items) for c in previous_offer}


def update_rejections(rejected: Collection[str], votes: Mapping[str, int], tau: int) -> frozenset[str]:
    """Eq. 3: Φ'_t = Φ'_{t-1} ∪ {c ∈ Φ_{t-1}: v_t(c) >= τ}."""
    return frozenset(rejected) | {c for c, v in votes.items() if v >= tau}


def hallucination_rate(items: Sequence[str], feasible: Callable[[str], bool], denominator: int) -> float:
    """Eq. 11: the share of the list's positions holding an item outside C \\ Φ'_t (denominator k)."""
    if denominator <= 0:
        return 0.0
    return sum(1 for item in items if not feasible(item)) / denominator


def new_item_penalties(
    previous: Sequence[str], current: Sequence[str], previous_offer: Sequence[str], mu1: float
) -> list[float]:
    """Eq. 9's μ2 for each new item x of B (in B's order): min(|rank_Φ(x) - rank_B(x)|, μ1) for x in the
    previous collective offer, μ1 otherwise."""
    rank_phi = {x: i for i, x in enumerate(previous_offer, start=1)}
    old = set(previous)
    return [
        min(abs(rank_phi[x] - j), mu1) if x in rank_phi else mu1
        for j, x in enumerate(current, start=1)
        if x not in old
    ]


def rank_deviation(
    previous: Sequence[str], current: Sequence[str], previous_offer: Sequence[str], mu1: float
) -> float:
    """Eq. 7 with Eq. 9: rank shifts of kept items, μ1 per dropped item, μ2 per new item.

    μ2 = min(|rank_Φ(x) - rank_B(x)|, μ1) for a new item x in the previous collective offer, else μ1.
    """
    rank_a = {x: i for i, x in enumerate(previous, start=1)}
    rank_b = {x: i for i, x in enumerate(current, start=1)}
    kept = sum(abs(rank_a[x] - rank_b[x]) for x in previous if x in rank_b)
    dropped = sum(1 for x in previous if x not in rank_b) * mu1
    return kept + dropped + sum(new_item_penalties(previous, current, previous_offer, mu1))


def reliability(
    previous: Sequence[str] | None,
    current: Sequence[str],
    previous_offer: Sequence[str],
    mu1: float | None = None,
    mu2_is_mu1: bool = False,
) -> float:
    """Eq. 10: d = max(0, 1 - Δ / (|A| (μ1 + μ2))), with μ1 = |B| (Eq. 8) unless given.

    The printed formula has one μ2 where Eq. 9 gives one per new item: μ2 here is their mean (the one new
    item's μ2 when there is one), μ1 when B adds no item. `mu2_is_mu1`: the authors' code, μ2 = μ1
    (denominator |A| 2μ1). 1 without a previous list (t = 1: d_{a,0} = 1); 0 when the current list is empty.
    """
    if not previous:
        return 1.0
    if not current:
        return 0.0
    mu1 = float(len(current) if mu1 is None else mu1)
    penalties = new_item_penalties(previous, current, previous_offer, mu1)
    mu2 = mu1 if mu2_is_mu1 or not penalties else sum(penalties) / len(penalties)
    return max(
        0.0, 1.0 - rank_deviation(previous, current, previous_offer, mu1) / (len(previous) * (mu1 + mu2))
    )


def agent_weight(r: float, d: float, h: float, config: ModeratorConfig) -> float:
    """The bracket of Eq. 4: λ_r r + λ_d d - λ_h h."""
    return config.lambda_r * r + config.lambda_d * d - config.lambda_h * h


def increment(rank: int, weight: float) -> float:
    """Eq. 4: Δs_a(c, t) = weight / rank_{a,t}(c)."""
    if rank < 1:
        raise ValueError(f"ranks start at 1, got {rank}")
    return weight / rank


def update_scores(
    scores: Mapping[str, float], grounded: Mapping[str, Sequence[str]], weights: Mapping[str, float]
) -> dict[str, float]:
    """Eq. 5: s(c, t) = s(c, t-1) + Σ_a 1[c ∈ V_a] Δs_a(c, t)."""
    out = dict(scores)
    for agent, items in grounded.items():
        for rank, item in enumerate(items, start=1):
            out[item] = out.get(item, 0.0) + increment(rank, weights[agent])
    return out


def min_max(scores: Mapping[str, float]) -> dict[str, float]:
    """§3.3.3: (s - min) / (max - min) over the given items; all 0 when they are equal."""
    if not scores:
        return {}
    lo, hi = min(scores.values()), max(scores.values())
    if hi == lo:
        return dict.fromkeys(scores, 0.0)
    return {c: (s - lo) / (hi - lo) for c, s in scores.items()}


def collective_offer(scores: Mapping[str, float], eligible: Sequence[str], k: int) -> list[str]:
    """Eq. 2: the k eligible items with the highest (normalised) score, best first; ties in `eligible` order."""
    normalised = min_max({c: scores.get(c, 0.0) for c in eligible})
    order = sorted(range(len(eligible)), key=lambda i: (-normalised[eligible[i]], i))
    return [eligible[i] for i in order[:k]]


def stop_reason(successes: Sequence[float], t_min: int, patience: int, eps: float) -> str | None:
    """Eq. 13 after round t = len(successes): "ideal" (S_t = 1), "stagnation", or None (continue)."""
    if not successes:
        return None
    t = len(successes)
    if math.isclose(successes[-1], 1.0, abs_tol=1e-12):
        return "ideal"
    if t >= t_min and t > patience:
        base = successes[t - 1 - patience]
        if max(successes[t - 1 - patience :]) - base < eps:
            return "stagnation"
    return None


def m_early_round(successes: Sequence[float]) -> int:
    """The authors' M_early: the earliest round 2.. with the best S if it beats round 1, else round 1."""
    if len(successes) < 2:
        return 1
    later = list(successes[1:])
    best = max(later)
    return later.index(best) + 2 if best > successes[0] else 1


# ---------------------------------------------------------------------------------------------------
# One query's state
# ---------------------------------------------------------------------------------------------------
@dataclass
class AgentRound:
    """What the moderator made of one agent's reply in one round."""

    agent: str
    answered: bool  # False: no schema-valid reply (the agent abstains this round)
    listed: list[str] = field(default_factory=list)  # L_{a,t}: the first k distinct names
    grounded: list[str] = field(default_factory=list)  # V_{a,t}: the listed items in C \ Φ'
    invalid: dict[str, str] = field(default_factory=dict)  # name -> "out_of_catalogue" | "rejected"
    duplicates: int = 0
    overflow: int = 0  # distinct items beyond k, not read
    omitted: list[str] = field(default_factory=list)  # items of Φ_{t-1} left out (omit votes)
    success: float | None = None  # r (Eq. 6)
    reliability: float | None = None  # d (Eq. 10)
    hallucination: float | None = None  # h (Eq. 11)
    weight: float | None = None  # λ_r r + λ_d d - λ_h h

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)  # the fields, in order


@dataclass
class RoundRecord:
    round: int
    agents: dict[str, AgentRound]
    newly_rejected: list[str]
    rejected: list[str]  # Φ'_t, in catalogue order
    offer: list[str]  # Φ_t
    success: float  # S(Φ_t)
    scores: dict[str, float]  # s(c, t) of the eligible items with a non-zero score, catalogue order

    def to_dict(self) -> dict[str, Any]:
        return {
            "round": self.round,
            "offer": self.offer,
            "success": self.success,
            "newly_rejected": self.newly_rejected,
            "rejected": self.rejected,
            "scores": self.scores,
            "agents": [a.to_dict() for a in self.agents.values()],
        }


class Moderator:
    """One query's negotiation state; `step(lists)` runs a round (see the module docstring for the order).

    catalogue: the closed item list C (agents must use these exact strings); filters: the query's filters F
    (name -> value); role_filters: agent -> f_{a_i} (an agent missing here uses F); satisfies(item, name,
    value): whether the knowledge base says `item` meets that filter (M(c)).
    """

    def __init__(
        self,
        catalogue: Sequence[str],
        filters: Mapping[str, Any],
        role_filters: Mapping[str, Mapping[str, Any]],
        satisfies: Callable[[str, str, Any], bool],
        config: ModeratorConfig | None = None,
    ):
        self.catalogue = list(catalogue)
        if len(set(self.catalogue)) != len(self.catalogue):
            raise ValueError("catalogue items must be distinct")
        self._known = frozenset(self.catalogue)
        self.filters = dict(filters)
        self.role_filters = {a: dict(f) for a, f in role_filters.items()}
        self.satisfies = satisfies
        self.config = config or ModeratorConfig()
        self.scores: dict[str, float] = {}
        self.offer: list[str] = []
        self.rejected: frozenset[str] = frozenset()
        self.previous: dict[str, list[str] | None] = {}
        self.rounds: list[RoundRecord] = []

    @property
    def round(self) -> int:
        return len(self.rounds)

    @property
    def successes(self) -> list[float]:
        return [r.success for r in self.rounds]

    def feasible(self, item: str) -> bool:
        return item in self._known and item not in self.rejected

    def additional_candidates(self) -> list[str]:
        """C minus the current offer and the rejection set (App. D "Additional Candidates Available")."""
        offer = set(self.offer)
        return [c for c in self.catalogue if c not in offer and c not in self.rejected]

    def step(self, lists: Mapping[str, Sequence[str] | None]) -> RoundRecord:
        """One round from the agents' lists (None for an agent without a valid reply)."""
        cfg, code = self.config, self.config.code
        clipped = {a: clip_list(items, cfg.k) for a, items in lists.items()}
        listed = {a: (clipped[a][0] if items is not None else None) for a, items in lists.items()}
        previous_offer = list(self.offer)
        votes = omit_votes(previous_offer, listed)
        before = self.rejected
        self.rejected = update_rejections(before, votes, cfg.tau)
        newly = [c for c in previous_offer if c in self.rejected and c not in before]
        grounding_rejected = before if code("rejected_reenter") else self.rejected

        records: dict[str, AgentRound] = {}
        scored: dict[str, list[str]] = {}
        weights: dict[str, float] = {}
        for agent, items in listed.items():
            if items is None:
                records[agent] = AgentRound(agent, answered=False)  # abstains: no votes, no r, d, h
                continue
            h = hallucination_rate(items, self.feasible, len(items) if code("h_over_returned") else cfg.k)
            grounded = [c for c in items if c in self._known and c not in grounding_rejected]
            role = self.filters if code("success_all_filters") else self.role_filters.get(agent, self.filters)
            r = filter_success(grounded, role, self.satisfies)
            d = reliability(
                self.previous.get(agent),
                grounded,
                previous_offer,
                mu1=cfg.k if code("mu1_is_k") else None,
                mu2_is_mu1=code("mu2_is_mu1"),
            )
            w = agent_weight(r, d, h, cfg)
            _, duplicates, overflow = clipped[agent]
            records[agent] = AgentRound(
                agent,
                True,
                list(items),
                grounded,
                {
                    c: ("out_of_catalogue" if c not in self._known else "rejected")
                    for c in items
                    if not self.feasible(c)
                },
                duplicates,
                overflow,
                [c for c in previous_offer if c not in items],
                r,
                d,
                h,
                w,
            )
            if not (code("skip_nonpositive_weight") and w <= 0):
                scored[agent], weights[agent] = grounded, w

        scores = {c: s for c, s in self.scores.items() if c not in self.rejected}
        scores = update_scores(scores, scored, weights)
        reentered = {c for items in scored.values() for c in items if c in self.rejected}
        eligible = [c for c in self.catalogue if c not in self.rejected or c in reentered]
        if code("renormalise_scores"):
            scores = min_max({c: scores.get(c, 0.0) for c in eligible})
        self.scores = {c: scores[c] for c in eligible if scores.get(c, 0.0) != 0.0}
        self.offer = collective_offer(self.scores, eligible, cfg.k)
        success = filter_success(self.offer, self.filters, self.satisfies)
        self.previous = {a: (rec.grounded if rec.answered else None) for a, rec in records.items()}
        record = RoundRecord(
            self.round + 1,
            records,
            newly,
            [c for c in self.catalogue if c in self.rejected],
            list(self.offer),
            success,
            dict(self.scores),
        )
        self.rounds.append(record)
        return record

    def stop_reason(self) -> str | None:
        """Why to stop after the current round ("ideal", "stagnation", "t_max"), or None to continue."""
        cfg = self.config
        if cfg.stopping == "eq13":
            reason = stop_reason(self.successes, cfg.t_min, cfg.patience, cfg.eps)
            if reason:
                return reason
        return "t_max" if self.round >= cfg.t_max else None

    def final_round(self) -> int:
        """The round whose offer is the answer: the last one, or M_early's pick in the m_early mode."""
        if self.config.stopping == "m_early":
            return m_early_round(self.successes)
        return self.round

    def feedback_facts(self, agent: str) -> dict[str, Any]:
        """What the moderator tells `agent` about its last round (rendered into text by the agents' prompt)."""
        last = self.rounds[-1]
        rec = last.agents.get(agent)
        offer_before = self.rounds[-2].offer if len(self.rounds) > 1 else []
        if rec is None or not rec.answered:
            return {"answered": False, "k": self.config.k, "k_reject": self.config.k_reject}
        return {
            "answered": True,
            "k": self.config.k,
            "k_reject": self.config.k_reject,
            "kept": sum(1 for c in rec.listed if c in offer_before),
            "had_offer": bool(offer_before),
            "replaced": len(rec.omitted),
            "in_offer": sum(1 for c in rec.grounded if c in last.offer),
            "out_of_catalogue": [c for c, why in rec.invalid.items() if why == "out_of_catalogue"],
            "rejected": [c for c, why in rec.invalid.items() if why == "rejected"],
            "success": rec.success,
            "listed": len(rec.listed),
        }
