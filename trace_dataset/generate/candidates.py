"""Stages 1-2: from an assignment (cell, tier, archetype) to a full dialogue plan.

The planner lays out the turn skeleton for the tier (rejections, asks, comparisons), draws the user's
constraints from the persona's wants, picks for every recommendation turn a gold POI that satisfies every
constraint stated so far, makes each reject_and_refine add a constraint the rejected POI violates (Expert:
one that revises an earlier constraint), then selects the 8 candidates (the POIs the plan names plus
distractors by stratified rating/category sampling, most of them meeting only part of the constraints),
computes each turn's acceptable alternatives from the candidates, and draws the 16 / 32 pools and the open
set. Everything is set arithmetic on the cell's constraint bitsets.

Every choice is drawn from the dialogue's own RNG in one fixed order: the rejections, the skeleton
(`skeleton.make_skeleton`), the persona's detail modifier and wants, the opening turns, then slot by slot the
gold, the comparison partner and the user's reply, then the candidates, the pools and the persona text. The
corpus bytes depend on that order: a change that draws one more number, or draws earlier, changes the
dialogues even where the logic is the same.
"""

from __future__ import annotations

import random
from collections.abc import Iterable

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
from trace_dataset.generate.skeleton import Skeleton, make_skeleton

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


# what `_feasible` weighs a slot's gold against: (outcome, extra_new, active, rejected, remaining, revision)
_Step = tuple[str, bool, list[Constraint], int, int, bool]

_INCOMPATIBLE_WITH: dict[str, frozenset[str]] = {}
for _pair in INCOMPATIBLE:
    for _k in _pair:
        _INCOMPATIBLE_WITH[_k] = _INCOMPATIBLE_WITH.get(_k, frozenset()) | (_pair - {_k})


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
    # One Planner builds one plan; while it does: the turns so far, the constraints in force, the
    # rejected POIs (a bitmask over the cell) and the rejections still to come.
    turns: list[PlannedTurn]
    active: list[Constraint]
    rejected: int
    remaining: int

    def plan(self) -> DialoguePlan:
        a, cell, rng = self.a, self.cell, self.rng
        rejections = rng.randint(*REJECTIONS_PER_TIER[a.tier])
        # at least the opening constraint and the asked one come on top of one per rejection
        sk = make_skeleton(a.tier, rejections, max(target_constraints(a.tier, rng), rejections + 2), rng)
        modifier = pick_modifier(a.persona_type, a.poi_type, set(cell.universe), rng)
        self.wants = self._wants(modifier.want if modifier else None)
        self.turns, self.active, self.rejected, self.remaining = [], [], 0, rejections
        self._opening(sk)
        named, last_gold = self._recommendations(sk)
        self.turns.append(
            PlannedTurn(
                "system",
                "farewell",
                pois=(cell.ids[last_gold],),
                active=tuple(self.active),
                rejected=self._rejected_ids(),
            )
        )
        plan = DialoguePlan(a.index, a.city, a.poi_type, a.tier, a.persona_type, "", "", "", "", self.turns)
        if len(plan.recommended) < 3:
            raise PlanError("too_few_pois", f"{len(plan.recommended)} distinct POIs recommended")
        self._choose_candidates(plan, named)
        context = rng.choice(self.arche.contexts)
        used_modifier = modifier if modifier and any(c.key == modifier.want for c in plan.stated) else None
        name, persona = persona_text(a.persona_type, a.city, rng, context, used_modifier)
        plan.persona, plan.persona_name, plan.travel_context = persona, name, context
        plan.modifier = used_modifier.text if used_modifier else ""
        return plan

    def _rejected_ids(self) -> tuple[str, ...]:
        return tuple(self.cell.ids[i] for i in self.cell.members(self.rejected))

    def _add_user(
        self,
        action: str,
        new: Iterable[Constraint] = (),
        revised: Iterable[tuple[Constraint, Constraint]] = (),
        focus: Constraint | None = None,
        pois: Iterable[str] = (),
    ) -> None:
        self.turns.append(
            PlannedTurn(
                "user",
                action,
                tuple(new),
                tuple(revised),
                focus,
                tuple(pois),
                active=tuple(self.active),
                rejected=self._rejected_ids(),
            )
        )

    def _opening(self, sk: Skeleton) -> None:
        """The greeting's constraints, then each ask_preference and its answer. For Expert the first
        constraint is a revisable kind where possible, so that the later revision has a target."""
        room = tuple(self.remaining + k for k in (4, 3, 2, 1))
        greet: list[Constraint] = []
        for j in range(sk.greet_new):
            kinds = REVISABLE_KINDS if (self.a.tier == "Expert" and j == 0) else None
            c = self._relaxed(room, self.active, self.rejected, kinds=kinds) if kinds else None
            c = c or self._relaxed(room, self.active, self.rejected)
            if c is None:
                raise PlanError("no_constraint", "greeting")
            self.active.append(c)
            greet.append(c)
        self._add_user("greet_and_seek", new=greet)
        for _ in range(sk.asks):
            c = self._relaxed(room, self.active, self.rejected)
            if c is None:
                raise PlanError("no_constraint", "answer to ask_preference")
            self.turns.append(PlannedTurn("system", "ask_preference", focus=c, active=tuple(self.active)))
            self.active.append(c)
            self._add_user("provide_preference", new=[c])

    def _recommendations(self, sk: Skeleton) -> tuple[list[int], int]:
        """Every recommendation slot of the skeleton and the user turn after it; returns the POIs named (in
        order) and the last gold."""
        cell = self.cell
        named: list[int] = []  # POIs recommended so far, in order
        prev_gold: int | None = None
        for s, (action, outcome) in enumerate(zip(sk.actions, sk.outcomes, strict=True)):
            pool = self._left(self.active, self.rejected)
            if not pool:
                raise PlanError("no_gold", f"slot {s}")
            after_extra = s > 0 and sk.outcomes[s - 1] == "extra"
            revision = sk.revision_slot == s
            step = (outcome, sk.extra_new[s], self.active, self.rejected, self.remaining, revision)
            gold = self._gold(s, cell.members(pool), named, prev_gold if after_extra else None, step)
            pois = [gold]
            if action == "compare":
                pois = self._compared(s, gold, prev_gold, after_extra, step)
                gold = pois[0]
            self.turns.append(
                PlannedTurn(
                    "system",
                    action,
                    pois=tuple(cell.ids[i] for i in pois),
                    gold=(cell.ids[gold],),
                    active=tuple(self.active),
                    rejected=self._rejected_ids(),
                )
            )
            named.extend(i for i in pois if i not in named)
            prev_gold = gold
            self._user_reply(s, outcome, sk.extra_new[s], gold, revision)
        assert prev_gold is not None  # every plan recommends at least once before the farewell
        return named, prev_gold

    def _gold(self, s: int, members: list[int], named: list[int], stay: int | None, step: _Step) -> int:
        """The slot's gold (favoured POI): a POI not named yet where possible, able to carry what follows;
        after a refinement (`stay`: the previous gold) the same POI half of the time when it still fits."""
        fresh = [i for i in members if i not in named] or members
        self.rng.shuffle(fresh)
        order = fresh
        if stay is not None and stay in members and self.rng.random() < 0.5:
            order = [stay] + [i for i in fresh if i != stay]
        gold = next((i for i in order[:12] if self._feasible(i, *step)), None)
        if gold is None:
            raise PlanError("no_rejectable_gold" if step[0] == "reject" else "no_gold", f"slot {s}")
        return gold

    def _compared(
        self, s: int, gold: int, prev_gold: int | None, after_extra: bool, step: _Step
    ) -> list[int]:
        """A compare turn's [favoured, partner]."""
        if after_extra and gold != prev_gold:
            partner = prev_gold  # the user asked how the last recommendation compares
        else:
            partner = self._partner(gold, self.active, self.rejected)
        if (
            partner is not None
            and self.cell.satisfies_all(self.active, partner)
            and self._better(partner, gold)
        ):
            # both fit: the favoured one must be the better rated (ties: more reviews) so the text is
            # true; swap when the partner can carry the rest of the plan, else take a near miss
            if self._feasible(partner, *step):
                gold, partner = partner, gold
            elif after_extra:
                raise PlanError("compare_order", f"slot {s}")
            else:
                partner = self._partner(gold, self.active, self.rejected, near_only=True)
        if partner is None:
            raise PlanError("no_compare_partner", f"slot {s}")
        return [gold, partner]

    def _user_reply(self, s: int, outcome: str, extra_new: bool, gold: int, revision: bool) -> None:
        """The user turn after slot `s`: a rejection (adding or revising a constraint), a refinement or the
        acceptance."""
        gold_id = [self.cell.ids[gold]]
        if outcome == "reject":
            self.remaining -= 1
            self.rejected |= 1 << gold
            if revision:
                rev = self._revision(self.active, self.rejected, gold, 1 + self.remaining)
                if rev is None:
                    raise PlanError("no_revision", f"slot {s}")
                self.active.remove(rev[0])
                self.active.append(rev[1])
                self._add_user("reject_and_refine", revised=[rev], pois=gold_id)
                return
            room = (2 + self.remaining, 1 + self.remaining)
            c = self._relaxed(room, self.active, self.rejected, exclude=gold, prefer_explicit=True)
            if c is None:
                raise PlanError("no_rejection_constraint", f"slot {s}")
            self.active.append(c)
            self._add_user("reject_and_refine", new=[c], pois=gold_id)
        elif outcome == "extra":
            if not extra_new:
                self._add_user("provide_preference", focus=self.rng.choice(self.active), pois=gold_id)
                return
            c = self._relaxed(
                (2 + self.remaining, 1 + self.remaining), self.active, self.rejected, include=gold
            )
            if c is None:
                raise PlanError("no_constraint", f"extra after slot {s}")
            self.active.append(c)
            self._add_user("provide_preference", new=[c], pois=gold_id)
        else:
            self._add_user("accept", pois=gold_id)

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
