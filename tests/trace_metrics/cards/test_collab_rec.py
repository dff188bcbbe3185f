"""The collab_rec evaluate module: loadable by path, card examples run, alignment and the catalogue checked."""

from __future__ import annotations

import evaluate
import pytest

from trace_metrics._testing import MODULES, run_card_examples

HERE = MODULES / "collab_rec"  # the evaluate module folder: module, metric card, examples


@pytest.fixture(scope="module")
def metric():
    return evaluate.load(str(HERE))


def test_card_examples_run():
    assert run_card_examples(HERE / "README.md") >= 4


def test_per_item_and_hallucinated_names(metric):
    out = metric.compute(
        predictions=[["a", "zz"], []], satisfied=[[1.0, 0.0], []], catalogue=["a", "b"], return_per_item=True
    )
    assert out["moderator_success_per_item"] == [0.5, 0.0] and out["moderator_success"] == 0.25
    assert out["out_of_catalogue"] == 1 and out["coverage"] == 0.5 and out["reliability"] is None


def test_bad_inputs(metric):
    with pytest.raises(ValueError, match="catalogue"):
        metric.compute(predictions=[["a"]], satisfied=[[1.0]])
    with pytest.raises(ValueError, match="filter fractions"):
        metric.compute(predictions=[["a", "b"]], satisfied=[[1.0]], catalogue=["a", "b"])
    with pytest.raises(ValueError, match="outside"):
        metric.compute(predictions=[["a"]], satisfied=[[1.5]], catalogue=["a"])


def test_declared_on_its_own_benchmark(metric):
    """Collab-REC's metrics are declared on its own benchmark, apart from Trace's (README): every metric key
    the module returns is one of those declarations, and none is a metric of the Trace suite."""
    from trace_metrics import specs

    declared = {s.id for s in specs.by_module("collab_rec")}
    assert {s.benchmark for s in specs.by_module("collab_rec")} == {"collab_rec"}
    out = metric.compute(predictions=[["a"]], satisfied=[[1.0]], catalogue=["a", "b"], return_per_item=True)
    assert set(out) & set(specs.METRIC_IDS) == declared
    assert declared & {s.id for s in specs.SUITE_METRICS} == set()
