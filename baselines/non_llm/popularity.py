"""Popularity (App. F): rank by (stars, review_count), descending, ignoring the dialogue.

The lower bound of the non-LLM family. Like every baseline it still drops rejected POIs and answers
every action; its quotes ignore the query too (the best-starred review's first usable span), so nothing
it says depends on the conversation beyond the rejection acknowledgement.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from baselines.base import RankingPipeline
from baselines.responses import Response


class PopularityBaseline(RankingPipeline):
    name: ClassVar[str] = "popularity"

    def score(self, inp: Mapping[str, Any]) -> dict[str, tuple[float, int]]:
        pois = self.kb.pois
        return {pid: (pois[pid].stars, pois[pid].review_count) for pid in inp["candidates"]}

    def respond(self, inp: Mapping[str, Any], ranked: list[str]) -> Response:
        return super().respond({**inp, "terms": []}, ranked)
