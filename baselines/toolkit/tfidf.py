"""TF-IDF scoring (App. F): sparse term matching between the user's turns and each POI's document.

The TF-IDF baseline ranks by it; Spatial, Itinerary, Knowledge-Enhanced, Hybrid-RRF and the LLM baselines'
prefilter use it too.

- Document: the POI's name, its categories and all its review texts (knowledge-base order).
- Terms: `baselines.toolkit.text.content_tokens` (lower-cased words, the 80-word stop list removed, one-character
  tokens dropped as scikit-learn's default token pattern does).
- Weights: tf(t, d) = 1 + log(count(t, d)); idf(t) = log((n + 1) / (df(t) + 1)) + 1 with n the documents of
  the index (scikit-learn's `sublinear_tf=True, smooth_idf=True`).
- Score: cosine similarity of the L2-normalised query and document vectors; the query is weighted the same
  way (1 + log count, times idf), and query terms outside the index vocabulary are ignored.
- Index: one per (city, POI type) cell of the knowledge base, over all the cell's POIs, built on first use
  and kept for the pipeline's life (`TfidfScorer`). Every pool (closed, 16, 32, open) is scored against
  the same cell index, so a POI's score does not depend on the pool size.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from baselines.toolkit.text import content_tokens
from trace_dataset.kb.store import KnowledgeBase


def poi_document(kb: KnowledgeBase, business_id: str) -> str:
    """Name + categories + all review texts, one per line."""
    poi = kb.poi(business_id)
    parts = [poi.name, " ".join(poi.categories)]
    parts.extend(kb.review_text(r.review_id) for r in kb.reviews_of(business_id))
    return "\n".join(parts)


def log_tf(count: int) -> float:
    return 1.0 + math.log(count)


def smooth_idf(n_docs: int, df: int) -> float:
    return math.log((n_docs + 1) / (df + 1)) + 1.0


def _normalise(weights: dict[str, float]) -> dict[str, float]:
    norm = math.sqrt(sum(w * w for w in weights.values()))
    return {t: w / norm for t, w in weights.items()} if norm > 0 else {}


class TfidfIndex:
    """Normalised TF-IDF vectors of a fixed set of documents (one cell of the knowledge base)."""

    def __init__(self, docs: Mapping[str, Sequence[str]]):
        """`docs`: document id -> its tokens."""
        counts = {doc_id: Counter(tokens) for doc_id, tokens in docs.items()}
        df: Counter[str] = Counter()
        for c in counts.values():
            df.update(c.keys())
        self.n_docs = len(counts)
        self.idf: dict[str, float] = {t: smooth_idf(self.n_docs, d) for t, d in df.items()}
        self.vectors: dict[str, dict[str, float]] = {
            doc_id: _normalise({t: log_tf(k) * self.idf[t] for t, k in c.items()})
            for doc_id, c in counts.items()
        }

    def query_vector(self, tokens: Iterable[str]) -> dict[str, float]:
        counts = Counter(t for t in tokens if t in self.idf)
        return _normalise({t: log_tf(k) * self.idf[t] for t, k in counts.items()})

    def score(self, qvec: Mapping[str, float], doc_id: str) -> float:
        doc = self.vectors[doc_id]
        return sum(w * doc.get(t, 0.0) for t, w in qvec.items())


class TfidfScorer:
    """Cosine TF-IDF scores of POIs for a query, with one lazily built index per (city, type) cell."""

    def __init__(self, kb: KnowledgeBase):
        self.kb = kb
        self._indices: dict[tuple[str, str], TfidfIndex] = {}

    def index(self, city: str, poi_type: str) -> TfidfIndex:
        key = (city, poi_type)
        idx = self._indices.get(key)
        if idx is None:
            docs = {
                p.business_id: content_tokens(poi_document(self.kb, p.business_id))
                for p in self.kb.pois_in(city, poi_type)
            }
            idx = self._indices[key] = TfidfIndex(docs)
        return idx

    def scores(self, query: str, candidates: Sequence[str]) -> dict[str, float]:
        """candidate id -> cosine score in [0, 1]; each candidate is scored in its own cell's index."""
        tokens = content_tokens(query)
        out: dict[str, float] = {}
        qvecs: dict[tuple[str, str], dict[str, float]] = {}
        for pid in candidates:
            poi = self.kb.pois[pid]
            key = (poi.city, poi.poi_type)
            if key not in qvecs:
                qvecs[key] = self.index(*key).query_vector(tokens)
            out[pid] = self.index(*key).score(qvecs[key], pid)
        return out
