"""The prediction record: its fields are the schema's, and a JSON line goes through it byte for byte."""

from __future__ import annotations

import dataclasses
import json

import datasets
import pytest

from trace_dataset.prediction import Prediction
from trace_dataset.schema import PREDICTION_FEATURES, PREDICTION_OPTIONAL_FIELDS, PREDICTION_REQUIRED_FIELDS

LINES = [
    # an LLM baseline's fallback row: citations, meta with nested counts, non-ASCII text and escapes
    '{"dialogue_id":"crs_yelp_00011","turn_id":3,"ranked_poi_ids":["h_sz","xW15","Xah"],'
    '"response":"I recommend Café \\"Rosa\\", rated 4.5 stars. One reviewer says \\"great\\" [R1] [R2].",'
    '"citations":{"R2":"rv_b","R1":"rv_a"},'
    '"meta":{"fallback":"popularity","fallback_reason":"invalid JSON","counts":{"fallback_popularity":1,'
    '"unknown_labels":2},"model_ranking":["P2","P1"],"score":0.125,"dst_delta":null}}',
    # a farewell: no ranking, no citations, no meta
    '{"dialogue_id":"crs_yelp_00011","turn_id":9,"ranked_poi_ids":[],"response":"Enjoy Tampa!","citations":{}}',
    # an explicit empty meta stays
    '{"dialogue_id":"d","turn_id":0,"ranked_poi_ids":["a"],"response":"","citations":{},"meta":{}}',
]


def test_record_fields_are_the_schema_prediction_fields():
    names = [f.name for f in dataclasses.fields(Prediction)]
    assert PREDICTION_REQUIRED_FIELDS == tuple(PREDICTION_FEATURES)
    assert names == [*PREDICTION_REQUIRED_FIELDS, *PREDICTION_OPTIONAL_FIELDS]
    record = Prediction.from_dict(json.loads(LINES[0]))
    assert list(record.to_dict()) == names and list(record) == names
    assert list(record.to_features()) == list(PREDICTION_FEATURES)


def test_features_form_loads_with_the_schema_features():
    records = [Prediction.from_dict(json.loads(line)) for line in LINES]
    ds = datasets.Dataset.from_list([r.to_features() for r in records], features=PREDICTION_FEATURES)
    assert ds.features == PREDICTION_FEATURES
    assert ds[0] == records[0].to_features()
    assert ds[0]["citations"] == [{"label": "R2", "review_id": "rv_b"}, {"label": "R1", "review_id": "rv_a"}]


@pytest.mark.parametrize("line", LINES)
def test_a_line_round_trips_byte_for_byte(line):
    record = Prediction.from_dict(json.loads(line))
    assert record.to_json() == line
    assert record.to_dict() == json.loads(line) == record  # the mapping view is the JSON object


def test_the_record_is_frozen_and_reads_as_its_json_object():
    record = Prediction.from_dict(json.loads(LINES[0]))
    assert record.ranked_poi_ids == ("h_sz", "xW15", "Xah") and record["ranked_poi_ids"] == [
        "h_sz",
        "xW15",
        "Xah",
    ]
    assert record.meta is not None and record.meta["counts"] == {
        "fallback_popularity": 1,
        "unknown_labels": 2,
    }
    assert dict(record) == record.to_dict() and len(record) == 6
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.response = "changed"  # type: ignore[misc]
    bare = Prediction("d", 1, (), "Bye.", {})
    assert "meta" not in bare and bare.get("meta") is None and len(bare) == 5
    assert (
        bare.to_json()
        == '{"dialogue_id":"d","turn_id":1,"ranked_poi_ids":[],"response":"Bye.","citations":{}}'
    )
    with pytest.raises(KeyError):
        bare["meta"]
    with pytest.raises(KeyError):
        bare["scores"]
