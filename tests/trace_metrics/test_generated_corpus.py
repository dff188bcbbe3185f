"""Integration with the generator: on a generated corpus, the reference-copy system is perfectly
accurate and fully grounded, because every generated quote is a verbatim span of the review it cites."""

from __future__ import annotations

import pytest

from trace_dataset.datadir import iter_dialogues
from trace_dataset.io import write_jsonl
from trace_metrics.lib import suite
from trace_metrics.lib.toy import reference_predictions


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    from trace_dataset import generate
    from trace_dataset.kb import build
    from trace_dataset.yelp import synth

    root = tmp_path_factory.mktemp("generated")
    bundle = synth.write_synthetic_bundle(root / "yelp", seed=42, scale=0.1)
    build.build_kb(bundle, root / "kb", per_cell=10)
    generate.generate_corpus(root / "kb", root / "corpus", n=24, progress=False)
    return root / "corpus"


def test_reference_copy_scores(corpus, tmp_path):
    dialogues = list(iter_dialogues(corpus, "train"))
    path = tmp_path / "ref.jsonl"
    write_jsonl(path, reference_predictions(dialogues))
    r = suite.evaluate_run(corpus, path, split="train", pool="closed", sweeps=True)
    v = r["values"]
    assert v["recall@1"] == 1.0 and v["mrr"] == 1.0 and v["tsr"] == 1.0 and v["t2r"] == 1.0
    assert v["grounding_score"] == 1.0 and r["sweeps"]["fuzzy_threshold"]["exact"]["grounding_score"] == 1.0
    assert (
        r["counts"]["quotes"] > 0
        and r["counts"]["unresolved_labels"] == 0
        and r["counts"]["unknown_review_ids"] == 0
    )
    assert 0.0 < v["citation_density"] <= 1.0 and v["rouge_l"] == 1.0
    assert r["n"]["rejection_recovery"] > 0 and v["rejection_recovery"] == 1.0
    assert r["versions"]["corpus"] and r["versions"]["kb"]
