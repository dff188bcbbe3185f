"""Popularity (App. F, Table 8 "Heuristic ranking (no dialogue context)"): rank by (stars, review_count),
descending, ignoring the dialogue.

The lower bound of the non-LLM family. As the paper defines it (App. N: "Popularity stays at 0.626 (no
adaptation)"), it ignores the dialogue context by default, rejections included: every turn ranks the whole
pool, a rejected POI included, and the response does not claim to have dropped it (no "Understood, X is off
the list"). Its quotes ignore the query too (the best-starred review's first usable span).

`drop_rejected=True` (`trace-bench run popularity --param drop_rejected=true`) restores the behaviour every
other baseline has: rejected POIs are removed from the ranking and the response acknowledges the rejection.
The parameter is recorded in the run metadata and names the row (`variant`: the label followed by "[drops rejected]"),
so a table says which reading produced it; the default row carries the plain label, the paper's reading.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from baselines.base import DEFAULT_BATCH_SIZE, RankingPipeline
from baselines.toolkit.responses import Response

if TYPE_CHECKING:
    from trace_dataset.kb.store import KnowledgeBase


class PopularityBaseline(RankingPipeline):
    name: ClassVar[str] = "popularity"
    config_keys: ClassVar[tuple[str, ...]] = ("drop_rejected",)

    def __init__(self, kb: KnowledgeBase, batch_size: int = DEFAULT_BATCH_SIZE, drop_rejected: bool = False):
        super().__init__(kb, batch_size)
        if not isinstance(drop_rejected, bool):
            raise ValueError(f"drop_rejected must be true or false, got {drop_rejected!r}")
        self.drop_rejected = drop_rejected

    def preprocess(self, row: Mapping[str, Any]) -> dict[str, Any]:
        inp = super().preprocess(row)
        if not self.drop_rejected:  # no adaptation: the whole pool, and no rejection to acknowledge
            inp["candidates"] = list(dict.fromkeys(row["candidate_poi_ids"]))
            inp["state"] = dataclasses.replace(inp["state"], rejected_poi_ids=(), after_rejection=False)
        return inp

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        if self.drop_rejected:  # the row label says it is not the paper's static reading
            out["variant"] = "drops rejected"
        return out

    def score(self, inp: Mapping[str, Any]) -> dict[str, tuple[float, int]]:
        pois = self.kb.pois
        return {pid: (pois[pid].stars, pois[pid].review_count) for pid in inp["candidates"]}

    def respond(self, inp: Mapping[str, Any], ranked: list[str]) -> Response:
        return super().respond({**inp, "terms": []}, ranked)
