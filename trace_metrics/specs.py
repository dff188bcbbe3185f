"""The registry of Trace's metrics: one small declaration per canonical id (STYLE 1, 2).

The ids are the keys of results files, leaderboard columns and the Space; display labels live at the UI edge
(spaces_app.columns). Implementations are the plain functions of `trace_metrics.lib`; the `evaluate` modules,
the CLI and the Space only adapt them. `level` says what one item is: a recommend/compare turn, any system
turn, a dialogue, a rejection episode, or an annotated item (human evaluation).

How a value aggregates its items: a metric without `components` is the mean of its items' values (items
where it is undefined left out); a metric with `components` (`cgs`, `cgs_ent`) is the CGS formula applied to
the means of its three components, in order (GS or entailment, CD, PC), as the paper's Tables 5, 22 and 26
aggregate. `trace_metrics.lib.intervals` bootstraps exactly these statistics.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

Family = Literal["accuracy", "text", "grounding", "practical", "recovery", "judge", "human"]
Level = Literal["recommendation_turn", "system_turn", "dialogue", "rejection_episode", "human_item"]


@dataclass(frozen=True)
class MetricSpec:
    id: str
    family: Family
    module: str  # the evaluate module (trace_metrics/<module>/) that reports it
    higher_is_better: bool
    range: tuple[float, float | None]  # (low, high); high None = unbounded
    level: Level
    description: str
    paper: str  # where the paper defines or reports it
    parameters: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    novel: bool = False  # marked novel (star) in the paper's Table 7
    components: tuple[str, ...] = ()  # (GS-like, CD, PC): the CGS formula of these means, not an item mean

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "family": self.family,
            "module": self.module,
            "higher_is_better": self.higher_is_better,
            "range": list(self.range),
            "level": self.level,
            "description": self.description,
            "paper": self.paper,
            "parameters": dict(self.parameters),
            "novel": self.novel,
            "components": list(self.components),
        }


def _p(**kw: Any) -> MappingProxyType:
    return MappingProxyType(kw)


_GROUNDING = _p(fuzzy_threshold=0.8, cd_gate=0.05, pc_window=80)
_R = "recommendation_turn"

_SPECS: tuple[MetricSpec, ...] = (
    # -- accuracy (App. J "Recommendation Quality", App. S) --------------------------------------------
    MetricSpec(
        "recall@1",
        "accuracy",
        "accuracy",
        True,
        (0.0, 1.0),
        _R,
        "|gold ∩ top-1| / |gold|",
        "Table 7; App. J; Table 5",
        _p(k=1),
    ),
    MetricSpec(
        "recall@3",
        "accuracy",
        "accuracy",
        True,
        (0.0, 1.0),
        _R,
        "|gold ∩ top-3| / |gold|",
        "Table 7; App. J; Table 5",
        _p(k=3),
    ),
    MetricSpec(
        "mrr",
        "accuracy",
        "accuracy",
        True,
        (0.0, 1.0),
        _R,
        "1 / rank of the first gold POI (0 if none is ranked)",
        "Table 7; App. J; Table 5",
    ),
    MetricSpec(
        "hit@1",
        "accuracy",
        "accuracy",
        True,
        (0.0, 1.0),
        _R,
        "1 if a gold POI is ranked first",
        "App. J",
        _p(k=1),
    ),
    MetricSpec(
        "hit@3",
        "accuracy",
        "accuracy",
        True,
        (0.0, 1.0),
        _R,
        "1 if a gold POI is in the top 3",
        "App. J",
        _p(k=3),
    ),
    MetricSpec(
        "hit@5",
        "accuracy",
        "accuracy",
        True,
        (0.0, 1.0),
        _R,
        "1 if a gold POI is in the top 5",
        "App. J",
        _p(k=5),
    ),
    MetricSpec(
        "mr_recall@1",
        "accuracy",
        "accuracy",
        True,
        (0.0, 1.0),
        _R,
        "Recall@1 counting an acceptable alternative in the top 1 as a hit",
        "App. S; Table 27",
        _p(k=1),
    ),
    MetricSpec(
        "mr_recall@3",
        "accuracy",
        "accuracy",
        True,
        (0.0, 1.0),
        _R,
        "Recall@3 counting an acceptable alternative in the top 3 as a hit",
        "App. S; Table 27",
        _p(k=3),
    ),
    # -- text quality (App. J "Text Quality") -----------------------------------------------------------
    MetricSpec(
        "bleu4",
        "text",
        "text",
        True,
        (0.0, 1.0),
        "system_turn",
        "sentence BLEU-4, nltk smoothing method1 (Chen & Cherry), vs the reference response",
        "Table 7; App. J; Table 5, 20",
        _p(max_order=4, smoothing="method1", epsilon=0.1),
    ),
    MetricSpec(
        "rouge_l",
        "text",
        "text",
        True,
        (0.0, 1.0),
        "system_turn",
        "ROUGE-L F1 (rouge-score, no stemming) vs the reference response",
        "Table 7; App. J; Table 5",
        _p(use_stemmer=False),
    ),
    # -- grounding (§3, App. J Algorithm 1, App. L) ----------------------------------------------------
    MetricSpec(
        "grounding_score",
        "grounding",
        "grounding",
        True,
        (0.0, 1.0),
        _R,
        "share of quotes with rapidfuzz partial_ratio >= 0.8 against the cited reviews (1 if no quote)",
        "§3; Table 7; Tables 6, 16, 17",
        _p(fuzzy_threshold=0.8),
        novel=True,
    ),
    MetricSpec(
        "citation_density",
        "grounding",
        "grounding",
        True,
        (0.0, 1.0),
        _R,
        "word tokens inside verbatim quotes / response word tokens",
        "§3; Table 7; Tables 5, 19, 20",
        novel=True,
    ),
    MetricSpec(
        "provenance_coverage",
        "grounding",
        "grounding",
        True,
        (0.0, 1.0),
        _R,
        "share of aspect-term mentions with a [Rn] label within 80 characters (1 if none)",
        "App. J Algorithm 1; Table 6",
        _p(pc_window=80),
        novel=True,
    ),
    MetricSpec(
        "cgs",
        "grounding",
        "grounding",
        True,
        (0.0, 1.0),
        _R,
        "GS x min(1, CD/0.05) x (0.5 + 0.5 PC) applied to the GS, CD and PC means (the tables' aggregation)",
        "§3; App. L; Tables 5, 22, 26",
        _GROUNDING,
        novel=True,
        components=("grounding_score", "citation_density", "provenance_coverage"),
    ),
    MetricSpec(
        "cgs_turn_mean",
        "grounding",
        "grounding",
        True,
        (0.0, 1.0),
        _R,
        "mean over turns of each turn's GS x min(1, CD/0.05) x (0.5 + 0.5 PC)",
        "§3 (per-response definition); App. L",
        _GROUNDING,
        novel=True,
    ),
    MetricSpec(
        "entailment",
        "grounding",
        "entailment",
        True,
        (0.0, 1.0),
        _R,
        "share of response sentences entailed (NLI prob >= 0.5) by a cited review",
        "§3; App. L; Tables 6, 17",
        _p(model="cross-encoder/nli-deberta-v3-base", threshold=0.5),
        novel=True,
    ),
    MetricSpec(
        "cgs_ent",
        "grounding",
        "entailment",
        True,
        (0.0, 1.0),
        _R,
        "Entail x min(1, CD/0.05) x (0.5 + 0.5 PC) applied to the entailment, CD and PC means (Table 22)",
        "App. L; Table 22",
        _p(cd_gate=0.05, pc_window=80, threshold=0.5),
        novel=True,
        components=("entailment", "citation_density", "provenance_coverage"),
    ),
    MetricSpec(
        "cgs_ent_turn_mean",
        "grounding",
        "entailment",
        True,
        (0.0, 1.0),
        _R,
        "mean over turns of each turn's Entail x min(1, CD/0.05) x (0.5 + 0.5 PC)",
        "App. L",
        _p(cd_gate=0.05, pc_window=80, threshold=0.5),
        novel=True,
    ),
    # -- practical value (§3, App. E, App. L) -----------------------------------------------------------
    MetricSpec(
        "spatial_coherence@2km",
        "practical",
        "practical",
        True,
        (0.0, 1.0),
        "dialogue",
        "share of recommended POI pairs within 2 km (haversine)",
        "§3; Table 9, 18",
        _p(radius_km=2.0),
        novel=True,
    ),
    MetricSpec(
        "route_efficiency_km",
        "practical",
        "practical",
        False,
        (0.0, None),
        "dialogue",
        "nearest-neighbour path length (km) over the recommended POIs",
        "Table 7",
        novel=True,
    ),
    MetricSpec(
        "price_alignment",
        "practical",
        "practical",
        True,
        (0.0, 1.0),
        "dialogue",
        "share of recommended POIs within the user's stated budget (dialogues stating one)",
        "§3; Table 9",
        novel=True,
    ),
    MetricSpec(
        "itinerary_diversity",
        "practical",
        "practical",
        True,
        (1.0 / 3.0, 1.0),
        "dialogue",
        "distinct POI types of the recommended POIs / 3",
        "Table 7; Table 9",
        novel=True,
    ),
    # -- recovery (App. J "Dialogue", App. N) -----------------------------------------------------------
    MetricSpec(
        "tsr",
        "recovery",
        "recovery",
        True,
        (0.0, 1.0),
        "dialogue",
        "1 if any recommend/compare turn has a gold POI at top-1",
        "Table 7; App. J; Table 5",
    ),
    MetricSpec(
        "t2r",
        "recovery",
        "recovery",
        False,
        (1.0, None),
        "dialogue",
        "recommend/compare turns until the first top-1 gold hit (successful dialogues)",
        "Table 7; App. J; Table 5",
    ),
    MetricSpec(
        "rejection_recovery",
        "recovery",
        "recovery",
        True,
        (0.0, 1.0),
        "rejection_episode",
        "share of reject_and_refine episodes whose next recommend/compare turn hits gold at top-1",
        "App. J; App. N; Table 6",
        novel=True,
    ),
    # -- LLM judge (App. J, App. T, U) ------------------------------------------------------------------
    MetricSpec(
        "judge_relevance",
        "judge",
        "llm_judge",
        True,
        (1.0, 5.0),
        _R,
        "does the response address the user's need? (1-5)",
        "App. J; Table 29",
    ),
    MetricSpec(
        "judge_informativeness",
        "judge",
        "llm_judge",
        True,
        (1.0, 5.0),
        _R,
        "specific and actionable? (1-5)",
        "App. J; Table 29",
    ),
    MetricSpec(
        "judge_grounding",
        "judge",
        "llm_judge",
        True,
        (1.0, 5.0),
        _R,
        "claims supported by evidence? (1-5)",
        "App. J; Table 29",
        novel=True,
    ),
    MetricSpec(
        "judge_flow",
        "judge",
        "llm_judge",
        True,
        (1.0, 5.0),
        _R,
        "conversational naturalness (1-5)",
        "App. J; Table 29",
    ),
    MetricSpec(
        "judge_justification",
        "judge",
        "llm_judge",
        True,
        (1.0, 5.0),
        _R,
        "well-reasoned recommendation explanations? (1-5)",
        "App. J; Table 29",
        novel=True,
    ),
    # -- human evaluation (App. K) ----------------------------------------------------------------------
    MetricSpec(
        "human_citation_precision",
        "human",
        "human",
        True,
        (0.0, 1.0),
        "human_item",
        "share of quotes whose majority label is Supported",
        "§7.1; App. K; Table 10",
        novel=True,
    ),
    MetricSpec(
        "human_informativeness",
        "human",
        "human",
        True,
        (1.0, 5.0),
        "human_item",
        "annotators' Likert mean: useful and specific (1-5)",
        "App. K; Table 10",
    ),
    MetricSpec(
        "human_naturalness",
        "human",
        "human",
        True,
        (1.0, 5.0),
        "human_item",
        "annotators' Likert mean: conversational quality (1-5)",
        "App. K; Table 10",
    ),
)

METRICS: MappingProxyType = MappingProxyType({s.id: s for s in _SPECS})
METRIC_IDS: tuple[str, ...] = tuple(METRICS)
# the ids a run without NLI model, judge or annotations produces (trace_suite)
CORE_METRIC_IDS: tuple[str, ...] = tuple(
    s.id for s in _SPECS if s.module in ("accuracy", "text", "grounding", "practical", "recovery")
)


def spec(metric_id: str) -> MetricSpec:
    """The spec of a metric id; a parametrised id (`spatial_coherence@1.5km`) gets its family's spec."""
    try:
        return METRICS[metric_id]
    except KeyError:
        if metric_id.startswith("spatial_coherence@") and metric_id.endswith("km"):
            return METRICS["spatial_coherence@2km"]
        raise KeyError(f"unknown metric id {metric_id!r}; expected one of {METRIC_IDS}") from None


def by_family(family: str) -> tuple[MetricSpec, ...]:
    return tuple(s for s in _SPECS if s.family == family)


def by_module(module: str) -> tuple[MetricSpec, ...]:
    return tuple(s for s in _SPECS if s.module == module)
