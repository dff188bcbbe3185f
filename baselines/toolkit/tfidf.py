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
- Scoring: the cell's vectors are one sparse term x document matrix (scipy.sparse CSC); a query scores all of a
  cell's candidates at once, adding the query terms' columns (their postings) into one array in query-term
  order, the order a per-candidate dot product sums in, so every score is that dot product's float to the bit.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
from scipy import sparse

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
    """Normalised TF-IDF vectors of a fixed set of documents (one cell of the knowledge base), held as a sparse
    matrix with one column per term (postings: the documents holding the term and its weight in each)."""

    def __init__(self, docs: Mapping[str, Sequence[str]]):
        """`docs`: document id -> its tokens."""
        counts = [Counter(tokens) for tokens in docs.values()]
        df: Counter[str] = Counter()
        for c in counts:
            df.update(c.keys())
        self.n_docs = len(counts)
        self.idf: dict[str, float] = {t: smooth_idf(self.n_docs, d) for t, d in df.items()}
        self.doc_ids: list[str] = list(docs)
        self.row: dict[str, int] = {doc_id: i for i, doc_id in enumerate(self.doc_ids)}
        self.column: dict[str, int] = {t: j for j, t in enumerate(self.idf)}
        self.matrix = self._matrix(counts)

    def _matrix(self, counts: list[Counter[str]]) -> sparse.csc_matrix:
        """documents x terms, each row the document's normalised vector (weights as `_normalise` gives them)."""
        tf: dict[int, float] = {}
        indptr, indices, data = [0], list[int](), list[float]()
        for c in counts:
            weights: dict[str, float] = {}
            for t, k in c.items():
                w = tf.get(k)
                if w is None:
                    w = tf[k] = log_tf(k)
                weights[t] = w * self.idf[t]
            vector = _normalise(weights)
            indices.extend(self.column[t] for t in vector)
            data.extend(vector.values())
            indptr.append(len(indices))
        shape = (self.n_docs, len(self.column))
        csr = sparse.csr_matrix(
            (np.array(data, dtype=np.float64), np.array(indices, dtype=np.int64), np.array(indptr)),
            shape=shape,
        )
        return csr.tocsc()

    def vector(self, doc_id: str) -> dict[str, float]:
        """The document's normalised vector, term -> weight (terms in column order)."""
        row = self.matrix.getrow(self.row[doc_id]).tocsr()
        terms = list(self.column)
        pairs = sorted(zip(row.indices.tolist(), row.data.tolist(), strict=True))
        return {terms[j]: float(w) for j, w in pairs}

    def query_vector(self, tokens: Iterable[str]) -> dict[str, float]:
        counts = Counter(t for t in tokens if t in self.idf)
        return _normalise({t: log_tf(k) * self.idf[t] for t, k in counts.items()})

    def all_scores(self, qvec: Mapping[str, float]) -> np.ndarray:
        """The cosine of `qvec` with every document (row order), summed term by term in `qvec`'s order.

        The query terms' postings are laid end to end in that order and `np.bincount` adds them into each
        document's total one after another, from 0.0: the sum the per-document dot product computed."""
        cols = np.fromiter((self.column[t] for t in qvec), dtype=np.int64, count=len(qvec))
        lo = self.matrix.indptr[cols]
        lens = self.matrix.indptr[cols + 1] - lo
        starts = np.repeat(lo - np.cumsum(lens) + lens, lens)
        pos = starts + np.arange(starts.size)
        weights = np.repeat(np.fromiter(qvec.values(), dtype=np.float64, count=len(qvec)), lens)
        return np.bincount(
            self.matrix.indices[pos], weights=self.matrix.data[pos] * weights, minlength=self.n_docs
        )

    def scores(self, qvec: Mapping[str, float], doc_ids: Sequence[str]) -> list[float]:
        """The cosine of `qvec` with each of `doc_ids`; an empty query scores the integer 0, as a sum of no
        terms does."""
        if not qvec:
            return [0] * len(doc_ids)
        return self.all_scores(qvec)[[self.row[d] for d in doc_ids]].tolist()

    def score(self, qvec: Mapping[str, float], doc_id: str) -> float:
        return self.scores(qvec, [doc_id])[0]


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
        """candidate id -> cosine score in [0, 1]; each candidate is scored in its own cell's index, all of a
        cell's candidates in one pass (the result keeps the candidates' order)."""
        tokens = content_tokens(query)
        cells: dict[tuple[str, str], list[str]] = {}
        for pid in candidates:
            poi = self.kb.pois[pid]
            cells.setdefault((poi.city, poi.poi_type), []).append(pid)
        found: dict[str, float] = {}
        for key, pids in cells.items():
            idx = self.index(*key)
            found.update(zip(pids, idx.scores(idx.query_vector(tokens), pids), strict=True))
        return {pid: found[pid] for pid in candidates}
