"""The `entailment` evaluate module: loads through `evaluate.load`, is thin over the library, and its metric
card's examples run and print what the card says (offline, on a tiny random-weight NLI model)."""

from __future__ import annotations

import pytest

pytest.importorskip("torch", reason="the entailment metric needs the models extra (torch, transformers)")

import evaluate  # noqa: E402

from trace_metrics._testing import MODULES, run_card_examples  # noqa: E402
from trace_metrics.lib.entailment import NLIModelError, NLIScorer, aggregate_entailment, entailment_scores  # noqa: E402
from trace_metrics.lib.grounding import analyse  # noqa: E402
from trace_metrics.lib.tiny_nli import write_tiny_nli_model  # noqa: E402

HERE = MODULES / "entailment"  # the evaluate module folder: module, metric card, examples
PREDICTIONS = [
    'I recommend Cafe A [R1]. The beignets are "fresh and hot" [R1]. It has 4.5 stars.',
    "Here are two options. Cafe B is quiet [R2].",
    "Nothing cited here.",
]
REFERENCES = [["The beignets are fresh and hot."], ["Cafe A review", "Cafe B is quiet and cozy."], []]


@pytest.fixture(scope="module")
def nli_dir(tmp_path_factory):
    return write_tiny_nli_model(tmp_path_factory.mktemp("nli") / "tiny")


@pytest.fixture(scope="module")
def metric():
    return evaluate.load(str(HERE))


def test_compute_equals_the_library(metric, nli_dir):
    res = metric.compute(
        predictions=PREDICTIONS,
        references=REFERENCES,
        model=str(nli_dir),
        cache_path=False,
        return_per_item=True,
        thresholds=[0.3],
    )
    scorer = NLIScorer(nli_dir, cache_path=False, show_progress=False)
    items = entailment_scores(PREDICTIONS, REFERENCES, scorer)
    analyses = [analyse(p, r) for p, r in zip(PREDICTIONS, REFERENCES, strict=True)]
    expected = aggregate_entailment(
        items,
        [a.citation_density() for a in analyses],
        [a.provenance_coverage() for a in analyses],
        thresholds=[0.3],
        return_per_item=True,
    )
    for key, value in expected.items():
        assert res[key] == pytest.approx(value), key
    assert res["n"] == 3 and res["n_without_premises"] == 1 and res["nli_entailment_label"] == "entailment"
    assert res["nli_model_key"] == scorer.model_key and res["threshold"] == 0.5
    assert 0.0 <= res["entailment"] <= 1.0 and 0.0 <= res["cgs_ent"] <= res["entailment"]


def test_given_cd_and_pc_are_used(metric, nli_dir):
    res = metric.compute(
        predictions=PREDICTIONS,
        references=REFERENCES,
        model=str(nli_dir),
        cache_path=False,
        threshold=0.0,
        citation_density=[0.025, 0.1, 0.0],
        provenance_coverage=[0.0, 1.0, 1.0],
        return_per_item=True,
    )
    # threshold 0: every claim with a premise is entailed -> entailment 1, 1, 0
    assert res["entailment_per_item"] == [1.0, 1.0, 0.0]
    assert res["cgs_ent_per_item"] == [pytest.approx(0.25), pytest.approx(1.0), 0.0]


def test_claims_and_scorer_reuse(metric, nli_dir, tmp_path):
    scorer = NLIScorer(nli_dir, cache_path=tmp_path / "c.sqlite", show_progress=False)
    res = metric.compute(predictions=PREDICTIONS, references=REFERENCES, scorer=scorer, return_claims=True)
    assert [c["category"] for c in res["claims"][0]] == ["Framing", "Quote", "Rating-meta"]
    calls = scorer.model_calls
    metric.compute(predictions=PREDICTIONS, references=REFERENCES, scorer=scorer)
    assert scorer.model_calls == calls  # second run: all from the cache


def test_unknown_option_is_refused(metric):
    with pytest.raises(TypeError, match="unknown option"):
        metric.compute(predictions=["x"], references=[["x"]], treshold=0.4)


def test_no_model_fails_with_instructions(metric, tmp_path):
    with pytest.raises(NLIModelError, match="--nli /path/to/model"):
        metric.compute(
            predictions=["x [R1]."], references=[["x"]], model=str(tmp_path / "missing"), cache_path=False
        )


def test_card_examples_run():
    assert run_card_examples(HERE / "README.md") >= 8
