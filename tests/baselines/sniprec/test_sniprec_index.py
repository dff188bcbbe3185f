"""Dense retrieval over units with a stand-in encoder (a fixed vector per word, no model): top-k order and
ties, the small-set and catalogue-scale paths agreeing, one row per distinct text, the vector cache."""

from __future__ import annotations

import numpy as np
import pytest

from baselines.sniprec.index import UnitIndex
from baselines.sniprec.store import RulesExtractor, UnitStore
from tests.support.sniprec import DIM, CountingEncoder, WordEncoder


@pytest.fixture
def index(kb, tmp_path):
    store = UnitStore(kb, RulesExtractor("rules"), tmp_path / "cache")
    return UnitIndex(store, "test-encoder", cache_dir=tmp_path / "cache", model=WordEncoder())


def test_top_k_is_sorted_by_cosine_with_ties_in_unit_order(index, kb):
    ids = sorted(kb.pois)
    index.ensure(ids)
    query = index.encode(["This place is categorized as Restaurants."])[0]
    hits = index.top_k(query, ids, 6)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    # every POI has the identical template unit (cosine 1.0): the four-way tie goes by candidate order
    assert [(h.poi_id, h.score) for h in hits[:4]] == [(p, 1.0) for p in ids] and hits[4].score < 1.0
    for h in hits[:4]:
        assert index.store.units(h.poi_id)[h.unit].text == "This place is categorized as Restaurants."
    assert index.top_k(query, list(reversed(ids)), 2) == [h for h in index.top_k(query, ids[::-1], 4)][:2]
    assert [h.poi_id for h in index.top_k(query, list(reversed(ids)), 2)] == ids[::-1][:2]


def test_the_catalogue_path_gives_the_small_set_path_hits(index, kb, monkeypatch):
    import baselines.sniprec.index as module

    ids = sorted(kb.pois)
    index.ensure(ids)
    queries = index.encode(["fresh oysters and seafood", "quiet vegan salads", "cold beer on the patio"])
    monkeypatch.setattr(module, "GATHER_SHARE", 10.0)  # every candidate set gathered
    index._matrices.clear()
    gathered = index.top_k_many(queries, ids, 5)
    assert index.view(ids)[3] is not None
    monkeypatch.setattr(module, "GATHER_SHARE", 0.0)  # scored on the distinct vectors, then gathered
    index._matrices.clear()
    catalogue = index.top_k_many(queries, ids, 5)
    assert index.view(ids)[3] is None
    assert catalogue == gathered and all(len(h) == 5 for h in catalogue)
    assert catalogue == index.top_k_many(queries[::-1], ids, 5)[::-1]  # the batch changes nothing


def test_distinct_texts_share_a_row_and_vectors_are_cached(index, kb, tmp_path):
    ids = sorted(kb.pois)
    index.ensure(ids)
    mem = index.memory_bytes()
    n_units = sum(len(index.store.units(p)) for p in ids)
    assert mem["units"] == n_units and mem["distinct_texts"] < n_units  # the category template repeats
    again = UnitIndex(
        UnitStore(kb, RulesExtractor("rules"), tmp_path / "cache"),
        "test-encoder",
        cache_dir=tmp_path / "cache",
        model=WordEncoder(),
    )
    again.ensure(ids)
    assert again.encoded == 0 and index.encoded == mem["distinct_texts"]


def test_encoding_goes_in_parts_each_kept_when_a_later_part_is_interrupted(kb, tmp_path, monkeypatch):
    import baselines.sniprec.index as module

    monkeypatch.setattr(module, "ENCODE_PART", 5)
    texts = [f"text number {i}" for i in range(12)] + ["text number 0"]  # one repeat: encoded once
    store = UnitStore(kb, RulesExtractor("rules"), tmp_path / "cache")
    broken = UnitIndex(store, "test-encoder", cache_dir=tmp_path / "cache", model=CountingEncoder(fail_on=2))
    with pytest.raises(KeyboardInterrupt):
        broken.encode(texts)
    assert broken.model.calls == [5, 5] and broken.encoded == 10
    again = UnitIndex(store, "test-encoder", cache_dir=tmp_path / "cache", model=CountingEncoder())
    vectors = again.encode(texts)
    assert again.model.calls == [2] and again.encoded == 2  # only what the interrupted encode had not stored
    assert vectors.shape == (13, DIM) and np.array_equal(vectors[0], vectors[12])
    assert np.allclose(vectors, WordEncoder().encode(texts))


def test_encoder_threads_are_set_for_the_encode_only_and_validated(kb, tmp_path):
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    seen = []

    class ThreadProbe(WordEncoder):
        def encode(self, texts, **kwargs):
            seen.append(torch.get_num_threads())
            return super().encode(texts, **kwargs)

    store = UnitStore(kb, RulesExtractor("rules"), tmp_path / "cache")
    index = UnitIndex(store, "test-encoder", cache_dir=tmp_path / "cache", model=ThreadProbe(), threads=1)
    index.ensure(sorted(kb.pois))
    assert seen == [1] and torch.get_num_threads() == before
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="encoder threads"):
            UnitIndex(store, "test-encoder", cache_dir=tmp_path / "cache", model=WordEncoder(), threads=bad)
