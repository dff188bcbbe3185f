"""Stages 1-2: from an assignment (cell, tier, archetype) to a full dialogue plan.

The planner lays out the turn skeleton for the tier (rejections, asks, comparisons), draws the user's
constraints from the persona's wants, picks for every recommendation turn a gold POI that satisfies every
constraint stated so far, makes each reject_and_refine add a constraint the rejected POI violates (Expert:
one that revises an earlier constraint), then selects the 8 candidates (the POIs the plan names plus
distractors by stratified rating/category sampling, most of them meeting only part of the constraints),
computes each turn's acceptable alternatives from the candidates, and draws the 16 / 32 pools and the open
set. Everything is set arithmetic on the cell's constraint bitsets.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from trace_dataset.constants import CANDIDATES_PER_DIALOGUE, POOL_SIZES, REJECTIONS_PER_TIER
from trace_dataset.generate.difficulty import target_constraints
from trace_dataset.generate.index import CellIndex
from trace_dataset.generate.personas import personas
from trace_dataset.generate.plan import DialoguePlan, PlanError, PlannedTurn
from trace_dataset.generate.preferences.constraints import (
    REVISABLE_KINDS,
    TYPE_VALUES,
    Constraint,
    violation_is_explicit,
)
from trace_dataset.generate.scenario import Assignment, persona_text, pick_modifier

# dialogue length in (user, system) pairs, per (tier, rejections): turns = 2 * pairs
PAIR_WEIGHTS: dict[tuple[str, int], dict[int, float]] = {
    ("Easy", 1): {4: 0.50, 5: 0.35, 6: 0.15},
    ("Medium", 1): {4: 0.25, 5: 0.40, 6: 0.35},
    ("Medium", 2): {5: 0.50, 6: 0.50},
    ("Hard", 2): {5: 0.45, 6: 0.55},
    ("Expert", 2): {5: 0.40, 6: 0.60},
    ("Expert", 3): {6: 1.0},
}
COMPARE_AFTER_REJECTION = 0.35  # share of post-rejection recommendation turns that are comparisons
PARTNER_FULL_SHARE = 0.1  # share of comparisons whose partner also meets every constraint
FULL_DISTRACTOR_SHARE = 0.05  # share of distractors drawn among POIs that satisfy some turn's constraints
# a persona without a price want still states a budget this often (restaurants and hotels carry price
# levels, paper Table 3), so that about 60% of dialogues name a budget word as in the paper (§3)
EXTRA_PRICE_WANT: dict[str, float] = {"restaurant": 0.75, "hotel": 0.75, "attraction": 0.35}
# pairs of constraint keys a sensible user does not state together (unless revising)
INCOMPATIBLE: frozenset[frozenset[str]] = frozenset(
    frozenset(p)
    for p in (
        ("amenity:good_for_kids", "ambience:romantic"),
        ("amenity:good_for_kids", "meal:latenight"),
        ("amenity:good_for_kids", "ambience:intimate"),
        ("noise:quiet", "amenity:happy_hour"),
        ("noise:quiet", "aspect:live_music"),
        ("ambience:classy", "ambience:casual"),
        ("noise:lively", "ambience:intimate"),
        ("noise:lively", "ambience:romantic"),
    )
)


_INCOMPATIBLE_WITH: dict[str, frozenset[str]] = {}
for _pair in INCOMPATIBLE:
    for _k in _pair:
        _INCOMPATIBLE_WITH[_k] = _INCOMPATIBLE_WITH.get(_k, frozenset()) | (_pair - {_k})


@dataclass
class Skeleton:
    pairs: int
    asks: int
    greet_new: int
    outcomes: list[str]  # per recommendation slot: "reject" | "extra" | "accept" (last)
    extra_new: list[bool]  # per slot: does the following extra user turn add a constraint
    actions: list[str]  # per slot: "recommend" | "compare"
    revision_slot: int | None  # the slot whose rejection revises an earlier constraint (Expert)


def _weighted_order(weights: dict[int, float], rng: random.Random) -> list[int]:
    keys = list(weights)
    return sorted(keys, key=lambda k: rng.random() ** (1.0 / weights[k]), reverse=True)


def make_skeleton(tier: str, rejections: int, constraints: int, rng: random.Random) -> Skeleton:
    for pairs in _weighted_order(PAIR_WEIGHTS[(tier, rejections)], rng):
        for asks in (1, 2):
            slots = pairs - 1 - asks
            if slots < rejections + 1:
                continue
            extras = slots - 1 - rejections
            need = constraints - rejections
            if not 1 + asks <= need <= 2 + asks + extras:
                continue
            rem = need - 1 - asks
            greet2 = 1 if rem > extras or (rem > 0 and rng.random() < 0.6) else 0
            extra_added = rem - greet2
            positions = list(range(slots - 1))
            reject_at = set(rng.sample(positions, rejections))
            outcomes = ["reject" if i in reject_at else "extra" for i in positions] + ["accept"]
            extra_slots = [i for i in positions if i not in reject_at]
            adds = set(rng.sample(extra_slots, extra_added))
            extra_new = [i in adds for i in range(slots)]
            actions = []
            for i in range(slots):
                if i == 0:
                    actions.append("recommend")
                elif outcomes[i - 1] == "extra":
                    actions.append("compare")
                else:
                    actions.append("compare" if rng.random() < COMPARE_AFTER_REJECTION else "recommend")
            if "compare" not in actions:
                actions[-1] = "compare"
            revision = None
            if tier == "Expert":
                revision = rng.choice(sorted(reject_at))
            return Skeleton(pairs, asks, 1 + greet2, outcomes, extra_new, actions, revision)
    raise PlanError("no_skeleton", f"tier {tier} with {rejections} rejections and {constraints} constraints")


class Planner:
    """Builds one DialoguePlan for one assignment in one cell, drawing every choice from `rng`."""

    def __init__(self, cell: CellIndex, assignment: Assignment, rng: random.Random, attempt: int = 0):
        self.cell = cell
        # later attempts loosen the persona's priority order, so a cell where the favourite wants cannot
        # carry the tier's rejections still gets a dialogue
        self.jitter = 2.5 * (1 + attempt / 4)
        self.a = assignment
        self.rng = rng
        self.quotable = cell.quotable_mask
        self.arche = personas().archetypes[assignment.persona_type]

    # -- constraint helpers --------------------------------------------------------------------
    def _left(self, active: list[Constraint], rejected: int) -> int:
        return self.cell.mask(active) & self.quotable & ~rejected

    def _compatible(self, c: Constraint, active: list[Constraint]) -> bool:
        if any(x.slot == c.slot for x in active):
            return False
        bad = _INCOMPATIBLE_WITH.get(c.key)
        return not bad or all(x.key not in bad for x in active)

    def _wants(self, first: str | None) -> list[Constraint]:
        """The persona's wants (jittered priority), then the rest of the cell's universe as fallback."""
        uni = self.cell.universe
        rng = self.rng
        order = sorted(range(len(self.arche.wants)), key=lambda i: i + rng.uniform(0, self.jitter))
        keys = [self.arche.wants[i] for i in order]
        if not any(k.startswith("price:") for k in keys) and rng.random() < EXTRA_PRICE_WANT[self.a.poi_type]:
            keys.insert(rng.randint(0, 2), "price:" + rng.choice(TYPE_VALUES[self.a.poi_type]["price"]))
        keys = ([first] if first else []) + keys
        out: list[Constraint] = []
        seen: set[str] = set()
        for key in keys:
            if key in ("location", "category"):
                group = [c for c in self.cell.sorted_universe() if c.kind == key]
                rng.shuffle(group)
                picked = group[:6]
            else:
                picked = [uni[key]] if key in uni else []
            for c in picked:
                if c.key not in seen:
                    seen.add(c.key)
                    out.append(c)
        self.n_persona = len(out)
        rest = [c for c in self.cell.sorted_universe() if c.key not in seen]
        rng.shuffle(rest)
        return out + rest

    def _pick(
        self,
        wants,
        active,
        rejected,
        min_left,
        exclude: int | None = None,
        include: int | None = None,
        kinds: tuple[str, ...] | None = None,
        prefer_explicit: bool = False,
    ) -> Constraint | None:
        base = self._left(active, rejected)
        slots = {x.slot for x in active}
        keys = {x.key for x in active}
        sat = self.cell.sat
        best: list[tuple[int, int, Constraint]] = []
        for rank, c in enumerate(wants):
            if kinds is not None and c.kind not in kinds:
                continue
            if c.slot in slots:
                continue
            bad = _INCOMPATIBLE_WITH.get(c.key)
            if bad and bad & keys:
                continue
            bits = sat[c.key]
            if exclude is not None and bits >> exclude & 1:
                continue
            if include is not None and not bits >> include & 1:
                continue
            if (base & bits).bit_count() < min_left:
                continue
            explicit = 0
            if prefer_explicit and exclude is not None:
                explicit = 0 if violation_is_explicit(self.cell.profiles[exclude].poi, c) else 1
            best.append((explicit if rank < self.n_persona else 2, rank, c))
            if not prefer_explicit or (explicit == 0 and rank < self.n_persona):
                break
        return min(best)[2] if best else None

    def _relaxed(self, thresholds: tuple[int, ...], active, rejected, **kw) -> Constraint | None:
        """The first constraint leaving at least thresholds[0] recommendable POIs, else thresholds[1] ...:
        roomier choices first, so that small cells still fit the later rejections."""
        for t in thresholds:
            c = self._pick(self.wants, active, rejected, t, **kw)
            if c is not None:
                return c
        return None

    def _revision(self, active, rejected, gold: int, min_left: int) -> tuple[Constraint, Constraint] | None:
        olds = [c for c in active if c.kind in REVISABLE_KINDS]
        self.rng.shuffle(olds)
        for old in olds:
            rest = [c for c in active if c != old]
            options = [c for c in self.cell.universe.values() if c.kind == old.kind and c.value != old.value]
            self.rng.shuffle(options)
            for new in options:
                if not self._compatible(new, rest) or self.cell.sat_of(new) >> gold & 1:
                    continue
                if self._left(rest + [new], rejected).bit_count() >= min_left:
                    return old, new
        return None

    def _feasible(
        self, i: int, outcome: str, extra_new: bool, active, rejected: int, remaining: int, revision: bool
    ) -> bool:
        """Can POI i be this slot's gold and still carry what follows it (a rejection, a refinement)?"""
        if outcome == "reject":
            return self._rejectable(i, active, rejected, remaining - 1, revision)
        if outcome == "extra" and extra_new:
            return self._pick(self.wants, active, rejected, 1 + remaining, include=i) is not None
        return True

    def _rejectable(self, gold: int, active, rejected, remaining_after: int, revision: bool) -> bool:
        rej = rejected | 1 << gold
        if revision:
            return self._revision(active, rej, gold, 1 + remaining_after) is not None
        return self._pick(self.wants, active, rej, 1 + remaining_after, exclude=gold) is not None

    # -- the plan ------------------------------------------------------------------------------
    def plan(self) -> DialoguePlan:
        a, cell, rng = self.a, self.cell, self.rng
        rejections = rng.randint(*REJECTIONS_PER_TIER[a.tier])
        # at least the opening constraint and the asked one come on top of one per rejection
        sk = make_skeleton(a.tier, rejections, max(target_constraints(a.tier, rng), rejections + 2), rng)
        modifier = pick_modifier(a.persona_type, a.poi_type, set(cell.universe), rng)
        self.wants = self._wants(modifier.want if modifier else None)
        pid = cell.ids
        turns: list[PlannedTurn] = []
        active: list[Constraint] = []
        rejected = 0  # bitmask
        remaining = rejections

        def add_user(action, new=(), revised=(), focus=None, pois=()):
            turns.append(
                PlannedTurn(
                    "user",
                    action,
                    tuple(new),
                    tuple(revised),
                    focus,
                    tuple(pois),
                    active=tuple(active),
                    rejected=tuple(pid[i] for i in cell.members(rejected)),
                )
            )

        # greet: for Expert the first constraint is a revisable kind where possible, so that the later
        # revision has a target
        greet: list[Constraint] = []
        for j in range(sk.greet_new):
            kinds = REVISABLE_KINDS if (a.tier == "Expert" and j == 0) else None
            room = (rejections + 4, rejections + 3, rejections + 2, rejections + 1)
            c = self._relaxed(room, active, rejected, kinds=kinds) if kinds else None
            c = c or self._relaxed(room, active, rejected)
            if c is None:
                raise PlanError("no_constraint", "greeting")
            active.append(c)
            greet.append(c)
        add_user("greet_and_seek", new=greet)
        for _ in range(sk.asks):
            c = self._relaxed(
                (rejections + 4, rejections + 3, rejections + 2, rejections + 1), active, rejected
            )
            if c is None:
                raise PlanError("no_constraint", "answer to ask_preference")
            turns.append(PlannedTurn("system", "ask_preference", focus=c, active=tuple(active)))
            active.append(c)
            add_user("provide_preference", new=[c])

        named: list[int] = []  # POIs recommended so far, in order
        prev_gold: int | None = None
        for s, (action, outcome) in enumerate(zip(sk.actions, sk.outcomes, strict=True)):
            pool = self._left(active, rejected)
            if not pool:
                raise PlanError("no_gold", f"slot {s}")
            members = cell.members(pool)
            after_extra = s > 0 and sk.outcomes[s - 1] == "extra"
            revision = sk.revision_slot == s
            # choose the gold (favoured POI)
            fresh = [i for i in members if i not in named] or members
            rng.shuffle(fresh)
            order = fresh
            if after_extra and prev_gold in members and rng.random() < 0.5:
                order = [prev_gold] + [i for i in fresh if i != prev_gold]
            step = (outcome, sk.extra_new[s], active, rejected, remaining, revision)
            gold = next((i for i in order[:12] if self._feasible(i, *step)), None)
            if gold is None:
                raise PlanError("no_rejectable_gold" if outcome == "reject" else "no_gold", f"slot {s}")
            pois = [gold]
            if action == "compare":
                if after_extra and gold != prev_gold:
                    partner = prev_gold  # the user asked how the last recommendation compares
                else:
                    partner = self._partner(gold, active, rejected)
                if (
                    partner is not None
                    and cell.satisfies_all(active, partner)
                    and self._better(partner, gold)
                ):
                    # both fit: the favoured one must be the better rated (ties: more reviews) so the text is
                    # true; swap when the partner can carry the rest of the plan, else take a near miss
                    if self._feasible(partner, *step):
                        gold, partner = partner, gold
                    elif after_extra:
                        raise PlanError("compare_order", f"slot {s}")
                    else:
                        partner = self._partner(gold, active, rejected, near_only=True)
                if partner is None:
                    raise PlanError("no_compare_partner", f"slot {s}")
                pois = [gold, partner]
            turns.append(
                PlannedTurn(
                    "system",
                    action,
                    pois=tuple(pid[i] for i in pois),
                    gold=(pid[gold],),
                    active=tuple(active),
                    rejected=tuple(pid[i] for i in cell.members(rejected)),
                )
            )
            named.extend(i for i in pois if i not in named)
            prev_gold = gold
            if outcome == "reject":
                remaining -= 1
                rejected |= 1 << gold
                if revision:
                    rev = self._revision(active, rejected, gold, 1 + remaining)
                    if rev is None:
                        raise PlanError("no_revision", f"slot {s}")
                    active.remove(rev[0])
                    active.append(rev[1])
                    add_user("reject_and_refine", revised=[rev], pois=[pid[gold]])
                else:
                    c = self._relaxed(
                        (2 + remaining, 1 + remaining), active, rejected, exclude=gold, prefer_explicit=True
                    )
                    if c is None:
                        raise PlanError("no_rejection_constraint", f"slot {s}")
                    active.append(c)
                    add_user("reject_and_refine", new=[c], pois=[pid[gold]])
            elif outcome == "extra":
                if sk.extra_new[s]:
                    c = self._relaxed((2 + remaining, 1 + remaining), active, rejected, include=gold)
                    if c is None:
                        raise PlanError("no_constraint", f"extra after slot {s}")
                    active.append(c)
                    add_user("provide_preference", new=[c], pois=[pid[gold]])
                else:
                    add_user("provide_preference", focus=rng.choice(active), pois=[pid[gold]])
            else:
                add_user("accept", pois=[pid[gold]])
        assert prev_gold is not None  # every plan recommends at least once before the farewell
        turns.append(
            PlannedTurn(
                "system",
                "farewell",
                pois=(pid[prev_gold],),
                active=tuple(active),
                rejected=tuple(pid[i] for i in cell.members(rejected)),
            )
        )

        plan = DialoguePlan(a.index, a.city, a.poi_type, a.tier, a.persona_type, "", "", "", "", turns)
        if len(plan.recommended) < 3:
            raise PlanError("too_few_pois", f"{len(plan.recommended)} distinct POIs recommended")
        self._choose_candidates(plan, named)
        context = rng.choice(self.arche.contexts)
        used_modifier = modifier if modifier and any(c.key == modifier.want for c in plan.stated) else None
        name, persona = persona_text(a.persona_type, a.city, rng, context, used_modifier)
        plan.persona, plan.persona_name, plan.travel_context = persona, name, context
        plan.modifier = used_modifier.text if used_modifier else ""
        return plan

    def _better(self, i: int, j: int) -> bool:
        pi, pj = self.cell.profiles[i].poi, self.cell.profiles[j].poi
        return (pi.stars, pi.review_count) > (pj.stars, pj.review_count)

    def _partner(self, gold: int, active, rejected: int, near_only: bool = False) -> int | None:
        """The POI a compare turn weighs against the favoured one: usually a near miss (meets all but one
        stated constraint), sometimes another full match; never a rejected one."""
        cell = self.cell
        pool = self.quotable & ~rejected & ~(1 << gold)
        full = cell.mask(active) & pool
        near = 0
        for k in range(len(active)):
            near |= cell.mask(active[:k] + active[k + 1 :]) & pool & ~full
        if near_only:
            members = cell.members(near)
            return self.rng.choice(members) if members else None
        for bits in ((full, near) if self.rng.random() < PARTNER_FULL_SHARE else (near, full)) + (pool,):
            members = cell.members(bits)
            if members:
                return self.rng.choice(members)
        return None

    def _choose_candidates(self, plan: DialoguePlan, named: list[int]) -> None:
        cell, rng = self.cell, self.rng
        need = CANDIDATES_PER_DIALOGUE - len(named)
        if need < 0:
            raise PlanError("too_many_named", f"{len(named)} POIs named")
        chosen = set(named)
        rest = [i for i in range(cell.size) if i not in chosen]
        rec_turns = [t for t in plan.turns if t.action in ("recommend", "compare")]
        full_bits = 0
        for t in rec_turns:
            full_bits |= cell.mask(list(t.active))
        some_bits = 0
        for c in plan.turns[-1].active:
            some_bits |= cell.sat_of(c)
        partial = [i for i in rest if not full_bits >> i & 1 and some_bits >> i & 1]
        full = [i for i in rest if full_bits >> i & 1]
        other = [i for i in rest if not (full_bits | some_bits) >> i & 1]
        cats = {cell.profiles[i].poi.categories[:1] for i in chosen}
        picks: list[int] = []
        bins_order = [0, 1, 2, 3]
        rng.shuffle(bins_order)
        for k in range(need):
            group = full if (rng.random() < FULL_DISTRACTOR_SHARE and full) else (partial or full or other)
            if not group:
                group = partial or full or other
            rating_bin = bins_order[k % 4]
            in_bin = [i for i in group if cell.rating_bins[i] == rating_bin] or group
            new_cat = [i for i in in_bin if cell.profiles[i].poi.categories[:1] not in cats] or in_bin
            i = rng.choice(new_cat)
            picks.append(i)
            cats.add(cell.profiles[i].poi.categories[:1])
            for g in (full, partial, other):
                if i in g:
                    g.remove(i)
        cand = list(named) + picks
        rng.shuffle(cand)
        cand_ids = [cell.ids[i] for i in cand]
        plan.candidates = cand_ids
        # alternatives: every other candidate meeting all constraints in force, never a rejected POI
        for t in rec_turns:
            m = cell.mask(list(t.active))
            rejected = set(t.rejected)
            t.alternatives = tuple(
                cell.ids[i]
                for i in cand
                if m >> i & 1 and cell.ids[i] not in rejected and cell.ids[i] not in t.gold
            )
        in_cand = set(cand)
        others = [i for i in range(cell.size) if i not in in_cand]
        rng.shuffle(others)
        p16 = cand + others[: (POOL_SIZES["pool_16"] or 0) - len(cand)]
        p32 = cand + others[: (POOL_SIZES["pool_32"] or 0) - len(cand)]
        rng.shuffle(p16)
        rng.shuffle(p32)
        plan.pool_16 = [cell.ids[i] for i in p16]
        plan.pool_32 = [cell.ids[i] for i in p32]
        plan.open_set = list(cell.ids)


def plan_dialogue(
    cell: CellIndex, assignment: Assignment, rng: random.Random, attempt: int = 0
) -> DialoguePlan:
    return Planner(cell, assignment, rng, attempt).plan()
