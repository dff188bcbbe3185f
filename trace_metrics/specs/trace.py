"""The declarations of Trace's metrics (benchmark "trace": `trace-bench evaluate`, the leaderboard, and the
Trace metrics of live turns), in results order."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from trace_metrics.lib import benchmark_items, items
from trace_metrics.lib.practical import spatial_id
from trace_metrics.lib.text import BLEU_EPSILON, BLEU_MAX_ORDER
from trace_metrics.specs.metric import MetricSpec


def _trace(**kw: Any) -> MetricSpec:
    return MetricSpec(benchmark="trace", **kw)


_UNIT, _LIKERT = (0.0, 1.0), (1.0, 5.0)
_REC, _GROUNDED = "recommendation_turn", "grounded_turn"
_GS_CD_PC = ("grounding_score", "citation_density", "provenance_coverage")


def _accuracy(
    id: str, label: str, item: Callable, description: str, paper: str, **arguments: Any
) -> MetricSpec:
    return _trace(
        id=id,
        label=label,
        family="accuracy",
        module="accuracy",
        higher_is_better=True,
        range=_UNIT,
        level=_REC,
        description=description,
        paper=paper,
        item=item,
        arguments=arguments,
    )


def _judge(scale: str, label: str, description: str, novel: bool = False) -> MetricSpec:
    return _trace(
        id=f"judge_{scale}",
        label=label,  # its axis, "Judge", says it is the judge's
        family="judge",
        module="llm_judge",
        higher_is_better=True,
        range=_LIKERT,
        level=_REC,
        description=description,
        paper="App. J; Table 29",
        item=items.judge_rating,
        arguments={"scale": scale},
        needs="judge",
        novel=novel,
    )


# The order is the order of every results file's values: recommend/compare turns (accuracy, grounding,
# entailment, judge), then system turns, dialogues, rejection episodes.
TRACE_SPECS: tuple[MetricSpec, ...] = (
    # -- accuracy (App. J "Recommendation Quality", App. S) --------------------------------------------
    _accuracy(
        "recall@1", "R@1", items.recall_at_k, "|gold ∩ top-1| / |gold|", "Table 7; App. J; Table 5", k=1
    ),
    _accuracy(
        "recall@3", "R@3", items.recall_at_k, "|gold ∩ top-3| / |gold|", "Table 7; App. J; Table 5", k=3
    ),
    _accuracy(
        "mrr",
        "MRR",
        items.reciprocal_rank,
        "1 / rank of the first gold POI in the ranked list (0 if none is ranked)",
        "Table 7; App. J; Table 5",
    ),
    _accuracy("hit@1", "Hit@1", items.hit_at_k, "1 if a gold POI is ranked first", "App. J", k=1),
    _accuracy("hit@3", "Hit@3", items.hit_at_k, "1 if a gold POI is in the top 3", "App. J", k=3),
    _accuracy("hit@5", "Hit@5", items.hit_at_k, "1 if a gold POI is in the top 5", "App. J", k=5),
    _accuracy(
        "mr_recall@1",
        "MR-R@1",
        items.mr_recall_at_k,
        "Recall@1 counting an acceptable alternative in the top 1 as a hit",
        "App. S; Table 27",
        k=1,
    ),
    _accuracy(
        "mr_recall@3",
        "MR-R@3",
        items.mr_recall_at_k,
        "Recall@3 counting an acceptable alternative in the top 3 as a hit",
        "App. S; Table 27",
        k=3,
    ),
    # -- grounding (§3, App. J Algorithm 1, App. L) ----------------------------------------------------
    _trace(
        id="grounding_score",
        label="GS",
        family="grounding",
        module="grounding",
        higher_is_better=True,
        range=_UNIT,
        level=_GROUNDED,
        item=items.grounding_score,
        novel=True,
        paper="§3; Table 7; Tables 6, 16, 17",
        description="share of quotes whose rapidfuzz partial_ratio against the cited reviews reaches the "
        "fuzzy threshold (1 if no quote)",
    ),
    _trace(
        id="citation_density",
        label="CD",
        family="grounding",
        module="grounding",
        higher_is_better=True,
        range=_UNIT,
        level=_GROUNDED,
        item=items.citation_density,
        novel=True,
        paper="§3; Table 7; Tables 5, 19, 20",
        description="word tokens inside verbatim quotes / response word tokens",
    ),
    _trace(
        id="provenance_coverage",
        label="PC",
        family="grounding",
        module="grounding",
        higher_is_better=True,
        range=_UNIT,
        level=_GROUNDED,
        item=items.provenance_coverage,
        novel=True,
        paper="App. J Algorithm 1; Table 6",
        description="share of aspect-term mentions with a [Rn] label within the PC window (1 if none)",
    ),
    _trace(
        id="cgs",
        label="CGS",
        family="grounding",
        module="grounding",
        higher_is_better=True,
        range=_UNIT,
        level=_GROUNDED,
        components=_GS_CD_PC,
        aggregate=items.cgs_of_means,
        novel=True,
        paper="§3; App. L; Tables 5, 22, 26",
        description="GS x min(1, CD/gate) x (0.5 + 0.5 PC) applied to the GS, CD and PC means (the tables' "
        "aggregation)",
    ),
    _trace(
        id="cgs_turn_mean",
        label="CGS (turn mean)",
        family="grounding",
        module="grounding",
        higher_is_better=True,
        range=_UNIT,
        level=_GROUNDED,
        item=items.cgs,
        novel=True,
        paper="§3 (per-response definition); App. L",
        description="mean over turns of each turn's GS x min(1, CD/gate) x (0.5 + 0.5 PC)",
    ),
    _trace(
        id="entailment",
        label="NLI",
        family="grounding",
        module="entailment",
        higher_is_better=True,
        range=_UNIT,
        level=_GROUNDED,
        item=items.entailment,
        needs="nli",
        novel=True,
        settings=("nli_model", "nli_threshold"),
        paper="§3; App. L; Tables 6, 17",
        description="share of response sentences entailed (NLI probability >= the threshold) by a cited "
        "review",
    ),
    _trace(
        id="cgs_ent",
        label="CGS_ent",
        family="grounding",
        module="entailment",
        higher_is_better=True,
        range=_UNIT,
        level=_GROUNDED,
        components=("entailment", "citation_density", "provenance_coverage"),
        aggregate=items.cgs_of_means,
        needs="nli",
        novel=True,
        paper="App. L; Table 22",
        description="Entail x min(1, CD/gate) x (0.5 + 0.5 PC) applied to the entailment, CD and PC means "
        "(Table 22)",
    ),
    _trace(
        id="cgs_ent_turn_mean",
        label="CGS_ent (turn mean)",
        family="grounding",
        module="entailment",
        higher_is_better=True,
        range=_UNIT,
        level=_GROUNDED,
        item=items.cgs_ent,
        needs="nli",
        novel=True,
        settings=("nli_threshold",),
        paper="App. L",
        description="mean over turns of each turn's Entail x min(1, CD/gate) x (0.5 + 0.5 PC)",
    ),
    # -- LLM judge (App. J, App. T, U) ------------------------------------------------------------------
    _judge("relevance", "Relevance", "does the response address the user's need? (1-5)"),
    _judge("informativeness", "Informativeness", "specific and actionable? (1-5)"),
    _judge("grounding", "Grounding", "claims supported by evidence? (1-5)", novel=True),
    _judge("flow", "Flow", "conversational naturalness (1-5)"),
    _judge("justification", "Justification", "well-reasoned recommendation explanations? (1-5)", novel=True),
    # -- text quality (App. J "Text Quality") -----------------------------------------------------------
    _trace(
        id="bleu4",
        label="BLEU-4",
        family="text",
        module="text",
        higher_is_better=True,
        range=_UNIT,
        level="system_turn",
        item=items.bleu4,
        constants={"max_order": BLEU_MAX_ORDER, "epsilon": BLEU_EPSILON},
        paper="Table 7; App. J; Table 5, 20",
        description="sentence BLEU-4, nltk smoothing method1 (Chen & Cherry), vs the reference response",
    ),
    _trace(
        id="rouge_l",
        label="ROUGE-L",
        family="text",
        module="text",
        higher_is_better=True,
        range=_UNIT,
        level="system_turn",
        item=items.rouge_l,
        paper="Table 7; App. J; Table 5",
        description="ROUGE-L F1 (rouge-score) vs the reference response",
    ),
    # -- practical value (§3, App. E, App. L) -----------------------------------------------------------
    _trace(
        id="spatial_coherence@2km",
        label="Spatial Coh.",
        family="practical",
        module="practical",
        higher_is_better=True,
        range=_UNIT,
        level="dialogue",
        item=items.spatial_coherence,
        result_id=spatial_id,
        novel=True,
        paper="§3; Table 9, 18",
        description="share of recommended POI pairs within the radius (haversine)",
    ),
    _trace(
        id="route_efficiency_km",
        label="Route (km)",
        family="practical",
        module="practical",
        higher_is_better=False,
        range=(0.0, None),
        level="dialogue",
        item=items.route_efficiency_km,
        novel=True,
        paper="Table 7",
        description="nearest-neighbour path length (km) over the recommended POIs",
    ),
    _trace(
        id="price_alignment",
        label="Price Align.",
        family="practical",
        module="practical",
        higher_is_better=True,
        range=_UNIT,
        level="dialogue",
        item=items.price_alignment,
        novel=True,
        paper="§3; Table 9",
        description="share of recommended POIs within the user's stated budget (dialogues stating one)",
    ),
    _trace(
        id="itinerary_diversity",
        label="Itin. Div.",
        family="practical",
        module="practical",
        higher_is_better=True,
        range=(1.0 / 3.0, 1.0),
        level="dialogue",
        item=items.itinerary_diversity,
        novel=True,
        paper="Table 7; Table 9",
        description="distinct POI types of the recommended POIs / 3",
    ),
    # -- recovery (App. J "Dialogue", App. N) -----------------------------------------------------------
    _trace(
        id="tsr",
        label="TSR",
        family="recovery",
        module="recovery",
        higher_is_better=True,
        range=_UNIT,
        level="dialogue",
        item=items.task_success,
        paper="Table 7; App. J; Table 5",
        description="1 if a recommend/compare turn recommends a gold POI (top-1; top two of a compare turn)",
    ),
    _trace(
        id="t2r",
        label="T2R",
        family="recovery",
        module="recovery",
        higher_is_better=False,
        range=(1.0, None),
        level="dialogue",
        item=items.turns_to_first_hit,
        paper="Table 7; App. J; Table 5",
        description="recommend/compare turns until the first hit (successful dialogues)",
    ),
    _trace(
        id="rejection_recovery",
        label="Rej. Rec.",
        family="recovery",
        module="recovery",
        higher_is_better=True,
        range=_UNIT,
        level="rejection_episode",
        item=items.rejection_recovered,
        novel=True,
        paper="App. J; App. N; Table 6",
        description="share of reject_and_refine episodes whose next recommend/compare turn hits",
    ),
    # -- human evaluation (App. K) ----------------------------------------------------------------------
    _trace(
        id="human_citation_precision",
        label="Cit. Prec.",
        family="human",
        module="human",
        higher_is_better=True,
        range=_UNIT,
        level="human_quote",
        item=benchmark_items.quote_supported,
        novel=True,
        paper="§7.1; App. K; Table 10",
        description="share of quotes whose majority label is Supported",
    ),
    _trace(
        id="human_informativeness",
        label="Informativeness",
        family="human",
        module="human",
        higher_is_better=True,
        range=_LIKERT,
        level="human_item",
        item=benchmark_items.annotator_mean,
        arguments={"scale": "informativeness"},
        paper="App. K; Table 10",
        description="annotators' Likert mean: useful and specific (1-5)",
    ),
    _trace(
        id="human_naturalness",
        label="Naturalness",
        family="human",
        module="human",
        higher_is_better=True,
        range=_LIKERT,
        level="human_item",
        item=benchmark_items.annotator_mean,
        arguments={"scale": "naturalness"},
        paper="App. K; Table 10",
        description="annotators' Likert mean: conversational quality (1-5)",
    ),
)
