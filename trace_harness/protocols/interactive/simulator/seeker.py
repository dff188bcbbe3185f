"""The seeker of SnipRec's protocol (§4-5): someone with one target venue in mind who answers questions.

The seeker never rejects or accepts (SnipRec's protocol ranks after every answer for five turns); it only
answers. Its preferences are facts of the target venue, in this order: its first specific Yelp category
(what the fixed first question asks), the catalogue cell's preference constraints the seed review gives
evidence of and the venue satisfies, its price level (cheap for $-$$, moderate for $$$), then the other
constraints it satisfies, most selective first (fewest venues of the cell share them); at most
MAX_PREFERENCES. Whether the venue satisfies a constraint is the generator's predicate, as everywhere.

- `rules`: answers with `policy.answer_to` (the kind the question asks about, else the next preference; a
  repeat of the first when none is left) in the generator's user-side language.
- `llm`: the question, the conversation and the seeker's context (`sniprec_seeds.SeekerContext`) go to
  the model with `prompts/seeker_sniprec_v1.txt`; sentences too close to the target's name are removed
  (llm.remove_names) and an empty or failed answer falls back to the rules answer (counted).
"""

from __future__ import annotations

import functools
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from trace_dataset.constants import PRICE_KEYWORDS
from trace_dataset.generate.preferences.constraints import GENERIC_CATEGORIES, Constraint, evidence_mentions
from trace_harness.protocols.interactive.simulator.goal import TravelerGoal, World
from trace_harness.protocols.interactive.simulator.language import UserLanguage
from trace_harness.protocols.interactive.simulator.llm import LLMWording, generate_or_none, worded
from trace_harness.protocols.interactive.simulator.party import SimulatedUser
from trace_harness.protocols.interactive.simulator.policy import (
    TravelerState,
    answer_to,
    decision_meta,
    topics_sha256,
)
from trace_harness.protocols.interactive.simulator.rules import (
    SIMULATOR_VERSION,
    Traveler,
    UserTurn,
    rules_text,
)
from trace_harness.protocols.interactive.simulator.sniprec_seeds import SeekerContext

MAX_PREFERENCES = 8
SEEKER_PERSONA = "foodie_explorer"  # the language needs an archetype; SnipRec's seeker has no persona
PROMPT_FILE = "seeker_sniprec_v1.txt"
FIRST_QUESTION = "Hello, what category of restaurant are you looking for?"  # SnipRec §5.1, fixed


def _price_word(price: int | None) -> str | None:
    if price is None or price > 3:
        return None
    ceiling = 2 if price <= 2 else 3
    return next(w for w, c in PRICE_KEYWORDS.items() if c == ceiling)


def seeker_preferences(world: World, ctx: SeekerContext) -> list[Constraint]:
    """The target venue's facts as preferences, in the order of the module docstring."""
    kb = world.kb
    poi = kb.pois[ctx.pair.business_id]
    cell = world.cell(poi.city, poi.poi_type)
    i = cell.ids.index(poi.business_id)
    out: list[Constraint] = []
    cats = [c for c in poi.categories if c.lower() not in GENERIC_CATEGORIES] or list(poi.categories[:1])
    if cats:
        out.append(Constraint("category", cats[0]))

    def holds(c: Constraint) -> bool:
        return bool(cell.sat_of(c) >> i & 1)

    said = {key for key, _, _ in evidence_mentions(ctx.seed_review)}
    out.extend(
        c for key, c in sorted(cell.universe.items()) if key in said and c.kind != "price" and holds(c)
    )
    word = _price_word(poi.price)
    if word is not None:
        out.append(Constraint("price", word))
    rest = [c for _, c in sorted(cell.universe.items()) if holds(c) and c not in out and c.kind != "price"]
    rest.sort(key=lambda c: (cell.sat_of(c).bit_count(), c.key))
    out.extend(rest)
    seen: list[Constraint] = []
    for c in out:
        if c not in seen and all(c.slot != s.slot for s in seen):
            seen.append(c)
    return seen[:MAX_PREFERENCES]


def seeker_goal(world: World, ctx: SeekerContext, catalogue: Sequence[str]) -> TravelerGoal:
    poi = world.kb.pois[ctx.pair.business_id]
    return TravelerGoal(
        dialogue_id=f"sniprec_{ctx.pair.index + 1:05d}",
        split="test",
        scenario={
            "persona_type": SEEKER_PERSONA,
            "persona": "a diner with a favourite place in mind",
            "travel_context": "a meal out",
            "city": poi.city,
            "poi_type": poi.poi_type,
            "difficulty": "",
        },
        persona_name="",
        constraints=tuple(seeker_preferences(world, ctx)),
        opening=0,
        asks=0,
        pools={"open": tuple(catalogue)},
    )


@dataclass
class Seeker(Traveler):
    context: SeekerContext | None = None


class SeekerSimulator(SimulatedUser):
    """Rules seeker; `LLMSeeker` words the answers with a model."""

    name = "rules"

    def start(self, contexts: Sequence[SeekerContext], catalogue: Sequence[str]) -> list[Seeker]:
        out = []
        for ctx in contexts:
            goal = seeker_goal(self.world, ctx, catalogue)
            s = goal.scenario
            rng = random.Random(f"{self.seed}:sniprec:{goal.dialogue_id}")
            lang = UserLanguage(
                s["persona_type"],
                s["persona"],
                "",
                s["travel_context"],
                s["city"],
                s["poi_type"],
                "",
                self.world.cell(s["city"], s["poi_type"]),
                self.world.kb,
                rng,
            )
            out.append(Seeker(TravelerState(goal), lang, context=ctx))
        return out

    def answer(self, seekers: Sequence[Seeker], questions: Sequence[str]) -> list[UserTurn]:
        decisions = [answer_to(s.state, q) for s, q in zip(seekers, questions, strict=True)]
        for s, q in zip(seekers, questions, strict=True):
            s.transcript.append(("system", q))
        texts = self.words(seekers, questions, decisions)
        out = []
        for s, d, (text, extra) in zip(seekers, decisions, texts, strict=True):
            s.state.record(d)
            s.transcript.append(("user", text))
            out.append(UserTurn("provide_preference", text, (), {**decision_meta(d), **extra}))
        return out

    def words(self, seekers, questions, decisions) -> list[tuple[str, dict[str, Any]]]:
        return [(rules_text(s, d), {}) for s, d in zip(seekers, decisions, strict=True)]

    def describe(self) -> dict[str, Any]:
        return {
            "simulator": self.name,
            "version": SIMULATOR_VERSION,
            "seed": self.seed,
            "role": "sniprec seeker",
            "topics_sha256": topics_sha256(),
        }


class LLMSeeker(LLMWording, SeekerSimulator):
    """Words the seeker's answers with a model (see the module docstring)."""

    prompt_file = PROMPT_FILE

    def messages(self, s: Seeker, question: str) -> list[dict[str, str]]:
        ctx = s.context
        if ctx is None:
            raise ValueError("a seeker needs its context")

        def bullets(items: Sequence[str]) -> str:
            return "\n".join(f"- {x}" for x in items) or "- (none)"

        system = self.prompt.render(
            "system",
            info=bullets(ctx.info),
            seed_review=ctx.seed_review,
            positive=bullets(ctx.positive),
            negative=bullets(ctx.negative),
        )
        lines = [
            f"{'You' if role == 'user' else 'Recommender'}: {text}" for role, text in s.transcript[:-1][-12:]
        ]
        user = self.prompt.render("user", transcript="\n".join(lines) or "(nothing yet)", question=question)
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def words(self, seekers, questions, decisions) -> list[tuple[str, dict[str, Any]]]:
        convs = [self.messages(s, q) for s, q in zip(seekers, questions, strict=True)]
        replies = generate_or_none(self.llm, convs)
        out = []
        for s, d, raw in zip(seekers, decisions, replies, strict=True):
            name = self.world.kb.pois[s.context.pair.business_id].name if s.context else ""
            out.append(worded(raw, [name], functools.partial(rules_text, s, d)))
        return out

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "llm": self.llm.describe(), "prompt": self.prompt.describe()}
