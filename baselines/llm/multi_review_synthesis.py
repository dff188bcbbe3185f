"""Multi-Review Synthesis (App. F "MultiReviewSynthesisBaseline"): aspect consensus ranks; the LLM synthesises.

- Clusters: every review sentence of a POI (clauses: sentences split at contrast words, the Aspect baseline's
  unit) goes to each of the five aspects (food, service, ambiance, value, location) whose keywords it mentions
  (the Aspect baseline's lexicon, `baselines.toolkit.aspect.ASPECT_KEYWORDS`); its polarity is the Aspect
  baseline's clause polarity (sentiment words with negation): positive > 0, negative < 0, else neutral.
- Consensus per aspect and POI: c_a = (n_pos - n_neg) / n_total, in [-1, 1]; 0 with n_total = 0.
- Ranking (the full pool, App. Q): score = sum_a w_a c_a with w_a the Aspect baseline's query weights
  (min(hits_a / 3, 1) over the user turns); with no aspect word in the user turns, every aspect weighs 1.
  Ties go to the higher-starred POI, then business_id.
- Response: the LLM gets the consensus lines of the top POI (two on compare turns) and the history, and
  writes free text (`prompts/multi_review_synthesis.txt`). It sees no review text and no [Rn] label, so it
  cannot quote: the paper's MRS cites almost nothing (CD 0.001, CGS 0.008), and this keeps that property by
  construction.
  After a rejection the consensus barely moves, which is the paper's account of MRS's recovery collapse.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from baselines.base import rank_by_score
from baselines.llm.common import RANKED_ACTIONS, LLMPipeline, add_count, messages
from baselines.llm.prompting import LabelMap, format_history, price_text
from baselines.toolkit.aspect import ASPECTS, aspect_clauses, query_aspect_weights
from baselines.toolkit.responses import poi_name
from baselines.toolkit.text import user_turns

if TYPE_CHECKING:
    from trace_dataset.kb.store import KnowledgeBase

SCORE_DECIMALS = 6


@dataclass(frozen=True)
class AspectCount:
    n_pos: int = 0
    n_neg: int = 0
    n_total: int = 0

    @property
    def consensus(self) -> float:
        """c_a = (n_pos - n_neg) / n_total; 0.0 when no sentence is about the aspect."""
        return (self.n_pos - self.n_neg) / self.n_total if self.n_total else 0.0


def aspect_counts(review_texts: Iterable[str]) -> dict[str, AspectCount]:
    """Positive, negative and total sentences per aspect over the reviews (all five aspects)."""
    acc = {a: [0, 0, 0] for a in ASPECTS}
    for text in review_texts:
        for aspects, polarity in aspect_clauses(text):
            for a in aspects:
                acc[a][2] += 1
                acc[a][0] += polarity > 0
                acc[a][1] += polarity < 0
    return {a: AspectCount(*v) for a, v in acc.items()}


def consensus_score(counts: Mapping[str, AspectCount], weights: Mapping[str, float]) -> float:
    """sum_a w_a * c_a; uniform weights when the query weighs no aspect."""
    if not any(weights.get(a, 0.0) for a in ASPECTS):
        weights = dict.fromkeys(ASPECTS, 1.0)
    return sum(weights.get(a, 0.0) * counts[a].consensus for a in ASPECTS)


def consensus_lines(kb: KnowledgeBase, pid: str, counts: Mapping[str, AspectCount]) -> str:
    poi = kb.pois[pid]
    lines = [f"{poi_name(kb, pid)} - {poi.stars:.1f} stars - {price_text(poi.price)}"]
    for a in ASPECTS:
        c = counts[a]
        if c.n_total:
            lines.append(f"  {a}: {c.consensus:+.2f} ({c.n_pos} positive, {c.n_neg} negative of {c.n_total} sentences)")
    return "\n".join(lines)


class MultiReviewSynthesisBaseline(LLMPipeline):
    name: ClassVar[str] = "multi_review_synthesis"
    uses_prefilter: ClassVar[bool] = False
    config_keys: ClassVar[tuple[str, ...]] = ()

    def counts(self, pid: str) -> dict[str, AspectCount]:
        """A POI's aspect counts, computed on first use and kept (KB-derived only)."""
        cache = self.__dict__.setdefault("_counts", {})
        found = cache.get(pid)
        if found is None:
            texts = [self.kb.review_text(r.review_id) for r in self.kb.reviews_of(pid)]
            found = cache[pid] = aspect_counts(texts)
        return found

    def rank(self, candidates: Sequence[str], history: Sequence[Mapping[str, Any]]) -> list[str]:
        weights = query_aspect_weights(user_turns(history))
        scores = {pid: (round(consensus_score(self.counts(pid), weights), SCORE_DECIMALS), self.kb.pois[pid].stars)
                  for pid in candidates}
        return rank_by_score(candidates, scores)

    def _forward(self, inputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        convs, prepared = [], []
        for inp in inputs:
            action = inp["action"]
            ranked = self.rank(inp["candidates"], inp["history"]) if action in RANKED_ACTIONS else []
            shown = ranked[: 2 if action == "compare" else 1]
            instruction = ("no_candidates" if action in RANKED_ACTIONS and not shown
                           else "recommend" if action == "compare" and len(shown) < 2 else action)
            fields = {"city": inp["city"], "poi_type": inp["poi_type"],
                      "consensus": "\n".join(consensus_lines(self.kb, p, self.counts(p)) for p in shown) or "(none)",
                      "history": format_history(inp["history"]), "instruction": self.prompt.render(instruction)}
            convs.append(messages(self.prompt.render("system", **fields), self.prompt.render("user", **fields)))
            meta = {"consensus": {p: {a: round(c.consensus, 4) for a, c in self.counts(p).items() if c.n_total}
                                  for p in shown}}
            prepared.append((ranked, meta))
        texts = self.llm.generate_batch(convs)
        outputs = []
        for inp, text, (ranked, meta) in zip(inputs, texts, prepared, strict=True):
            if not text.strip():
                add_count(meta, "empty_response")
            outputs.append(self.output(inp, ranked, text.strip(), LabelMap(), meta))
        return outputs
