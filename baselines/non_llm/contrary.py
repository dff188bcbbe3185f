"""Contrary: a deliberately bad system, the second of the two counterfactual baselines.

It reads the traveller's stated preferences exactly as Knowledge-Enhanced does (`baselines.toolkit.
constraints.parse_constraints` over the user turns so far) and ranks first what they exclude: score = the
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
from typing import Any, ClassVar

from baselines.non_llm.knowledge import KnowledgeEnhancedBaseline
from baselines.toolkit.constraints import constraint_share


class ContraryBaseline(KnowledgeEnhancedBaseline):
    """The candidates that violate most of the stated preferences first (module docstring)."""

    name: ClassVar[str] = "contrary"

    def score(self, inp: Mapping[str, Any]) -> dict[str, tuple[float, float]]:
        constraints = self._constraints_of(inp)
        tfidf = self.tfidf.scores(inp["query"], inp["candidates"])
        pois = self.kb.pois
        share = self.unknown_credit
        return {
            pid: (1.0 - constraint_share(constraints, pois[pid], share) if constraints else 0.0, -tfidf[pid])
            for pid in inp["candidates"]
        }

    def notes(self, inp: Mapping[str, Any], ranked: list[str]) -> dict[str, str]:
        return {}
