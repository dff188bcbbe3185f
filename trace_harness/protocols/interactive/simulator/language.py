"""The traveler's words: the generator's user-side paraphrase grammar, reused through its renderer.

`UserLanguage` wraps one `generate.template_backend.TemplateRenderer` per live dialogue (built from a plan
that carries only the persona and cell), so the simulated traveler opens, answers, rejects and accepts with
exactly the sentences the corpus's users use, and names each preference the same way all dialogue long
(the renderer fixes one wording per constraint). Every choice comes from the dialogue's own RNG.
"""

from __future__ import annotations

import random

import trace_dataset.generate.phrases as P
from trace_dataset.generate.index import CellIndex
from trace_dataset.generate.plan import DialoguePlan, PlannedTurn
from trace_dataset.generate.preferences.constraints import Constraint
from trace_dataset.generate.template_backend import TemplateRenderer, _cap, _join
from trace_dataset.kb.store import KnowledgeBase

_ASKED = PlannedTurn("system", "ask_preference")


class UserLanguage:
    """Sentences of one traveler (persona, city, type) over one cell of the knowledge base."""

    def __init__(
        self,
        persona_type: str,
        persona: str,
        persona_name: str,
        travel_context: str,
        city: str,
        poi_type: str,
        difficulty: str,
        cell: CellIndex,
        kb: KnowledgeBase,
        rng: random.Random,
    ):
        plan = DialoguePlan(
            index=0,
            city=city,
            poi_type=poi_type,
            tier=difficulty,
            persona_type=persona_type,
            persona=persona,
            persona_name=persona_name,
            travel_context=travel_context,
            modifier="",
        )
        self.renderer = TemplateRenderer(plan, cell, kb, rng)

    @property
    def rng(self) -> random.Random:
        return self.renderer.rng

    def what(self, c: Constraint) -> str:
        """How this traveler names a preference (fixed for the dialogue)."""
        return self.renderer.what(c)

    def state(self, c: Constraint) -> str:
        return self.renderer.state(c)

    def greet(self, constraints: tuple[Constraint, ...]) -> str:
        """Opening message: greeting, self-introduction, travel context, request, the opening preferences."""
        r = self.renderer
        return r._greet_and_seek(
            PlannedTurn("user", "greet_and_seek", new=tuple(constraints)), None, r._Turn()
        )

    def answer(self, constraints: tuple[Constraint, ...]) -> str:
        """Answer to a question: a short lead, then the preference(s)."""
        r = self.renderer
        return r._provide_preference(
            PlannedTurn("user", "provide_preference", new=tuple(constraints)), _ASKED, r._Turn()
        )

    def priority(self, c: Constraint) -> str:
        """Nothing new to add: repeat what matters most."""
        w = self.what(c)
        return _join(
            [
                self.renderer.pick(P.bank().answer_leads),
                self.renderer.pick(P.bank().priority).format(what=w, What=_cap(w)),
            ]
        )

    def nudge(self, poi_type: str, constraints: tuple[Constraint, ...] = ()) -> str:
        """After a turn that recommended nothing: ask again (and add a preference when one is left)."""
        r = self.renderer
        ask = r.pick(P.bank().requests).format(type=r.pick(P.bank().type_nouns[poi_type]))
        return _join([ask, *(self.state(c) for c in constraints)])

    def reject(self, poi_id: str, c: Constraint) -> str:
        """Turn down `poi_id`, saying why (`c`, which it violates) and restating `c`."""
        r = self.renderer
        return r._reject_and_refine(
            PlannedTurn("user", "reject_and_refine", new=(c,), pois=(poi_id,)), None, r._Turn()
        )

    def accept(self, poi_id: str) -> str:
        r = self.renderer
        return r._accept(PlannedTurn("user", "accept", pois=(poi_id,)), None, r._Turn())
