"""Hybrid-RRF (App. F "HybridRRFBaseline"): Reciprocal Rank Fusion of four rankers.

    score(d) = sum_r 1 / (k + rank_r(d)),   k = 60,   rank_r 1-based within the usable candidates

Rankers, each ranking the same usable candidates (pool minus rejected POIs), ties by business_id:
- `tfidf`: `baselines.toolkit.tfidf.TfidfScorer` (cosine TF-IDF of the user turns),
- `aspect`: `baselines.toolkit.aspect` (sum_a w_a * s_a + 0.1 * stars),
- `dense`: `baselines.toolkit.dense` (all-MiniLM-L6-v2 with the rejection shift),
- `stars_price` ("structured attributes (stars + price)"; our definition): POIs within the stated price
  ceiling first (`baselines.toolkit.state`: the latest budget word of `constants.PRICE_KEYWORDS`; unknown price
  counts as within), then stars descending, then price ascending (unknown last), then review_count
  descending, then business_id.
When the dense model cannot be loaded (`use_dense=None`, the default) the fusion is 3-way; the rankers
actually used are in the run configuration (`rankers`). `use_dense=True` makes that an error instead,
`use_dense=False` always fuses three. Fused scores are rounded to 12 decimals so that equal rank
combinations tie exactly (float addition order cannot break the tie); ties go by business_id.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from baselines.base import DEFAULT_BATCH_SIZE, RankingPipeline, rank_by_score
from baselines.toolkit.aspect import AspectIndex, query_aspect_weights
from baselines.toolkit.dense import (
    DEFAULT_PRECISION,
    DEFAULT_QUERY_MODE,
    HUB_MODEL_ID,
    QUERY_MODES,
    DenseIndex,
    DenseUnavailable,
    check_precision,
    with_precision_variant,
)
from baselines.toolkit.output import TurnOutput
from baselines.toolkit.text import user_turns
from baselines.toolkit.tfidf import TfidfScorer
from trace_dataset.records import Poi

if TYPE_CHECKING:
    from trace_dataset.kb.store import KnowledgeBase

log = logging.getLogger(__name__)

RRF_K = 60
FUSED_DECIMALS = 12
ALL_RANKERS: tuple[str, ...] = ("tfidf", "aspect", "dense", "stars_price")


def rrf_fuse(
    rankings: Mapping[str, Sequence[str]] | Sequence[Sequence[str]], k: int = RRF_K
) -> dict[str, float]:
    """sum over rankings of 1 / (k + rank), rank 1-based; an id missing from a ranking gets nothing from it."""
    lists = rankings.values() if isinstance(rankings, Mapping) else rankings
    fused: dict[str, float] = {}
    for ranking in lists:
        for rank, pid in enumerate(ranking, start=1):
            fused[pid] = fused.get(pid, 0.0) + 1.0 / (k + rank)
    return {pid: round(v, FUSED_DECIMALS) for pid, v in fused.items()}


def stars_price_key(poi: Poi, price_ceiling: int | None) -> tuple[int, float, int, int, str]:
    """Sort key (ascending = better): over budget, -stars, price (unknown = 5), -review_count, id."""
    over = int(price_ceiling is not None and poi.price is not None and poi.price > price_ceiling)
    price = poi.price if poi.price is not None else 5
    return (over, -poi.stars, price, -poi.review_count, poi.business_id)


def stars_price_ranking(pois: Sequence[Poi], price_ceiling: int | None) -> list[str]:
    return [p.business_id for p in sorted(pois, key=lambda p: stars_price_key(p, price_ceiling))]


class HybridRRFBaseline(RankingPipeline):
    """RRF (k = 60) over TF-IDF, Aspect, Dense and stars+price; 3-way without dense (module docstring)."""

    name: ClassVar[str] = "hybrid_rrf"
    config_keys: ClassVar[tuple[str, ...]] = ("k", "use_dense", "rankers", "model", "query_mode", "precision")

    def __init__(
        self,
        kb: KnowledgeBase,
        batch_size: int = DEFAULT_BATCH_SIZE,
        *,
        k: int = RRF_K,
        use_dense: bool | None = None,
        model: str = HUB_MODEL_ID,
        query_mode: str = DEFAULT_QUERY_MODE,
        device: str | None = "cpu",
        cache_dir: str | os.PathLike | None = None,
        query_cache: bool = True,
        precision: str = DEFAULT_PRECISION,
        dense_index: DenseIndex | None = None,
        **params: Any,
    ):
        super().__init__(kb, batch_size, **params)
        if not isinstance(k, int) or k < 0:
            raise ValueError(f"k must be a non-negative integer, got {k!r}")
        if use_dense not in (None, True, False):
            raise ValueError(f"use_dense must be None (auto), True or False, got {use_dense!r}")
        if query_mode not in QUERY_MODES:
            raise ValueError(f"unknown query_mode {query_mode!r}; expected one of {QUERY_MODES}")
        self.k = k
        self.use_dense = use_dense
        self.model = dense_index.model if dense_index is not None else model
        self.query_mode = query_mode
        self.precision = check_precision(dense_index.precision if dense_index is not None else precision)
        self.tfidf = TfidfScorer(kb)
        self.aspects = AspectIndex(kb)
        self.dense: DenseIndex | None = dense_index
        self.dense_error: str | None = None
        if self.dense is None and use_dense is not False:
            try:
                self.dense = DenseIndex(
                    kb, model, device, cache_dir, batch_size, query_cache=query_cache, precision=precision
                )
            except DenseUnavailable as e:
                if use_dense:
                    raise
                self.dense_error = str(e)
                log.warning("hybrid_rrf: dense ranker unavailable, fusing 3 rankers (%s)", e)
        if use_dense is False:
            self.dense = None
        self.rankers: tuple[str, ...] = tuple(
            r for r in ALL_RANKERS if r != "dense" or self.dense is not None
        )

    def describe(self) -> dict[str, Any]:
        """The row label names a precision other than fp32 when the dense ranker is fused."""
        described = super().describe()
        return with_precision_variant(described, self.precision) if self.dense is not None else described

    def get_config_dict(self) -> dict[str, Any]:
        config = super().get_config_dict()
        if self.dense_error:
            config["dense_unavailable"] = self.dense_error
        return config

    def _forward(self, inputs: list[dict[str, Any]]) -> list[TurnOutput]:
        if self.dense is not None:
            todo = [inp for inp in inputs if inp["action"] != "farewell" and inp["candidates"]]
            vectors = self.dense.query_vectors([user_turns(inp["history"]) for inp in todo], self.query_mode)
            for inp, vec in zip(todo, vectors, strict=True):
                inp["query_embedding"] = vec
        if "tfidf" in self.rankers:
            self.tfidf.prefetch(inputs)  # the batch's turns scored together; `rankings` reads them
        for inp in inputs:  # computed once per turn; score and meta read them
            if inp["action"] != "farewell" and inp["candidates"]:
                inp["rankings"] = self.rankings(inp)
        return super()._forward(inputs)

    def rankings(self, inp: Mapping[str, Any]) -> dict[str, list[str]]:
        """Each ranker's ranking of the usable candidates, best first."""
        candidates = inp["candidates"]
        out: dict[str, list[str]] = {}
        for ranker in self.rankers:
            if ranker == "tfidf":
                scores: Mapping[str, float] = self.tfidf.scores(inp["query"], candidates)
            elif ranker == "aspect":
                scores = self.aspects.scores(query_aspect_weights(user_turns(inp["history"])), candidates)
            elif ranker == "dense":
                if self.dense is None:
                    raise RuntimeError("hybrid_rrf: the dense ranker is listed but no dense index was loaded")
                query = inp.get("query_embedding")
                if query is None:
                    query = self.dense.query_vectors([user_turns(inp["history"])], self.query_mode)[0]
                scores = self.dense.scores(query, candidates, inp["state"].rejected_poi_ids)
            elif ranker == "stars_price":
                out[ranker] = stars_price_ranking(
                    [self.kb.pois[p] for p in candidates], inp["state"].price_ceiling
                )
                continue
            else:
                raise ValueError(f"unknown ranker {ranker!r}; expected one of {ALL_RANKERS}")
            out[ranker] = rank_by_score(candidates, scores)
        return out

    def score(self, inp: Mapping[str, Any]) -> dict[str, float]:
        rankings = inp.get("rankings") or self.rankings(inp)
        return rrf_fuse(rankings, self.k)

    def meta(self, inp: Mapping[str, Any], ranked: list[str]) -> dict[str, Any]:
        """The fused top POI's rank under each ranker."""
        rankings = inp.get("rankings")
        if not ranked or not rankings:
            return {}
        top = ranked[0]
        return {"top_ranks": {name: r.index(top) + 1 for name, r in rankings.items()}}
