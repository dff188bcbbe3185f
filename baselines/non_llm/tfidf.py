"""TF-IDF (App. F): candidates ranked by the cosine TF-IDF score of the user's turns against their documents.

The scorer (document, weights, one index per city x type cell) is the toolkit's: `baselines.toolkit.tfidf`.
A batch's turns are scored together (`TfidfScorer.prefetch`), to the bit the scores of one turn at a time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from baselines.base import DEFAULT_BATCH_SIZE, RankingPipeline
from baselines.toolkit.output import TurnOutput
from baselines.toolkit.tfidf import TfidfScorer
from trace_dataset.kb.store import KnowledgeBase


class TfidfBaseline(RankingPipeline):
    name: ClassVar[str] = "tfidf"

    def __init__(self, kb: KnowledgeBase, batch_size: int = DEFAULT_BATCH_SIZE, **params: Any):
        super().__init__(kb, batch_size, **params)
        self.tfidf = TfidfScorer(kb)

    def _forward(self, inputs: list[dict[str, Any]]) -> list[TurnOutput]:
        self.tfidf.prefetch(inputs)  # the batch's turns scored together; `score` reads them
        return super()._forward(inputs)

    def score(self, inp: Mapping[str, Any]) -> dict[str, float]:
        return self.tfidf.scores(inp["query"], inp["candidates"])
