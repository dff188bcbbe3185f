"""Knowledge-Enhanced baseline: attribute-constraint matching over the canonical POI attributes.

The paper names the idea ("attribute matching", Table 8 retrieval type KB = structured attributes) and
nothing more; our reading (docs/aspect_dense_hybrid_knowledge_persona.md,
tests/baselines/non_llm/test_knowledge.py); the parser and the checks are the shared toolkit's
(`baselines.toolkit.constraints`):

1. Parse constraints from the user turns so far (`parse_constraints`): price ceiling or floor, minimum
   stars ("4+ stars", "rated at least 4.5", "highly rated" = 4.0), noise, wifi, outdoor seating, kids,
   dogs, parking, wheelchair access, groups, reservations, takeout, delivery, happy hour, TV, bike
   parking, alcohol, attire, ambience, meals, dietary needs, and the categories (cuisines, kinds of
   attraction) of the dialogue's city x type cell. A later mention of the same constraint replaces the
   earlier one ("cheap" then "upscale": upscale; the ambience is one slot, so "elegant, now trendy" keeps
   trendy; the categories of the latest turn naming any replace earlier ones, several named together are
   alternatives). A mention with a negator among the three words before it ("no kids", "don't need
   parking") states nothing. Location wishes are left to Spatial and review-only wishes (a pool, views) to
   the retrievers: no attribute records them.
2. Check each constraint against each candidate (`check_constraint`): True (satisfied), False
   (violated) or None (the knowledge base does not know the attribute).
3. score = (satisfied + 0.5 * unknown) / n_constraints, so a POI known to satisfy beats one the KB knows
   nothing about, which beats one known to violate. Ties (always, when nothing was stated) are broken by
   TF-IDF, then business_id.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from baselines.base import DEFAULT_BATCH_SIZE, RankingPipeline
from baselines.toolkit.constraints import (
    UNKNOWN_CREDIT,
    AttributeConstraint,
    CategoryMatcher,
    constraint_counts,
    constraint_share,
    parse_constraints,
)
from baselines.toolkit.output import TurnOutput
from baselines.toolkit.text import user_turns
from baselines.toolkit.tfidf import TfidfScorer

if TYPE_CHECKING:
    from trace_dataset.kb.store import KnowledgeBase

MEMO_SIZE = 100_000  # user texts whose parsed mentions a pipeline keeps


class KnowledgeEnhancedBaseline(RankingPipeline):
    """Share of the stated attribute constraints a POI satisfies, tie-broken by TF-IDF (module docstring)."""

    name: ClassVar[str] = "knowledge"
    config_keys: ClassVar[tuple[str, ...]] = ("unknown_credit",)

    def __init__(
        self,
        kb: KnowledgeBase,
        batch_size: int = DEFAULT_BATCH_SIZE,
        *,
        unknown_credit: float = UNKNOWN_CREDIT,
        **params: Any,
    ):
        super().__init__(kb, batch_size, **params)
        if not 0.0 <= unknown_credit <= 1.0:
            raise ValueError(f"unknown_credit must lie in [0, 1], got {unknown_credit!r}")
        self.unknown_credit = float(unknown_credit)
        self.tfidf = TfidfScorer(kb)
        self._matchers: dict[tuple[str, str], CategoryMatcher] = {}
        # text -> mentions (a pure function)
        self._memo: dict[str, tuple[tuple[int, AttributeConstraint], ...]] = {}

    def categories(self, city: str, poi_type: str) -> CategoryMatcher:
        """Every category of the (city, type) cell: what a user may name, the same for every pool."""
        key = (city, poi_type)
        matcher = self._matchers.get(key)
        if matcher is None:
            matcher = self._matchers[key] = CategoryMatcher(
                c for p in self.kb.pois_in(city, poi_type) for c in p.categories
            )
        return matcher

    def constraints(self, inp: Mapping[str, Any]) -> list[AttributeConstraint]:
        pois = self.kb.pois
        prices = [pois[pid].price for pid in inp["state"].rejected_poi_ids if pid in pois]
        rejected_prices = [p for p in prices if p is not None]
        if len(self._memo) > MEMO_SIZE:
            self._memo.clear()
        return parse_constraints(
            user_turns(inp["history"]),
            self.categories(inp["city"], inp["poi_type"]),
            rejected_prices,
            self._memo,
        )

    def _forward(self, inputs: list[dict[str, Any]]) -> list[TurnOutput]:
        for inp in inputs:  # parsed once per turn; score, notes and meta read them
            inp["constraints"] = self.constraints(inp)
        self.tfidf.prefetch(inputs)  # the batch's turns scored together; `score` reads them
        return super()._forward(inputs)

    def _constraints_of(self, inp: Mapping[str, Any]) -> list[AttributeConstraint]:
        found = inp.get("constraints")
        return self.constraints(inp) if found is None else found

    def score(self, inp: Mapping[str, Any]) -> dict[str, tuple[float, float]]:
        constraints = self._constraints_of(inp)
        tfidf = self.tfidf.scores(inp["query"], inp["candidates"])
        pois = self.kb.pois
        return {
            pid: (constraint_share(constraints, pois[pid], self.unknown_credit), tfidf[pid])
            for pid in inp["candidates"]
        }

    def notes(self, inp: Mapping[str, Any], ranked: list[str]) -> dict[str, str]:
        constraints = self._constraints_of(inp)
        if not constraints:
            return {}
        out = {}
        for pid in ranked[:2]:
            satisfied = constraint_counts(constraints, self.kb.pois[pid])[0]
            n = len(constraints)
            out[pid] = f"meets {satisfied} of your {n} stated requirement{'' if n == 1 else 's'}"
        return out

    def meta(self, inp: Mapping[str, Any], ranked: list[str]) -> dict[str, Any]:
        """The parsed constraints (ranked turns only)."""
        constraints = self._constraints_of(inp)
        return {"constraints": [c.describe() for c in constraints]} if ranked and constraints else {}
