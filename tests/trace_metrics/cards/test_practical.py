"""The practical evaluate module: loadable by path, POIs from a dict or a KB folder, card examples run."""

from __future__ import annotations

import evaluate
import pytest

from trace_metrics._testing import MODULES, run_card_examples
from trace_metrics.lib.toy import write_toy_kb

HERE = MODULES / "practical"  # the evaluate module folder: module, metric card, examples


@pytest.fixture(scope="module")
def metric():
    return evaluate.load(str(HERE))


def test_card_examples_run():
    assert run_card_examples(HERE / "README.md") >= 3


def test_kb_dir(metric, tmp_path):
    kb = write_toy_kb(tmp_path / "kb")
    # r01 $ and r02 $$ are ~90 m apart; h01 is a $$$ hotel nearby; the user asks for something "moderate"
    out = metric.compute(
        predictions=[["r01", "r02", "h01"]],
        references=[["Something moderate."]],
        kb_dir=str(kb),
        radius_km=1.0,
        return_per_item=True,
    )
    assert out["spatial_coherence@1km"] == 1.0
    assert out["price_alignment"] == 1.0
    assert out["itinerary_diversity"] == pytest.approx(2 / 3)
    assert out["route_efficiency_km_per_item"][0] > 0


def test_needs_exactly_one_poi_source(metric, tmp_path):
    with pytest.raises(ValueError, match="exactly one"):
        metric.compute(predictions=[["a"]], references=[[""]])
    with pytest.raises(ValueError, match="not in `pois`"):
        metric.compute(predictions=[["a"]], references=[[""]], pois={})
