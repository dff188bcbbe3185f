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
- Scoring: the cell's vectors are one sparse term x document matrix (scipy.sparse CSC). `scores_many` scores a
  batch of queries at once, cell by cell: their vectors are built together (numpy), and their terms' postings
  are added into one (query, document) array in query-term order, the order a per-candidate dot product sums
  in, so every score is that dot product's float to the bit, whatever else shares the batch. The baselines
  that rank by TF-IDF `prefetch` each batch of turns that way; `scores` answers one turn from it.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from scipy import sparse

from baselines.toolkit.text import content_tokens, tokenize
from trace_dataset.kb.store import KnowledgeBase


def poi_document(kb: KnowledgeBase, business_id: str) -> str:
    """Name + categories + all review texts, one per line."""
    poi = kb.poi(business_id)
    parts = [poi.name, " ".join(poi.categories)]
    parts.extend(kb.review_text(r.review_id) for r in kb.reviews_of(business_id))
    return "\n".join(parts)


def log_tf(count: int) -> float:
    return 1.0 + math.log(count)


_LOG_TF = np.array([0.0])  # log_tf(k) at k >= 1, grown as larger counts occur


def _log_tf_table(largest: int) -> np.ndarray:
    """`log_tf` of 1..largest (and more) by count, each as `log_tf` computes it."""
    global _LOG_TF
    if largest >= len(_LOG_TF):
        _LOG_TF = np.array([0.0] + [log_tf(k) for k in range(1, max(2 * largest, 64))])
    return _LOG_TF


def smooth_idf(n_docs: int, df: int) -> float:
    return math.log((n_docs + 1) / (df + 1)) + 1.0


def unit_weights(counts: np.ndarray, idf: np.ndarray, lengths: Sequence[int]) -> np.ndarray:
    """Vectors laid end to end (`lengths` entries each, a term's count and idf per entry), weighted 1 + log count,
    times idf, each divided by its norm: the squares summed by `sum`, left to right, as a Python loop over the
    vector's terms sums them."""
    weights = _log_tf_table(int(counts.max(initial=0)))[counts] * idf
    squares = (weights * weights).tolist()
    ends = itertools.accumulate(lengths)
    norms = [math.sqrt(sum(squares[a:b])) for a, b in itertools.pairwise(itertools.chain([0], ends))]
    return weights / np.repeat(np.array(norms), lengths)


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
        self.terms: list[str] = list(self.idf)
        self._idf = np.fromiter(self.idf.values(), dtype=np.float64, count=len(self.idf))  # by column
        self.column: dict[str, int] = {t: j for j, t in enumerate(self.terms)}
        self.matrix = self._matrix(counts)
        self._lengths = np.diff(self.matrix.indptr)  # documents holding each term
        self._docs = self.matrix.indices.astype(np.int64)  # each posting's document, as bincount reads bins

    def _matrix(self, counts: list[Counter[str]]) -> sparse.csc_matrix:
        """documents x terms, each row the document's normalised vector (`unit_weights`)."""
        lengths = [len(c) for c in counts]
        cols = np.fromiter(
            map(self.column.__getitem__, itertools.chain.from_iterable(counts)),
            dtype=np.int64,
            count=sum(lengths),
        )
        k = np.fromiter(
            itertools.chain.from_iterable(c.values() for c in counts), dtype=np.int64, count=cols.size
        )
        data = unit_weights(k, self._idf[cols], lengths)
        indptr = np.zeros(self.n_docs + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        return sparse.csr_matrix((data, cols, indptr), shape=(self.n_docs, len(self.column))).tocsc()

    def vector(self, doc_id: str) -> dict[str, float]:
        """The document's normalised vector, term -> weight (terms in column order)."""
        row = self.matrix.getrow(self.row[doc_id]).tocsr()
        terms = self.terms
        pairs = sorted(zip(row.indices.tolist(), row.data.tolist(), strict=True))
        return {terms[j]: float(w) for j, w in pairs}

    def query_weights(self, queries: Sequence[Sequence[str]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The queries' normalised vectors, laid end to end as (query, column, weight) arrays: each query's terms
        in the vocabulary in order of first occurrence, weighted 1 + log count, times idf, then divided by the
        vector's norm (its squares summed by `sum`, left to right, as a Python loop over the terms would)."""
        nq, n_terms_all = len(queries), len(self.terms)
        flat = list(itertools.chain.from_iterable(queries))
        cols = np.fromiter(map(self.column.get, flat, itertools.repeat(-1)), dtype=np.int64, count=len(flat))
        qid = np.repeat(np.arange(nq, dtype=np.int64), [len(q) for q in queries])
        keep = cols >= 0
        key, first, counts = np.unique(
            qid[keep] * n_terms_all + cols[keep], return_index=True, return_counts=True
        )
        order = np.argsort(first)  # first occurrence, query after query
        qid, cols = np.divmod(key[order], n_terms_all)
        counts = counts[order]
        return qid, cols, unit_weights(counts, self._idf[cols], np.bincount(qid, minlength=nq).tolist())

    def query_vector(self, tokens: Sequence[str]) -> dict[str, float]:
        """The query's normalised vector, term -> weight (terms outside the vocabulary ignored)."""
        _, cols, weights = self.query_weights([tokens])
        return {self.terms[j]: w for j, w in zip(cols.tolist(), weights.tolist(), strict=True)}

    def all_scores(self, qvec: Mapping[str, float]) -> np.ndarray:
        """The cosine of `qvec` with every document (row order), summed term by term in `qvec`'s order."""
        cols = np.fromiter((self.column[t] for t in qvec), dtype=np.int64, count=len(qvec))
        qw = np.fromiter(qvec.values(), dtype=np.float64, count=len(qvec))
        return self.batch_scores(np.zeros(len(qvec), dtype=np.int64), cols, qw, 1)[0]

    def token_scores(self, queries: Sequence[Sequence[str]]) -> tuple[np.ndarray, list[bool]]:
        """(queries x documents: each query's cosine with every document, whether the query has a term in the
        vocabulary): `query_weights` and `batch_scores` of all the queries at once."""
        qid, cols, weights = self.query_weights(queries)
        has_terms = np.bincount(qid, minlength=len(queries)) > 0
        return self.batch_scores(qid, cols, weights, len(queries)), has_terms.tolist()

    def batch_scores(
        self, qid: np.ndarray, cols: np.ndarray, weights: np.ndarray, n_queries: int
    ) -> np.ndarray:
        """queries x documents: the cosines of queries given as (query, column, weight) arrays (`query_weights`),
        each summed term by term in its query's order.

        All the queries' postings are laid end to end, in the arrays' order, and `np.bincount` adds them into one
        (query, document) total each, one after another from 0.0: per total, the sum a per-document dot product
        over the query's terms computes, whatever else shares the call."""
        lens = self._lengths[cols]
        starts = self.matrix.indptr[cols] - np.cumsum(lens) + lens
        pos = np.arange(int(lens.sum())) + np.repeat(starts, lens)  # each posting's place in the matrix
        bins = self._docs[pos] + np.repeat(qid * self.n_docs, lens)
        totals = np.bincount(
            bins, weights=self.matrix.data[pos] * np.repeat(weights, lens), minlength=n_queries * self.n_docs
        )
        return totals.reshape(n_queries, self.n_docs)

    def scores(self, qvec: Mapping[str, float], doc_ids: Sequence[str]) -> list[float]:
        """The cosine of `qvec` with each of `doc_ids`; an empty query scores the integer 0, as a sum of no
        terms does."""
        if not qvec:
            return [0] * len(doc_ids)
        return self.all_scores(qvec)[[self.row[d] for d in doc_ids]].tolist()

    def score(self, qvec: Mapping[str, float], doc_id: str) -> float:
        return self.scores(qvec, [doc_id])[0]


# Candidate lists whose grouping by cell `TfidfScorer` keeps (a run's turns repeat their pool's list, less what the
# user rejected); past it the kept groupings are dropped and built again as needed.
_GROUPINGS_KEPT = 4096

_Group = tuple[
    tuple[str, str], list[str], np.ndarray
]  # (cell, its candidates in order, their rows in its index)


class TfidfScorer:
    """Cosine TF-IDF scores of POIs for a query, with one lazily built index per (city, type) cell."""

    def __init__(self, kb: KnowledgeBase):
        self.kb = kb
        self._indices: dict[tuple[str, str], TfidfIndex] = {}
        self._groupings: dict[tuple[str, ...], list[_Group]] = {}
        self._prefetched: dict[tuple[str, tuple[str, ...]], dict[str, float]] = {}

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

    def _grouping(self, candidates: Sequence[str]) -> list[_Group]:
        """The candidates by cell (cells in order of first candidate), each with its rows in the cell's index."""
        key = tuple(candidates)
        found = self._groupings.get(key)
        if found is None:
            cells: dict[tuple[str, str], list[str]] = {}
            for pid in candidates:
                poi = self.kb.pois[pid]
                cells.setdefault((poi.city, poi.poi_type), []).append(pid)
            found = []
            for cell, pids in cells.items():
                row = self.index(*cell).row
                found.append((cell, pids, np.array([row[pid] for pid in pids], dtype=np.int64)))
            if len(self._groupings) >= _GROUPINGS_KEPT:
                self._groupings.clear()
            self._groupings[key] = found
        return found

    def scores(self, query: str, candidates: Sequence[str]) -> dict[str, float]:
        """candidate id -> cosine score in [0, 1]; each candidate is scored in its own cell's index (the result
        keeps the candidates' order). A turn of the last `prefetch` is answered from it (once)."""
        found = self._prefetched.pop((query, tuple(candidates)), None)
        return found if found is not None else self.scores_many([query], [candidates])[0]

    def prefetch(self, inputs: Iterable[Mapping[str, Any]]) -> None:
        """Score a batch's ranked turns (`preprocess` outputs: query, candidates, action) in one `scores_many`
        pass and keep them, in place of the last batch's, for `scores` to answer."""
        todo = {
            (inp["query"], tuple(inp["candidates"])): inp["candidates"]
            for inp in inputs
            if inp["action"] != "farewell" and inp["candidates"]
        }
        found = self.scores_many([query for query, _ in todo], list(todo.values()))
        self._prefetched = dict(zip(todo, found, strict=True))

    def scores_many(
        self, queries: Sequence[str], candidates: Sequence[Sequence[str]]
    ) -> list[dict[str, float]]:
        """`scores` of each query with its candidates, every cell's queries scored in one pass: the same
        values, to the bit, as one call per query."""
        groupings = [self._grouping(c) for c in candidates]
        work: dict[tuple[str, str], list[tuple[int, list[str], np.ndarray]]] = {}
        for i, groups in enumerate(groupings):
            for cell, pids, rows in groups:
                work.setdefault(cell, []).append((i, pids, rows))
        # every word, stop words and one-letter words too: none is in a vocabulary of content tokens, so the
        # vocabulary drops them as `content_tokens` would have
        tokens = {i: tokenize(queries[i]) for i, g in enumerate(groupings) if g}
        found: list[dict[str, float]] = [{} for _ in queries]
        for cell, items in work.items():
            idx = self.index(*cell)
            table, has_terms = idx.token_scores([tokens[i] for i, _, _ in items])
            offsets = np.repeat(np.arange(len(items)) * idx.n_docs, [len(rows) for _, _, rows in items])
            values = iter(table.ravel()[np.concatenate([rows for _, _, rows in items]) + offsets].tolist())
            for (i, pids, _), has in zip(items, has_terms, strict=True):
                # one value per candidate, taken in order: zip stops at the last candidate, values go on
                got = dict(zip(pids, values, strict=False))
                if not has:  # no term in the vocabulary: the integer 0, as a sum of no terms
                    got = dict.fromkeys(pids, 0)
                if found[i]:
                    found[i].update(got)
                else:
                    found[i] = got
        return [
            f if len(g) == 1 else {pid: f[pid] for pid in c}
            for f, g, c in zip(found, groupings, candidates, strict=True)
        ]
