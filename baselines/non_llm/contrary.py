"""Contrary: a deliberately bad system, the second of the two counterfactual baselines.

It reads the traveller's stated preferences with the parser Knowledge-Enhanced uses (`baselines.toolkit.
constraints.parse_constraints` over the user turns so far, the cell's categories nameable) and ranks first what they exclude: score = the
share of the stated constraints a POI is known to violate (a constraint the knowledge base cannot check
counts half, as Knowledge-Enhanced's `unknown_credit`), ties broken by the lowest TF-IDF match, then by
business_id. With nothing stated yet it offers the candidate least like what was asked.

Why it exists: a traveller whose acceptance did not follow its own preferences would accept the contrary
pick about as often as a real system's; the interactive protocol's simulator report runs it beside the
system under test on the same travellers and prints the real system's margin over it (ConvApparel's
counterfactual validation; docs/interactive.md, "How far to trust the simulated traveller"). It never ranks
on the leaderboard (`baselines.identity`: `counterfactual=True`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from baselines.base import DEFAULT_BATCH_SIZE, RankingPipeline
from baselines.toolkit.constraints import UNKNOWN_CREDIT, CategoryMatcher, constraint_share, parse_constraints
from baselines.toolkit.text import user_turns
from baselines.toolkit.tfidf import TfidfScorer

if TYPE_CHECKING:
    from trace_dataset.kb.store import KnowledgeBase


class ContraryBaseline(RankingPipeline):
    """The candidates that violate most of the stated preferences first (module docstring)."""

    name: ClassVar[str] = "contrary"

    def __init__(self, kb: KnowledgeBase, batch_size: int = DEFAULT_BATCH_SIZE, **params: Any):
        super().__init__(kb, batch_size, **params)
        self.tfidf = TfidfScorer(kb)
        self._matchers: dict[tuple[str, str], CategoryMatcher] = {}

    def categories(self, city: str, poi_type: str) -> CategoryMatcher:
        key = (city, poi_type)
        if key not in self._matchers:
            self._matchers[key] = CategoryMatcher(
                c for p in self.kb.pois_in(city, poi_type) for c in p.categories
            )
        return self._matchers[key]

    def score(self, inp: Mapping[str, Any]) -> dict[str, tuple[float, float]]:
        pois = self.kb.pois
        prices = [pois[p].price for p in inp["state"].rejected_poi_ids if p in pois]
        constraints = parse_constraints(
            user_turns(inp["history"]),
            self.categories(inp["city"], inp["poi_type"]),
            [p for p in prices if p is not None],
        )
        tfidf = self.tfidf.scores(inp["query"], inp["candidates"])
        return {
            pid: (
                1.0 - constraint_share(constraints, pois[pid], UNKNOWN_CREDIT) if constraints else 0.0,
                -tfidf[pid],
            )
            for pid in inp["candidates"]
        }
