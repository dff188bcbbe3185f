"""What the Trace suite's metric declarations (`trace_metrics.specs`) score: the items of each level, and one
per-item function per metric.

A per-item function takes one item and then the metric's parameters, named as the declared options or fixed
arguments and without defaults (the scoring loop passes the values the options resolve to, `specs.OPTIONS`,
in the order of the signature: a call by keyword would cost several times more, once per item), and returns a
float, or None when the metric is undefined on that item (left out of the mean and of n). The items:

- `TurnItem`: a system turn (`selection.EvalTurn`) with what several of its metrics share, each computed once,
  on first use: the review texts its labels cite (`cited_texts`), its grounding analysis (`analysis`), its
  BLEU-4 and ROUGE-L (`text_scores`), and, when an NLI model or an LLM judge ran, their per-turn results;
- `DialogueItem`: a dialogue with its recommended POIs (`points`), their pairwise distances, the user's price
  ceiling and the (action, hit) sequence recovery reads;
- `EpisodeItem`: a reject_and_refine episode that has a following recommend/compare turn.

The other benchmarks' items and per-item functions (SnipRec, live dialogues, Collab-REC, CoRE, the human
evaluation) are in `lib.benchmark_items`.

Composite metrics (`cgs`, `cgs_ent`) have no per-item function: their aggregation is the CGS formula applied
to their components' values (`cgs_of_means`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

from trace_dataset.constants import RECOMMENDATION_ACTIONS
from trace_dataset.io import TraceDataError
from trace_metrics.lib import accuracy, grounding, practical, recovery, selection, text
from trace_metrics.lib.conventions import (
    DEFAULT_COMPARE_HIT,
    DEFAULT_GROUNDING_TURNS,
    CompareHit,
    GroundingTurns,
    T2RReading,
    check_grounding_turns,
)
from trace_metrics.lib.grounding import GroundingAnalysis, Threshold
from trace_metrics.lib.practical import PoiPoint

if TYPE_CHECKING:
    from trace_dataset.kb.store import KnowledgeBase


# ---------------------------------------------------------------------------------------------------
# Items
# ---------------------------------------------------------------------------------------------------
class Sources:
    """Review texts by citation label from the KB, and the unknown review ids the result counts."""

    def __init__(self, kb: KnowledgeBase):
        self.kb = kb
        self.unknown_review_ids: set[str] = set()

    def for_citations(self, citations: Mapping[str, str]) -> list[str | None]:
        """`out[n-1]` = text of the review label Rn cites; None for a hole or an unknown review."""
        if not citations:
            return []
        numbered = {int(label[1:]): rid for label, rid in citations.items()}
        out: list[str | None] = [None] * max(numbered)
        reviews = self.kb.reviews
        for n, rid in numbered.items():
            review = reviews.get(rid)
            if review is None:
                self.unknown_review_ids.add(rid)
                continue
            if review.text is None:
                raise TraceDataError(
                    f"review {rid!r} has no text: the knowledge base is not hydrated; run "
                    "`trace-bench corpus hydrate` and evaluate the hydrated directory",
                    path=self.kb.root,
                )
            out[n - 1] = review.text
        return out


class TurnItem:
    """A system turn and what its metrics share (module docstring)."""

    __slots__ = (
        "turn",
        "sources",
        "entailment",
        "judge",
        "_cited",
        "_analysis",
        "_ranks",
        "_text",
        "_stemmed",
    )

    def __init__(self, turn: selection.EvalTurn, sources: Sources):
        self.turn = turn
        self.sources = sources
        self.entailment: float | None = None  # set when an NLI model ran (`suite_optional.run_nli`)
        self.judge: Mapping[str, float | None] = {}  # scale -> rating, set when an LLM judge ran
        self._cited: list[str | None] | None = None
        self._analysis: GroundingAnalysis | None = None
        self._ranks: accuracy.Ranks | None = None
        self._text: tuple[float, float] | None = None
        self._stemmed: tuple[float, float] | None = None

    @property
    def recommending(self) -> bool:
        return self.turn.action in RECOMMENDATION_ACTIONS

    @property
    def cited_texts(self) -> list[str | None]:
        """The texts of the reviews its labels cite (`Sources.for_citations`)."""
        if self._cited is None:
            self._cited = self.sources.for_citations(self.turn.citations)
        return self._cited

    @property
    def analysis(self) -> GroundingAnalysis:
        """Its grounding analysis (`grounding.analyse`): every grounding metric at any parameter reads it."""
        if self._analysis is None:
            self._analysis = grounding.analyse(self.turn.response, self.cited_texts)
        return self._analysis

    @property
    def ranks(self) -> accuracy.Ranks | None:
        """Where its gold POIs and alternatives stand in its ranking (`accuracy.ranks`); None without gold."""
        if self._ranks is None and self.turn.gold:
            t = self.turn
            self._ranks = accuracy.ranks(t.ranked, t.gold, t.alternatives)
        return self._ranks

    def text_scores(self, use_stemmer: bool) -> tuple[float, float]:
        """(BLEU-4, ROUGE-L F1) against the reference response, from one tokenisation (`text.turn_scores`)."""
        if use_stemmer:
            if self._stemmed is None:
                self._stemmed = text.turn_scores(self.turn.response, self.turn.reference_text, True)
            return self._stemmed
        if self._text is None:
            self._text = text.turn_scores(self.turn.response, self.turn.reference_text, False)
        return self._text


def grounded_items(
    recommendation: list[TurnItem],
    system: list[TurnItem],
    grounding_turns: GroundingTurns = DEFAULT_GROUNDING_TURNS,
) -> list[TurnItem]:
    """The turns the grounding metrics average over: recommend/compare turns (App. J), or every system turn
    (`grounding_turns="system"`, Table 20's n); `conventions.GROUNDING_TURNS` explains the two readings."""
    check_grounding_turns(grounding_turns)
    return system if grounding_turns == "system" else recommendation


class DialogueItem:
    """A dialogue and what its practical-value and recovery metrics share (module docstring)."""

    __slots__ = ("dialogue", "kb", "_cache", "_points", "_distances", "_ceiling", "_recovery", "_episodes")

    def __init__(self, dialogue: selection.EvalDialogue, kb: KnowledgeBase, cache: dict[str, PoiPoint]):
        self.dialogue = dialogue
        self.kb = kb
        self._cache = cache  # business id -> point, shared by the dialogues of one run
        self._points: list[PoiPoint] | None = None
        self._distances: list[float] | None = None
        self._ceiling: tuple[int | None] | None = None
        self._recovery: dict[str, list[tuple[str, bool | None]]] = {}
        self._episodes: dict[str, dict[int, bool | None]] = {}

    @property
    def points(self) -> list[PoiPoint]:
        """Its recommended POIs (`selection.recommended_pois`) as points."""
        if self._points is None:
            out = []
            for pid in selection.recommended_pois(self.dialogue.system_turns, self.kb.review_business):
                pt = self._cache.get(pid)
                if pt is None:
                    poi = self.kb.pois.get(pid)
                    if poi is None:
                        raise TraceDataError(
                            f"recommended POI {pid!r} is not in the knowledge base", path=self.kb.root
                        )
                    pt = self._cache[pid] = PoiPoint(poi.latitude, poi.longitude, poi.price, poi.poi_type)
                out.append(pt)
            self._points = out
        return self._points

    @property
    def distances(self) -> list[float]:
        """Haversine km of every pair of its recommended POIs."""
        if self._distances is None:
            self._distances = practical.pair_distances(self.points)
        return self._distances

    @property
    def ceiling(self) -> int | None:
        """The price ceiling the user's latest budget word sets; None without one."""
        if self._ceiling is None:
            self._ceiling = (practical.price_ceiling(self.dialogue.user_texts),)
        return self._ceiling[0]

    def recovery_turns(self, compare_hit: CompareHit) -> list[tuple[str, bool | None]]:
        """(action, hit) of every turn (`selection.recovery_turns`), a compare turn's hit read as `compare_hit`."""
        turns = self._recovery.get(compare_hit)
        if turns is None:
            turns = self._recovery[compare_hit] = selection.recovery_turns(self.dialogue, compare_hit)
        return turns

    def rejection_hits(self, compare_hit: CompareHit) -> dict[int, bool | None]:
        """Turn index of each reject_and_refine turn -> whether the next recommend/compare turn hits (None: none
        follows), `recovery.rejection_episodes`."""
        hits = self._episodes.get(compare_hit)
        if hits is None:
            hits = self._episodes[compare_hit] = dict(
                recovery.rejection_episodes(self.recovery_turns(compare_hit))
            )
        return hits


class EpisodeItem(NamedTuple):
    """A reject_and_refine turn followed by a recommend/compare turn (which turns those are does not depend on
    any option; whether the follow-up hits depends on compare_hit)."""

    dialogue: DialogueItem
    position: int  # the reject_and_refine turn's position among the dialogue's turns
    dialogue_id: str
    turn_id: int


def episodes(
    item: DialogueItem, turns: Sequence[Mapping], scored_turns: str
) -> tuple[list[EpisodeItem], int]:
    """The dialogue's rejection episodes with a follow-up, and how many have none (counted, not scored);
    `turns`: the dialogue record's turns (for their ids). Under scored_turns="last", only the episodes whose
    follow-up is the scored turn (`selection.scores_episode`); the others are not counted."""
    out, without_followup = [], 0
    for idx, hit in item.rejection_hits(DEFAULT_COMPARE_HIT).items():
        if not selection.scores_episode(item.dialogue, idx, scored_turns):
            continue
        if hit is None:
            without_followup += 1
        else:
            out.append(EpisodeItem(item, idx, item.dialogue.dialogue_id, turns[idx]["turn_id"]))
    return out, without_followup


# ---------------------------------------------------------------------------------------------------
# Per-item functions: recommend/compare turns (accuracy, App. J, App. S; LLM judge)
# ---------------------------------------------------------------------------------------------------
def recall_at_k(item: TurnItem, k: int) -> float | None:
    r = item.ranks
    return None if r is None else r.recall(k)


def hit_at_k(item: TurnItem, k: int) -> float | None:
    r = item.ranks
    return None if r is None else r.hit(k)


def reciprocal_rank(item: TurnItem) -> float | None:
    r = item.ranks
    return None if r is None else r.reciprocal_rank()


def mr_recall_at_k(item: TurnItem, k: int) -> float | None:
    r = item.ranks
    return None if r is None else r.mr_recall(k)


def judge_rating(item: TurnItem, scale: str) -> float | None:
    """The judge's rating of this turn on one scale (`judge.JUDGE_SCALES`); None when the judge failed."""
    return item.judge.get(scale)


# ---------------------------------------------------------------------------------------------------
# Grounded turns (§3, App. J Algorithm 1, App. L)
# ---------------------------------------------------------------------------------------------------
def grounding_score(item: TurnItem, fuzzy_threshold: Threshold) -> float:
    return item.analysis.grounding_score(fuzzy_threshold)


def citation_density(item: TurnItem) -> float:
    return item.analysis.citation_density()


def provenance_coverage(item: TurnItem, pc_window: float) -> float | None:
    """PC; App. J's rule leaves a turn that neither mentions an aspect nor recommends out of the PC mean
    (None; only system turns that are not recommend/compare turns can be such a turn)."""
    a = item.analysis
    if not a.term_distances and not item.recommending:
        return None
    return a.provenance_coverage(pc_window)


def cgs(item: TurnItem, fuzzy_threshold: Threshold, cd_gate: float, pc_window: float) -> float:
    """This turn's own CGS (its PC vacuous, 1, when it mentions no aspect)."""
    return item.analysis.cgs(fuzzy_threshold, cd_gate, pc_window)


def entailment(item: TurnItem) -> float | None:
    """Share of the turn's sentences the NLI model finds entailed by its cited reviews."""
    return item.entailment


def cgs_ent(item: TurnItem, cd_gate: float, pc_window: float) -> float | None:
    """This turn's own CGS_ent: the CGS formula with its entailment in place of GS."""
    if item.entailment is None:
        return None
    a = item.analysis
    return grounding.composite(
        item.entailment, a.citation_density(), a.provenance_coverage(pc_window), cd_gate
    )


def cgs_of_means(gs: float | None, cd: float | None, pc: float | None, *, cd_gate: float) -> float | None:
    """The CGS formula applied to three means (GS or entailment, CD, PC): the tables' CGS and CGS_ent."""
    return grounding.of_means(gs, cd, pc, cd_gate)


# ---------------------------------------------------------------------------------------------------
# System turns (text, App. J)
# ---------------------------------------------------------------------------------------------------
def bleu4(item: TurnItem) -> float:
    return item.text_scores(False)[0]


def rouge_l(item: TurnItem, use_stemmer: bool) -> float:
    return item.text_scores(use_stemmer)[1]


# ---------------------------------------------------------------------------------------------------
# Dialogues (practical value §3, App. E; recovery App. J, App. N) and rejection episodes
# ---------------------------------------------------------------------------------------------------
def spatial_coherence(item: DialogueItem, radius_km: float) -> float | None:
    return practical.coherence_from_distances(item.distances, radius_km)


def route_efficiency_km(item: DialogueItem) -> float | None:
    return practical.route_length_km(item.points)


def price_alignment(item: DialogueItem) -> float | None:
    return practical.price_alignment(item.points, item.ceiling)


def itinerary_diversity(item: DialogueItem) -> float | None:
    return practical.itinerary_diversity(item.points)


def task_success(item: DialogueItem, compare_hit: CompareHit) -> float | None:
    return recovery.task_success(item.recovery_turns(compare_hit))


def turns_to_first_hit(item: DialogueItem, compare_hit: CompareHit, t2r: T2RReading) -> float | None:
    first = recovery.turns_to_first_hit(item.recovery_turns(compare_hit), t2r)
    return None if first is None else float(first)


def rejection_recovered(item: EpisodeItem, compare_hit: CompareHit) -> float:
    return 1.0 if item.dialogue.rejection_hits(compare_hit)[item.position] else 0.0
