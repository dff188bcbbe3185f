"""End to end with the other areas' code: synthetic Yelp bundle -> knowledge base -> corpus -> release ->
hydrate from the same bundle == corpus, byte for byte (knowledge-base review file included)."""

from __future__ import annotations

import datasets
import pytest

from tests.support.tinydata import assert_same_corpus, overlap, review_sixgrams, write_corpus
from trace_dataset import load_trace
from trace_dataset.release import hydrate_release, write_release


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    from trace_dataset.kb.build import build_kb
    from trace_dataset.yelp.synth import write_synthetic_bundle

    root = tmp_path_factory.mktemp("e2e")
    bundle = write_synthetic_bundle(root / "bundle", seed=42, scale=0.2)
    build_kb(bundle, root / "kb", per_cell=14)
    return root, bundle


def test_hand_made_corpus_over_the_built_kb(synthetic, tmp_path):
    """The knowledge-base builder's reviews.jsonl.gz is rebuilt exactly by hydration."""
    root, bundle = synthetic
    corpus = write_corpus(tmp_path / "corpus", root / "kb", n=12)
    meta = write_release(corpus, tmp_path / "rel")
    assert meta["quotes"] == 48
    report = hydrate_release(tmp_path / "rel", bundle, tmp_path / "hyd")
    assert report["byte_identical"] is True
    assert_same_corpus(tmp_path / "hyd", corpus)


def test_generated_corpus_round_trip(synthetic, tmp_path):
    from trace_dataset import generate

    root, bundle = synthetic
    corpus = tmp_path / "corpus"
    generate.generate_corpus(root / "kb", corpus, n=24, seed=42, workers=1, progress=False)
    meta = write_release(corpus, tmp_path / "rel")
    assert sum(meta["dialogues"].values()) == 24 and meta["quotes"] > 0
    assert overlap(corpus, review_sixgrams(root / "kb"))  # the generator quotes six-word runs ...
    assert overlap(tmp_path / "rel", review_sixgrams(root / "kb")) == []  # ... the release holds none
    report = hydrate_release(tmp_path / "rel", bundle, tmp_path / "hyd")
    assert report["byte_identical"] is True and report["quotes_unhydrated"] == 0
    assert_same_corpus(tmp_path / "hyd", corpus)
    # the generator's records fit the schema: plain `datasets` and every builder config load them
    ds = datasets.load_dataset(str(tmp_path / "hyd"), cache_dir=str(tmp_path / "cache"))
    assert sum(d.num_rows for d in ds.values()) == 24
    for config in ("turns", "turns_open", "knowledge_base", "reviews"):
        assert all(
            d.num_rows for d in load_trace(tmp_path / "hyd", config, cache_dir=tmp_path / "c").values()
        )
