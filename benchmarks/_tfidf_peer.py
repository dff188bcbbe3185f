"""TF-IDF scoring against scikit-learn's on the same queries and candidates (`benchmarks/baselines.py --tfidf-peer`).

Queries: per (city, type) cell of the knowledge base, `n` texts of 0-40 words drawn (seeded) from one of the
cell's POIs' first two reviews; candidates: every POI of the cell (the open pool's shape). Ours:
`baselines.toolkit.tfidf.TfidfScorer.scores_many` on batches of the TF-IDF baseline's batch size, as the baseline
calls it, and `scores` one query at a time, as the baselines that mix TF-IDF with other scores call it. The peer:
scikit-learn's `TfidfVectorizer` with the same analyzer and weights (sublinear tf, smooth idf, L2), all of a cell's
queries transformed in one call and scored by one sparse product, and the same on batches of the baseline's batch
size. Both build their cell indices first (timed
apart); the scores must agree with scikit-learn's to 1e-9 and the batched scores with the one-at-a-time ones to
the bit.
"""

from __future__ import annotations

import random
import time
from typing import Any


def _queries(kb: Any, n: int) -> dict[tuple[str, str], list[str]]:
    rng = random.Random(0)
    out: dict[tuple[str, str], list[str]] = {}
    for key in sorted({(p.city, p.poi_type) for p in kb.pois.values()}):
        pois = [p.business_id for p in kb.pois_in(*key)]
        texts = []
        for _ in range(n):
            reviews = list(kb.reviews_of(rng.choice(pois)))[:2]
            words = " ".join(kb.review_text(r.review_id) for r in reviews).split()
            texts.append(" ".join(rng.sample(words, min(rng.randint(0, 40), len(words)))))
        out[key] = texts
    return out


def _ours(
    ours: Any, queries: dict[Any, list[str]], cells: dict[Any, list[str]], size: int
) -> dict[Any, list]:
    """Every cell's queries scored by `scores_many` in batches of `size`."""
    got: dict[Any, list] = {}
    for key, texts in queries.items():
        got[key] = []
        for at in range(0, len(texts), size):
            chunk = texts[at : at + size]
            got[key].extend(ours.scores_many(chunk, [cells[key]] * len(chunk)))
    return got


def _line(what: str, ours: float, peer: float) -> str:
    return f"  {what:<26} ours {ours:.2f}, scikit-learn {peer:.2f} -> ours at {peer / ours:.2f}x its speed"


def tfidf_peer(kb: Any, n: int) -> int:
    import numpy as np
    from sklearn.feature_extraction.text import TfidfVectorizer

    from baselines.base import DEFAULT_BATCH_SIZE
    from baselines.toolkit.text import content_tokens
    from baselines.toolkit.tfidf import TfidfScorer, poi_document

    queries = _queries(kb, n)
    cells = {key: [p.business_id for p in kb.pois_in(*key)] for key in queries}
    docs = {key: [poi_document(kb, pid) for pid in pids] for key, pids in cells.items()}  # text loaded once
    c = time.process_time()
    ours = TfidfScorer(kb)
    for key in cells:
        ours.index(*key)
    ours_build, c = time.process_time() - c, time.process_time()
    got = _ours(ours, queries, cells, DEFAULT_BATCH_SIZE)
    ours_batched, c = time.process_time() - c, time.process_time()
    single = {key: [ours.scores(q, cells[key]) for q in texts] for key, texts in queries.items()}
    ours_single, c = time.process_time() - c, time.process_time()
    fitted = {}
    for key in cells:
        vec = TfidfVectorizer(analyzer=content_tokens, sublinear_tf=True, smooth_idf=True)
        fitted[key] = (vec, vec.fit_transform(docs[key]))
    peer_build, c = time.process_time() - c, time.process_time()
    peer = {
        key: (fitted[key][0].transform(texts) @ fitted[key][1].T).toarray() for key, texts in queries.items()
    }
    peer_score, c = time.process_time() - c, time.process_time()
    for key, texts in queries.items():
        for at in range(0, len(texts), DEFAULT_BATCH_SIZE):
            (fitted[key][0].transform(texts[at : at + DEFAULT_BATCH_SIZE]) @ fitted[key][1].T).toarray()
    peer_batched = time.process_time() - c
    worst = max(
        float(np.max(np.abs(np.array([[s[p] for p in cells[key]] for s in got[key]]) - peer[key])))
        for key in cells
    )
    same = got == single and all(
        repr(list(a.values())) == repr(list(b.values()))
        for k in got
        for a, b in zip(got[k], single[k], strict=True)
    )
    n_q = sum(len(t) for t in queries.values())
    n_pairs = sum(len(t) * len(cells[k]) for k, t in queries.items())
    print(
        f"tfidf peer: {n_q} queries, {n_pairs} (query, candidate) pairs over {len(cells)} cells; CPU seconds"
    )
    print(_line("index build:", ours_build, peer_build))
    print(_line(f"scoring, batches of {DEFAULT_BATCH_SIZE}:", ours_batched, peer_batched))
    print(_line(f"ours {DEFAULT_BATCH_SIZE}, its {n} a cell:", ours_batched, peer_score))
    print(_line("ours one at a time:", ours_single, peer_score))
    print(f"  largest score difference {worst:.1e}; batched = one at a time to the bit: {same}")
    return 0 if worst < 1e-9 and same else 1
