"""Dense (App. F "DenseRetrievalBaseline"): candidates ranked by the cosine of all-MiniLM-L6-v2 embeddings.

The document recipe, the query modes, the rejection shift, the score rounding and the on-disk caches are the
toolkit's (`baselines.toolkit.dense`, whose docstring says each choice); this module is the baseline on top.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from baselines.base import DEFAULT_BATCH_SIZE, RankingPipeline
from baselines.toolkit.dense import (
    DEFAULT_N_REVIEWS,
    DEFAULT_PRECISION,
    DEFAULT_QUERY_MODE,
    DEFAULT_REVIEW_CHARS,
    HUB_MODEL_ID,
    QUERY_MODES,
    REJECTION_PENALTY,
    REJECTION_WEIGHT,
    DenseIndex,
    with_precision_variant,
)
from baselines.toolkit.output import TurnOutput
from baselines.toolkit.text import user_turns

if TYPE_CHECKING:
    from trace_dataset.kb.store import KnowledgeBase


class DenseBaseline(RankingPipeline):
    """all-MiniLM-L6-v2 cosine ranking with the rejection shift and penalty (see the module docstring)."""

    name: ClassVar[str] = "dense"
    config_keys: ClassVar[tuple[str, ...]] = (
        "model",
        "n_reviews",
        "review_chars",
        "review_order",
        "query_mode",
        "rejection_weight",
        "rejection_penalty",
        "precision",
    )

    def __init__(
        self,
        kb: KnowledgeBase,
        batch_size: int = DEFAULT_BATCH_SIZE,
        *,
        model: str = HUB_MODEL_ID,
        device: str | None = "cpu",
        cache_dir: str | os.PathLike | None = None,
        n_reviews: int = DEFAULT_N_REVIEWS,
        review_chars: int = DEFAULT_REVIEW_CHARS,
        review_order: Literal["kb", "stars"] = "kb",
        query_mode: Literal["concat", "turn_mean"] = DEFAULT_QUERY_MODE,
        rejection_weight: float = REJECTION_WEIGHT,
        rejection_penalty: float = REJECTION_PENALTY,
        query_cache: bool = True,
        precision: str = DEFAULT_PRECISION,
        index: DenseIndex | None = None,
        **params: Any,
    ):
        super().__init__(kb, batch_size, **params)
        if query_mode not in QUERY_MODES:
            raise ValueError(f"unknown query_mode {query_mode!r}; expected one of {QUERY_MODES}")
        self.model = model
        self.query_mode = query_mode
        self.n_reviews = n_reviews
        self.review_chars = review_chars
        self.review_order = review_order
        self.rejection_weight = float(rejection_weight)
        self.rejection_penalty = float(rejection_penalty)
        self.index = (
            index
            if index is not None
            else DenseIndex(
                kb,
                model,
                device,
                cache_dir,
                batch_size,
                n_reviews,
                review_chars,
                review_order,
                query_cache=query_cache,
                precision=precision,
            )
        )
        self.precision = self.index.precision  # the index checks it; a given index brings its own

    def describe(self) -> dict[str, Any]:
        return with_precision_variant(super().describe(), self.precision)

    def _forward(self, inputs: list[dict[str, Any]]) -> list[TurnOutput]:
        """Encode the batch's queries in one call, then rank as every RankingPipeline does."""
        todo = [inp for inp in inputs if inp["action"] != "farewell" and inp["candidates"]]
        vectors = self.index.query_vectors([user_turns(inp["history"]) for inp in todo], self.query_mode)
        for inp, vec in zip(todo, vectors, strict=True):
            inp["query_embedding"] = vec
        return super()._forward(inputs)

    def score(self, inp: Mapping[str, Any]) -> dict[str, float]:
        query = inp.get("query_embedding")
        if query is None:
            query = self.index.query_vectors([user_turns(inp["history"])], self.query_mode)[0]
        return self.index.scores(
            query,
            inp["candidates"],
            inp["state"].rejected_poi_ids,
            self.rejection_weight,
            self.rejection_penalty,
        )
