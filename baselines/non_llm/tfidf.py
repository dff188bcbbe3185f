"""TF-IDF (App. F): candidates ranked by the cosine TF-IDF score of the user's turns against their documents.

The scorer (document, weights, one index per city x type cell) is the toolkit's: `baselines.toolkit.tfidf`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from baselines.base import DEFAULT_BATCH_SIZE, RankingPipeline
from baselines.toolkit.tfidf import TfidfScorer
from trace_dataset.kb.store import KnowledgeBase


class TfidfBaseline(RankingPipeline):
    name: ClassVar[str] = "tfidf"

    def __init__(self, kb: KnowledgeBase, batch_size: int = DEFAULT_BATCH_SIZE, **params: Any):
        super().__init__(kb, batch_size, **params)
        self.tfidf = TfidfScorer(kb)

    def score(self, inp: Mapping[str, Any]) -> dict[str, float]:
        return self.tfidf.scores(inp["query"], inp["candidates"])
