"""Fixtures: tiny random-weight DeBERTa-v2 NLI models built offline (no Hub access)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="the entailment tests need the models extra (torch, transformers)")
pytest.importorskip("transformers", reason="the entailment tests need the models extra (torch, transformers)")

from trace_metrics.lib.tiny_nli import relabel, write_tiny_nli_model

LABELS = {0: "contradiction", 1: "neutral", 2: "entailment"}  # entailment at a non-default index
PERMUTED = {0: "ENTAILMENT", 1: "neutral", 2: "contradiction"}  # same weights, labels permuted


@pytest.fixture(scope="session")
def tiny_nli_dir(tmp_path_factory) -> Path:
    return write_tiny_nli_model(tmp_path_factory.mktemp("tiny_nli") / "model", LABELS)


@pytest.fixture(scope="session")
def permuted_nli_dir(tiny_nli_dir, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("tiny_nli_permuted") / "model"
    shutil.copytree(tiny_nli_dir, out)
    relabel(out, PERMUTED)
    return out


class FakeScorer:
    """An NLI scorer with fixed probabilities per claim text (for threshold and aggregation tests)."""

    def __init__(self, probs: dict[str, float], threshold: float = 0.5, default: float = 0.0):
        self.probs = probs
        self.threshold = threshold
        self.default = default
        self.calls: list[list[tuple[str, str]]] = []

    def entailment_probs(self, pairs):
        self.calls.append(list(pairs))
        return [self.probs.get(claim, self.default) for _, claim in pairs]


@pytest.fixture
def fake_scorer():
    return FakeScorer
