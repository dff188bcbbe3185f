"""Fixtures of the docs tests: a small Trace data directory for the tested examples (TRACE_DATA)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def docs_data(tmp_path_factory) -> Path:
    """A small, complete data directory (review texts included, as after hydration) from the synthetic bundle:
    60 dialogues over a 9-POIs-per-cell knowledge base. Built once per session, only for pages that need it."""
    from trace_dataset.generate import generate_corpus
    from trace_dataset.kb.build import build_kb
    from trace_dataset.yelp.synth import write_synthetic_bundle

    root = tmp_path_factory.mktemp("docs_data")
    write_synthetic_bundle(root / "yelp", seed=42, scale=0.1)
    build_kb(root / "yelp", root / "kb", per_cell=9)
    generate_corpus(root / "kb", root / "data", n=60, seed=42, workers=1, progress=False)
    return root / "data"
