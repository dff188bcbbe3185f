"""The pipeline contract every Trace baseline follows (transformers-pipeline shape).

    rows (turns config) --preprocess--> inputs --_forward (batched)--> outputs --postprocess--> predictions

`TracePipeline` validates rows, reads the dialogue state and the pool, batches, and returns one
`trace_dataset.prediction.Prediction` per row; a baseline implements `_forward`, which returns one
`baselines.toolkit.output.TurnOutput` per input, built with `turn_output` (the record and its scores). `RankingPipeline` is the template for the non-LLM baselines:
they implement `score` (and optionally `respond` / `meta`); ranking, tie-breaking, rejection exclusion and
template responses with verbatim quotes come from here. LLM baselines subclass `TracePipeline` directly,
batch their generation in `_forward`, put raw output in `meta`, and keep their model in `self.llm`, whose
`describe()` lands in `get_config_dict()`.

Session isolation: a pipeline keeps only knowledge-base-derived caches (indices, quote spans); everything a
turn needs comes from its row and the knowledge base, so the order rows arrive in changes nothing.

Ties: a `_forward` output may carry `scores` ({business_id: score}, numbers or tuples compared as the ranking
compares them) so that an evaluator which breaks ties at random (SnipRec's protocol, §5.1; the live turn
metrics, `trace_metrics.lib.interactive`) knows which ranked POIs the system could not tell apart. Predictions
never hold them; a caller that sets `record_scores = {}` on the pipeline finds each turn's scores there, keyed
by (dialogue_id, turn_id), after the call.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from baselines.identity import BY_NAME
from baselines.toolkit.output import TurnOutput, turn_output
from baselines.toolkit.responses import EvidenceIndex, Response, turn_response
from baselines.toolkit.state import DialogueState, dialogue_state
from baselines.toolkit.text import query_terms, user_query
from trace_dataset.constants import POOLS, REVIEWS_FILE, SYSTEM_ACTIONS
from trace_dataset.io import TraceDataError
from trace_dataset.prediction import Prediction

if TYPE_CHECKING:
    import datasets

    from trace_dataset.kb.store import KnowledgeBase

log = logging.getLogger(__name__)

DEFAULT_BATCH_SIZE = 64
# Scores computed in floating point (embedding cosines, weighted sums) are rounded to this many decimals before
# ranking, so that bits that depend on batching or summation order cannot reorder two equal candidates.
SCORE_DECIMALS = 6
# Fields of schema.TURN_ROW_FEATURES a pipeline reads; the rest (gold, reference) it must never use.
REQUIRED_ROW_FIELDS: tuple[str, ...] = (
    "dialogue_id",
    "turn_id",
    "action",
    "scenario",
    "history",
    "candidate_poi_ids",
    "rejected_poi_ids",
)


def batched(items: Iterable[Any], n: int) -> Iterator[list[Any]]:
    it = iter(items)
    while chunk := list(itertools.islice(it, n)):
        yield chunk


def add_count(meta: dict[str, Any], key: str, n: int = 1) -> None:
    """Per-row counters in `meta.counts`, which `trace-bench run` sums into the run's `summary.rows` (the fallback
    report reads them)."""
    if n:
        counts = meta.setdefault("counts", {})
        counts[key] = counts.get(key, 0) + n


def rank_by_score(candidates: Sequence[str], scores: Mapping[str, Any]) -> list[str]:
    """Candidates by descending score; equal scores in ascending business_id order (deterministic).

    Scores may be numbers or tuples (compared element-wise, e.g. Popularity's (stars, review_count)).
    """
    return sorted(sorted(candidates), key=lambda pid: scores[pid], reverse=True)


class TracePipeline:
    """Base of every baseline: preprocess -> batched _forward -> postprocess, by name via the registry."""

    name: ClassVar[str] = ""
    config_keys: ClassVar[tuple[str, ...]] = ()  # constructor parameters saved in run metadata
    needs_review_text: ClassVar[bool] = True
    # (dialogue_id, turn_id) -> the scores behind that turn's ranking (None when the output gave none), filled
    # by __call__ when a caller sets it to a dict (module docstring, "Ties"); None: not recorded.
    record_scores: dict[tuple[str, int], Mapping[str, Any] | None] | None = None

    @property
    def family(self) -> str:
        """ "non-LLM" | "LLM": the baseline's record in `baselines.identity` ("non-LLM" for a pipeline that is
        not registered, such as a user's own class, which may set the attribute itself)."""
        found = BY_NAME.get(self.name)
        return found.family if found is not None else "non-LLM"

    @property
    def session_isolated(self) -> bool:
        """False for a system that carries state across dialogues (Memory-Aug.): the paper reports it apart
        from the session-isolated rows, and so do the leaderboard tables. From `baselines.identity`, as
        `family`."""
        found = BY_NAME.get(self.name)
        return found.session_isolated if found is not None else True

    def __init__(self, kb: KnowledgeBase, batch_size: int = DEFAULT_BATCH_SIZE, **params: Any):
        if params:
            raise TypeError(
                f"{type(self).__name__} got unknown parameter(s) {sorted(params)}; expected {list(self.config_keys)}"
            )
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        if self.needs_review_text and not kb.has_text:
            raise TraceDataError(
                f"the {self.name or type(self).__name__} baseline needs review texts, but this knowledge base has "
                f"none ({REVIEWS_FILE} missing or incomplete); hydrate the release first "
                "(trace-bench corpus hydrate) or build the knowledge base from a Yelp bundle",
                path=kb.root,
            )
        self.kb = kb
        self.batch_size = batch_size

    # -- the three stages ------------------------------------------------------------------------
    def preprocess(self, row: Mapping[str, Any]) -> dict[str, Any]:
        """One `turns` row -> model input: the query, the dialogue state and the usable candidates.

        Candidates keep the pool's order minus rejected POIs (duplicates dropped); gold fields are not read.
        """
        missing = [k for k in REQUIRED_ROW_FIELDS if k not in row]
        where = f"turn row {row.get('dialogue_id', '?')}/{row.get('turn_id', '?')}"
        if missing:
            raise TraceDataError(
                f"{where}: missing field(s) {missing}; expected the fields of schema.TURN_ROW_FEATURES"
            )
        action = row["action"]
        if action not in SYSTEM_ACTIONS:
            raise TraceDataError(
                f"{where}: unknown system action {action!r}; expected one of {SYSTEM_ACTIONS}"
            )
        pool = row.get("pool", "closed")
        if pool not in POOLS:
            raise TraceDataError(f"{where}: unknown pool {pool!r}; expected one of {POOLS}")
        pool_ids = list(dict.fromkeys(row["candidate_poi_ids"]))
        unknown = [pid for pid in pool_ids if pid not in self.kb.pois]
        if unknown:
            raise TraceDataError(
                f"{where}: candidate POI(s) {unknown[:3]} not in the knowledge base {self.kb.root} "
                f"({len(unknown)} unknown); was the corpus built from another knowledge base?"
            )
        scenario = row["scenario"]
        names = {pid: self.kb.pois[pid].name for pid in pool_ids}
        state = dialogue_state(row, names)
        rejected = set(state.rejected_poi_ids)
        query = user_query(row["history"])
        return {
            "dialogue_id": row["dialogue_id"],
            "turn_id": int(row["turn_id"]),
            "action": action,
            "pool": pool,
            "city": scenario["city"],
            "poi_type": scenario["poi_type"],
            "scenario": scenario,
            "history": row["history"],
            "query": query,
            "terms": query_terms(query),
            "state": state,
            "pool_size": len(pool_ids),
            "candidates": [pid for pid in pool_ids if pid not in rejected],
        }

    def _forward(self, inputs: list[dict[str, Any]]) -> list[TurnOutput]:
        """Batched: rank (and, for LLM baselines, generate) for every input; one output per input
        (`baselines.toolkit.output.turn_output`)."""
        raise NotImplementedError(f"{type(self).__name__} must implement _forward")

    def postprocess(self, output: TurnOutput) -> Prediction:
        """-> the turn's prediction record (dialogue_id, turn_id, ranked_poi_ids, response, citations, meta)."""
        return output.prediction

    def __call__(
        self, rows: datasets.Dataset | Iterable[Mapping[str, Any]], batch_size: int | None = None
    ) -> Iterator[Prediction]:
        """Predictions for `rows` (a `turns` Dataset or any iterable of turn rows), in row order."""
        size = self.batch_size if batch_size is None else batch_size
        if not isinstance(size, int) or size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {size!r}")
        for chunk in batched(rows, size):
            inputs = [self.preprocess(row) for row in chunk]
            outputs = self._forward(inputs)
            if len(outputs) != len(inputs):
                raise RuntimeError(
                    f"{type(self).__name__}._forward returned {len(outputs)} outputs for {len(inputs)} inputs"
                )
            for output in outputs:
                if self.record_scores is not None:
                    p = output.prediction
                    self.record_scores[(p.dialogue_id, p.turn_id)] = output.scores
                yield self.postprocess(output)

    # -- configuration -----------------------------------------------------------------------------
    def summary(self) -> dict[str, Any]:
        """Counters of this process's work so far (numbers, possibly nested), e.g. an LLM's usage; the runner
        sums them over worker processes into the run metadata's `summary`. None by default."""
        return {}

    def get_config_dict(self) -> dict[str, Any]:
        """Constructor parameters (config_keys) as JSON values; with an LLM, its describe() under "llm"."""
        config = {key: _jsonable(getattr(self, key)) for key in self.config_keys}
        llm = getattr(self, "llm", None)
        if llm is not None:
            config["llm"] = llm.describe()
        return config

    def describe(self) -> dict[str, Any]:
        """What run metadata records about the pipeline."""
        return {
            "baseline": self.name,
            "family": self.family,
            "session_isolated": self.session_isolated,
            "class": f"{type(self).__module__}.{type(self).__qualname__}",
            "parameters": self.get_config_dict(),
        }

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_config_dict().items())
        return f"{type(self).__name__}({params})"


def _jsonable(value: Any) -> Any:
    if isinstance(value, (tuple, list)):
        return [_jsonable(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return value


class RankingPipeline(TracePipeline):
    """Template for the non-LLM baselines: implement `score`; ranking and the response come from here.

    `_forward` ranks the usable candidates by `score` (ties by business_id), answers with the shared
    template of `baselines.toolkit.responses` (quotes verbatim spans chosen for the query) and returns no ranking
    on farewell turns (the dialogue is over; metrics read rankings of recommend/compare turns only).
    """

    def __init__(self, kb: KnowledgeBase, batch_size: int = DEFAULT_BATCH_SIZE, **params: Any):
        super().__init__(kb, batch_size, **params)
        self.evidence = EvidenceIndex(kb)

    def score(self, inp: Mapping[str, Any]) -> Mapping[str, Any]:
        """candidate id -> score (higher is better) for every id in inp["candidates"]."""
        raise NotImplementedError(f"{type(self).__name__} must implement score")

    def rank(self, inp: Mapping[str, Any]) -> list[str]:
        return self.rank_with_scores(inp)[0]

    def rank_with_scores(self, inp: Mapping[str, Any]) -> tuple[list[str], Mapping[str, Any]]:
        """(the ranking, the scores it sorts by); both empty without candidates."""
        candidates = inp["candidates"]
        if not candidates:
            return [], {}
        scores = self.score(inp)
        return rank_by_score(candidates, scores), scores

    def respond(self, inp: Mapping[str, Any], ranked: list[str]) -> Response:
        return turn_response(inp, ranked, kb=self.kb, evidence=self.evidence, notes=self.notes(inp, ranked))

    def notes(self, inp: Mapping[str, Any], ranked: list[str]) -> dict[str, str]:
        """Short annotations after POI names in the response (none by default)."""
        return {}

    def meta(self, inp: Mapping[str, Any], ranked: list[str]) -> dict[str, Any]:
        """Free-form per-turn details for the prediction's `meta` (ignored by metrics)."""
        return {}

    def _forward(self, inputs: list[dict[str, Any]]) -> list[TurnOutput]:
        outputs = []
        for inp in inputs:
            ranked, scores = ([], {}) if inp["action"] == "farewell" else self.rank_with_scores(inp)
            response = self.respond(inp, ranked)
            outputs.append(
                turn_output(inp, ranked, response.text, response.citations, self.meta(inp, ranked), scores)
            )
        return outputs


__all__ = [
    "DialogueState",
    "Prediction",
    "RankingPipeline",
    "TracePipeline",
    "TurnOutput",
    "batched",
    "rank_by_score",
    "turn_output",
]
