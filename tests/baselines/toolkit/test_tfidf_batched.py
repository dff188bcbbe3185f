"""The TF-IDF scorer's batched paths (`scores_many`, `prefetch`) give every score to the bit of a per-candidate
dot product summed term by term in the query's order from 0.0, the integer 0 for a query with no term in the
vocabulary, and the candidates' order, across cells and whatever shares the batch."""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest

from baselines.toolkit.text import content_tokens
from baselines.toolkit.tfidf import TfidfScorer, log_tf
from tests.support.baselines import SMALL_POIS, SMALL_REVIEWS, write_kb
from trace_dataset.kb.store import KnowledgeBase

QUERIES = [
    "fresh fish by the harbor, and a quiet cafe",
    "smoky bbq bbq brisket near the museum museum",
    "the and of it",  # stop words only
    "",
    "colonial history exhibits with kind guides, then green vegan food",
    "zzz unknown words only",
]


@pytest.fixture
def kb(tmp_path):
    return KnowledgeBase.load(write_kb(tmp_path / "kb", SMALL_POIS, SMALL_REVIEWS))


def reference(scorer: TfidfScorer, query: str, candidates: list[str]) -> dict[str, float]:
    """A per-candidate dot product over the query's terms in first-occurrence order, left to right."""
    out: dict[str, float] = {}
    for pid in candidates:
        poi = scorer.kb.pois[pid]
        idx = scorer.index(poi.city, poi.poi_type)
        counts = Counter(t for t in content_tokens(query) if t in idx.idf)
        weights = {t: log_tf(k) * idf for t, k in counts.items() for idf in [idx.idf[t]]}
        norm = math.sqrt(sum(w * w for w in weights.values()))
        if norm == 0:
            out[pid] = 0
            continue
        doc = idx.vector(pid)
        total = 0.0
        for t, w in weights.items():
            total += (w / norm) * doc.get(t, 0.0)
        out[pid] = total
    return out


def exact(found: list[dict[str, float]]) -> str:
    return repr([list(d.items()) for d in found])  # keys in order, values to the bit, 0 apart from 0.0


def test_batched_scores_are_the_dot_products_to_the_bit(kb):
    rng = random.Random(0)
    ids = sorted(kb.pois)
    queries, candidates = [], []
    for _ in range(40):
        queries.append(rng.choice(QUERIES))
        candidates.append(rng.sample(ids, rng.randint(1, len(ids))))  # mixed cells, shuffled
    expected = [reference(TfidfScorer(kb), q, c) for q, c in zip(queries, candidates, strict=True)]
    scorer = TfidfScorer(kb)
    assert exact(scorer.scores_many(queries, candidates)) == exact(expected)
    assert exact([scorer.scores(q, c) for q, c in zip(queries, candidates, strict=True)]) == exact(expected)
    assert any(v == 0 and isinstance(v, int) for d in expected for v in d.values())
    assert any(0 < v < 1 for d in expected for v in d.values())


def test_prefetch_answers_each_turn_once_with_the_same_scores(kb):
    scorer = TfidfScorer(kb)
    rest = ["p_sea", "p_veg", "p_bbq", "p_caf"]
    inputs = [
        {"query": QUERIES[0], "candidates": rest, "action": "recommend"},
        {"query": QUERIES[1], "candidates": rest[1:], "action": "compare"},
        {"query": QUERIES[4], "candidates": rest, "action": "farewell"},  # not ranked: not scored
    ]
    scorer.prefetch(inputs)
    assert len(scorer._prefetched) == 2
    first = scorer.scores(QUERIES[0], rest)
    assert exact([first]) == exact([reference(scorer, QUERIES[0], rest)])
    again = scorer.scores(QUERIES[0], rest)  # computed afresh: a caller may keep or change the first
    assert again == first and again is not first
    assert scorer.scores(QUERIES[1], rest[1:]) == reference(scorer, QUERIES[1], rest[1:])
