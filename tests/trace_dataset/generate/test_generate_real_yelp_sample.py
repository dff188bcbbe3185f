"""A small corpus from the real Yelp lines in ../shared/yelp_sample (read in place, never copied).

The sample has 500 reviews, 189 of which belong to its 5,000 businesses, so the KB builder cannot fill
all 24 city x type cells even at 8 POIs per cell (it says which cells are short). The test then builds a
partial knowledge base with the Yelp area's reader and classifier from the cells that do reach 8 POIs with
a review, and generates dialogues over those cells only; it skips, saying why, if none does.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict

import pytest

from tests.support.dialogue_rules import check_dialogue
from trace_dataset.constants import (
    CITY_NAMES,
    KB_META_FILE,
    POIS_FILE,
    REVIEW_INDEX_FILE,
    REVIEW_MAX_CHARS,
    REVIEWS_FILE,
)
from trace_dataset.io import TraceDataError, write_json, write_jsonl


def _partial_kb(sample, out):
    from trace_dataset.kb.classify import classify
    from trace_dataset.yelp.reader import iter_businesses, iter_reviews

    businesses = {
        b.business_id: b
        for b in iter_businesses(sample)
        if b.in_trace_city and b.latitude is not None and classify(b.categories)
    }
    reviews = defaultdict(list)
    for r in iter_reviews(sample):
        if r.business_id in businesses and r.text.strip():
            reviews[r.business_id].append(r)
    cells = defaultdict(list)
    for bid in sorted(reviews):
        b = businesses[bid]
        cells[(b.city, classify(b.categories))].append(b)
    full = {k: v for k, v in cells.items() if len(v) >= 8}
    if not full:
        return None, {f"{c} x {t}": len(v) for (c, t), v in sorted(cells.items())}
    pois, index, texts = [], [], []
    for (city, ptype), members in sorted(full.items()):
        for b in members:
            rs = sorted(reviews[b.business_id], key=lambda r: r.review_id)
            pois.append(
                {
                    "business_id": b.business_id,
                    "name": b.name,
                    "address": b.address,
                    "city": city,
                    "state": b.state,
                    "latitude": b.latitude,
                    "longitude": b.longitude,
                    "categories": list(b.categories),
                    "stars": b.stars,
                    "review_count": b.review_count,
                    "price": b.price,
                    "attributes": b.attributes,
                    "poi_type": ptype,
                    "review_ids": [r.review_id for r in rs],
                }
            )
            for r in rs:
                index.append(
                    {
                        "review_id": r.review_id,
                        "business_id": r.business_id,
                        "stars": r.stars,
                        "date": r.date,
                        "length": len(r.text),
                    }
                )
                texts.append(
                    {
                        "review_id": r.review_id,
                        "business_id": r.business_id,
                        "stars": r.stars,
                        "date": r.date,
                        "text": r.text[:REVIEW_MAX_CHARS],
                    }
                )
    out.mkdir(parents=True)
    write_jsonl(out / POIS_FILE, pois)
    write_jsonl(out / REVIEW_INDEX_FILE, index)
    write_jsonl(out / REVIEWS_FILE, texts)
    write_json(
        out / KB_META_FILE,
        {
            "source": "yelp sample (partial, test)",
            "kb_version": hashlib.sha256(repr(sorted(full)).encode()).hexdigest(),
        },
    )
    return out, {f"{c} x {t}": len(v) for (c, t), v in sorted(full.items())}


def test_corpus_from_the_real_yelp_sample(yelp_sample_dir, tmp_path):
    from trace_dataset.generate import generate_corpus
    from trace_dataset.kb.build import build_kb
    from trace_dataset.kb.store import KnowledgeBase

    try:
        build_kb(yelp_sample_dir, tmp_path / "kb_full", per_cell=8, min_reviews=1)
        kb_dir = tmp_path / "kb_full"
    except TraceDataError as e:
        assert "short" in str(e)  # the builder names the cells it cannot fill
        kb_dir, cells = _partial_kb(yelp_sample_dir, tmp_path / "kb_partial")
        if kb_dir is None:
            pytest.skip(f"the real Yelp sample fills no city x type cell with 8 reviewed POIs: {cells}")
    report = generate_corpus(kb_dir, tmp_path / "corpus", n=12, seed=42, workers=1, progress=False)
    assert report["counts"]["dialogues"] == 12
    kb = KnowledgeBase.load(kb_dir)
    from trace_dataset.datadir import iter_dialogues

    dialogues = list(iter_dialogues(tmp_path / "corpus"))
    assert len(dialogues) == 12
    for d in dialogues:
        assert d["scenario"]["city"] in CITY_NAMES
        check_dialogue(d, kb)
