"""Multi-Review Synthesis (App. F "MultiReviewSynthesisBaseline"): aspect consensus ranks; the LLM synthesises.

- Clusters: every review sentence of a POI (clauses: sentences split at contrast words, the Aspect baseline's
  unit) goes to each of the five aspects (food, service, ambiance, value, location) whose keywords it mentions
  (the Aspect baseline's lexicon, `baselines.toolkit.aspect.ASPECT_KEYWORDS`); its polarity is the Aspect
  baseline's clause polarity (sentiment words with negation): positive > 0, negative < 0, else neutral.
- Consensus per aspect and POI: c_a = (n_pos - n_neg) / n_total, in [-1, 1]; 0 with n_total = 0.
- Ranking (the full pool, App. Q): score = sum_a w_a c_a with w_a the Aspect baseline's query weights
  (min(hits_a / 3, 1) over the user turns); with no aspect word in the user turns, every aspect weighs 1.
  Ties go to the higher-starred POI, then business_id. **No adaptation** (`keep_rejected=True`, the default):
  the ranking is over the whole pool, the POIs the user rejected included, as the paper's account of MRS
  reads (App. N: "aspect-consensus synthesis is dominated by candidate-pool aspect frequencies that change
  little after one rejection"); `keep_rejected=False` drops them as the other baselines do.
- Response: the LLM gets, for the top POI (two on compare turns), each aspect's consensus line together with
  the review sentences of that aspect's cluster, up to `sentences_per_aspect` (2) of them, each labelled
  `[Rn]` as the other citing baselines label their evidence (`prompts/multi_review_synthesis.txt`; a sentence in two
  clusters keeps one label). The sentences on the
  consensus side come first (positive ones under a positive consensus), each side in knowledge-base order
  (reviews, then clauses); a sentence is cut at a word boundary after `review_chars` (240) characters. The
  prompt asks for an aspect-focused answer and does not ask for quotes, so the model may quote, paraphrase,
  misquote or cite nothing: the grounding metrics measure what it did.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from baselines.base import DEFAULT_BATCH_SIZE, SCORE_DECIMALS, add_count, rank_by_score
from baselines.llm.common import DEFAULT_PREFILTER_K, LLMPipeline, messages
from baselines.llm.prompting import LabelMap, clip, format_history, price_text
from baselines.toolkit.aspect import (
    ASPECTS,
    aspect_mentions,
    clause_polarity,
    query_aspect_weights,
    split_clauses,
)
from baselines.toolkit.output import TurnOutput
from baselines.toolkit.responses import poi_name
from baselines.toolkit.text import tokenize, user_turns
from trace_dataset.constants import RECOMMENDATION_ACTIONS

if TYPE_CHECKING:
    from trace_dataset.kb.store import KnowledgeBase

DEFAULT_SENTENCES_PER_ASPECT = 2


@dataclass(frozen=True)
class AspectCount:
    n_pos: int = 0
    n_neg: int = 0
    n_total: int = 0

    @property
    def consensus(self) -> float:
        """c_a = (n_pos - n_neg) / n_total; 0.0 when no sentence is about the aspect."""
        return (self.n_pos - self.n_neg) / self.n_total if self.n_total else 0.0


@dataclass(frozen=True)
class Sentence:
    """One clustered review sentence: its review, its text (a substring of the review) and its polarity."""

    review_id: str
    text: str
    polarity: float


def aspect_clusters(reviews: Iterable[tuple[str, str]]) -> dict[str, list[Sentence]]:
    """aspect -> the sentences (clauses) of (review_id, text) pairs that mention it, in review and text order."""
    out: dict[str, list[Sentence]] = {a: [] for a in ASPECTS}
    for review_id, text in reviews:
        for clause in split_clauses(text):
            tokens = tokenize(clause)
            aspects = set(aspect_mentions(tokens))
            if aspects:
                sentence = Sentence(review_id, clause.strip(), clause_polarity(tokens))
                for a in ASPECTS:
                    if a in aspects:
                        out[a].append(sentence)
    return out


def cluster_counts(clusters: Mapping[str, Sequence[Sentence]]) -> dict[str, AspectCount]:
    """Positive, negative and total sentences per aspect."""
    return {
        a: AspectCount(sum(s.polarity > 0 for s in ss), sum(s.polarity < 0 for s in ss), len(ss))
        for a, ss in ((a, clusters.get(a, ())) for a in ASPECTS)
    }


def aspect_counts(review_texts: Iterable[str]) -> dict[str, AspectCount]:
    """Positive, negative and total sentences per aspect over the reviews (all five aspects)."""
    return cluster_counts(aspect_clusters((str(i), t) for i, t in enumerate(review_texts)))


def consensus_score(counts: Mapping[str, AspectCount], weights: Mapping[str, float]) -> float:
    """sum_a w_a * c_a; uniform weights when the query weighs no aspect."""
    if not any(weights.get(a, 0.0) for a in ASPECTS):
        weights = dict.fromkeys(ASPECTS, 1.0)
    return sum(weights.get(a, 0.0) * counts[a].consensus for a in ASPECTS)


def evidence_sentences(sentences: Sequence[Sentence], consensus: float, limit: int) -> list[Sentence]:
    """Up to `limit` sentences of a cluster: those on the consensus side first, each side in cluster order."""
    side = (
        (lambda s: s.polarity > 0) if consensus > 0 else (lambda s: s.polarity < 0) if consensus < 0 else None
    )
    if side is None:
        return list(sentences[:limit])
    return ([s for s in sentences if side(s)] + [s for s in sentences if not side(s)])[:limit]


def polarity_word(polarity: float) -> str:
    return "positive" if polarity > 0 else "negative" if polarity < 0 else "neutral"


def consensus_block(
    kb: KnowledgeBase,
    pid: str,
    clusters: Mapping[str, Sequence[Sentence]],
    labels: LabelMap,
    sentences_per_aspect: int,
    review_chars: int,
    seen: dict[Sentence, str] | None = None,
) -> str:
    """A POI's consensus lines, each aspect followed by its labelled sentences ([Rn] added to `labels`; a
    sentence in two clusters keeps its first label, `seen` carrying them across the prompt's blocks)."""
    seen = {} if seen is None else seen
    poi = kb.pois[pid]
    counts = cluster_counts(clusters)
    lines = [f"{poi_name(kb, pid)} - {poi.stars:.1f} stars - {price_text(poi.price)}"]
    for a in ASPECTS:
        c = counts[a]
        if not c.n_total:
            continue
        lines.append(
            f"  {a}: {c.consensus:+.2f} ({c.n_pos} positive, {c.n_neg} negative of {c.n_total} sentences)"
        )
        for s in evidence_sentences(clusters[a], c.consensus, sentences_per_aspect):
            if s not in seen:
                seen[s] = labels.add(s.review_id)
            lines.append(f"    [{seen[s]}] ({polarity_word(s.polarity)}) {clip(s.text, review_chars)}")
    return "\n".join(lines)


class MultiReviewSynthesisBaseline(LLMPipeline):
    name: ClassVar[str] = "multi_review_synthesis"
    uses_prefilter: ClassVar[bool] = False
    config_keys: ClassVar[tuple[str, ...]] = (
        "keep_rejected",
        "sentences_per_aspect",
        "review_chars",
        "json_repairs",
    )

    @classmethod
    def budget_schemas(cls, prefilter_k: int = DEFAULT_PREFILTER_K) -> dict[str, dict[str, Any]]:
        """Nothing under a constraint: the model writes the response as free text from the consensus."""
        return {}

    def __init__(
        self,
        kb: KnowledgeBase,
        batch_size: int = DEFAULT_BATCH_SIZE,
        *,
        keep_rejected: bool = True,
        sentences_per_aspect: int = DEFAULT_SENTENCES_PER_ASPECT,
        **params: Any,
    ):
        super().__init__(kb, batch_size, **params)
        if not isinstance(keep_rejected, bool):
            raise ValueError(f"keep_rejected must be true or false, got {keep_rejected!r}")
        if (
            isinstance(sentences_per_aspect, bool)
            or not isinstance(sentences_per_aspect, int)
            or sentences_per_aspect < 0
        ):
            raise ValueError(f"sentences_per_aspect must be an integer >= 0, got {sentences_per_aspect!r}")
        self.keep_rejected = keep_rejected
        self.sentences_per_aspect = sentences_per_aspect
        self._clusters: dict[str, dict[str, list[Sentence]]] = {}

    def clusters(self, pid: str) -> dict[str, list[Sentence]]:
        """A POI's aspect clusters, computed on first use and kept (KB-derived only)."""
        found = self._clusters.get(pid)
        if found is None:
            reviews = ((r.review_id, self.kb.review_text(r.review_id)) for r in self.kb.reviews_of(pid))
            found = self._clusters[pid] = aspect_clusters(reviews)
        return found

    def counts(self, pid: str) -> dict[str, AspectCount]:
        return cluster_counts(self.clusters(pid))

    def scores(
        self, candidates: Sequence[str], history: Sequence[Mapping[str, Any]]
    ) -> dict[str, tuple[float, float]]:
        """(consensus score, stars) per candidate: what the ranking sorts by (equal pairs are ties)."""
        weights = query_aspect_weights(user_turns(history))
        return {
            pid: (round(consensus_score(self.counts(pid), weights), SCORE_DECIMALS), self.kb.pois[pid].stars)
            for pid in candidates
        }

    def rank(self, candidates: Sequence[str], history: Sequence[Mapping[str, Any]]) -> list[str]:
        return rank_by_score(candidates, self.scores(candidates, history))

    def ranked_pool(self, inp: Mapping[str, Any]) -> list[str]:
        """What MRS ranks: the whole pool (no adaptation) or, with keep_rejected=False, the usable candidates."""
        if self.keep_rejected:
            return list(dict.fromkeys(inp["row"]["candidate_poi_ids"]))
        return list(inp["candidates"])

    def build(
        self, inp: dict[str, Any]
    ) -> tuple[list[dict[str, str]], tuple[list[str], LabelMap, dict, dict]]:
        """The turn's conversation and what its answer is read with (ranking, labels, meta, scores)."""
        action = inp["action"]
        pool = self.ranked_pool(inp) if action in RECOMMENDATION_ACTIONS else []
        scores = self.scores(pool, inp["history"]) if pool else {}
        ranked = rank_by_score(pool, scores)
        shown = ranked[: 2 if action == "compare" else 1]
        instruction = (
            "no_candidates"
            if action in RECOMMENDATION_ACTIONS and not shown
            else "recommend"
            if action == "compare" and len(shown) < 2
            else action
        )
        labels = LabelMap()
        seen: dict[Sentence, str] = {}
        blocks = [
            consensus_block(
                self.kb, p, self.clusters(p), labels, self.sentences_per_aspect, self.review_chars, seen
            )
            for p in shown
        ]
        fields = {
            "city": inp["city"],
            "poi_type": inp["poi_type"],
            "consensus": "\n".join(blocks) or "(none)",
            "history": format_history(inp["history"]),
            "instruction": self.prompt.render(instruction),
        }
        conversation = messages(self.prompt.render("system", **fields), self.prompt.render("user", **fields))
        meta: dict[str, Any] = {
            "consensus": {
                p: {a: round(c.consensus, 4) for a, c in self.counts(p).items() if c.n_total} for p in shown
            },
            "evidence_labels": len(labels.review_ids),
        }
        if shown and shown[0] in set(inp["state"].rejected_poi_ids):
            meta["top_is_rejected"] = True  # no adaptation: the user turned it down earlier
        return conversation, (ranked, labels, meta, scores)

    def _forward(self, inputs: list[dict[str, Any]]) -> list[TurnOutput]:
        built = [self.build(inp) for inp in inputs]
        texts = self.llm.generate_batch([conversation for conversation, _ in built], self.settings)
        outputs = []
        for inp, text, (_, (ranked, labels, meta, scores)) in zip(inputs, texts, built, strict=True):
            if not text.strip():
                add_count(meta, "empty_response")
            outputs.append(self.output(inp, ranked, text.strip(), labels, meta, scores))
        return outputs
