"""Fixtures for the generator tests: a hand-made KB (always), a corpus generated from it, and a small KB
built by the Yelp-area code from the synthetic bundle (skipped, with the reason, where that code fails)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.gen_kb import write_fixture_kb

FIXTURE_N = 120


@pytest.fixture(scope="session")
def fixture_kb(tmp_path_factory) -> Path:
    return write_fixture_kb(tmp_path_factory.mktemp("gen_kb") / "kb")


@pytest.fixture(scope="session")
def fixture_corpus(fixture_kb, tmp_path_factory) -> tuple[Path, dict]:
    from trace_dataset.generate import generate_corpus

    out = tmp_path_factory.mktemp("gen_corpus") / "corpus"
    report = generate_corpus(fixture_kb, out, n=FIXTURE_N, seed=42, workers=1, progress=False)
    return out, report


@pytest.fixture(scope="session")
def fixture_dialogues(fixture_corpus) -> list[dict]:
    from trace_dataset.datadir import iter_dialogues

    return list(iter_dialogues(fixture_corpus[0]))


@pytest.fixture(scope="session")
def synthetic_kb(tmp_path_factory) -> Path:
    """A KB built with the Yelp area's synthetic bundle and KB builder (scale 0.1, 11 POIs per cell)."""
    try:
        from trace_dataset.kb.build import build_kb
        from trace_dataset.yelp.synth import write_synthetic_bundle
    except ImportError as e:
        pytest.skip(f"the Yelp area's synthetic bundle / KB builder is not importable: {e}")
    root = tmp_path_factory.mktemp("gen_synth")
    bundle = write_synthetic_bundle(root / "bundle", seed=42, scale=0.1)
    build_kb(bundle, root / "kb", per_cell=11)
    return root / "kb"


@pytest.fixture(scope="session")
def synthetic_corpus(synthetic_kb, tmp_path_factory) -> tuple[Path, dict]:
    """1,000 dialogues from the synthetic KB (tier distribution, alternatives, release-style leak check)."""
    from trace_dataset.generate import generate_corpus

    out = tmp_path_factory.mktemp("gen_synth_corpus") / "corpus"
    report = generate_corpus(synthetic_kb, out, n=1000, seed=42, workers=2, progress=False)
    return out, report


@pytest.fixture(scope="session")
def full_scale_corpus(tmp_path_factory) -> Path:
    """1,000 dialogues over the built-in corpus's knowledge base (the synthetic bundle at scale 1, 100 POIs per
    cell, as the main job builds it): every name the built-in corpus can use. About 45 s here (slow tests)."""
    from trace_dataset.generate import generate_corpus
    from trace_dataset.kb.build import build_kb
    from trace_dataset.yelp.synth import write_synthetic_bundle

    root = tmp_path_factory.mktemp("gen_full")
    bundle = write_synthetic_bundle(root / "bundle", seed=42, scale=1.0)
    build_kb(bundle, root / "kb", per_cell=100)
    generate_corpus(root / "kb", root / "corpus", n=1000, seed=42, workers=2, progress=False)
    return root / "corpus"
