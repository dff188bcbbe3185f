"""Predictions loading and validation: every failure names counts, ids and what was expected."""

from __future__ import annotations

import gzip
import json

import pytest

from trace_dataset.io import TraceDataError, write_jsonl
from trace_dataset.prediction import Prediction
from trace_metrics.lib.predictions import load_predictions, normalize_citations, validate_predictions
from trace_metrics.lib.toy import reference_predictions, toy_dialogues


@pytest.fixture
def dialogues():
    return [d for d in toy_dialogues() if d["split"] == "test"]


@pytest.fixture
def rows(dialogues):
    return reference_predictions(dialogues)


def test_load_plain_and_gzip(tmp_path, rows):
    write_jsonl(tmp_path / "p.jsonl", rows)
    write_jsonl(tmp_path / "p.jsonl.gz", rows)
    assert load_predictions(tmp_path / "p.jsonl") == rows == load_predictions(tmp_path / "p.jsonl.gz")
    with gzip.open(tmp_path / "p.jsonl.gz", "rt") as f:
        assert len(f.readlines()) == 10


def test_load_errors_name_file_and_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"dialogue_id": "a"}\n\n{broken\n', encoding="utf-8")
    with pytest.raises(TraceDataError, match=r"bad.jsonl:3: not valid JSON"):
        load_predictions(path)
    path.write_text("[1, 2]\n", encoding="utf-8")
    with pytest.raises(TraceDataError, match=r"bad.jsonl:1: expected a JSON object"):
        load_predictions(path)
    with pytest.raises(TraceDataError, match="not found"):
        load_predictions(tmp_path / "nope.jsonl")


def test_valid_rows_index(rows, dialogues):
    index = validate_predictions(rows, dialogues, pool="closed", split="test")
    assert len(index) == 10 and index[("toy_00001", 3)]["citations"] == {"R1": "rv01"}


def test_missing_duplicate_unknown_counted_with_first_ids(rows, dialogues):
    bad = rows[2:] + [rows[5], dict(rows[0], turn_id=2), dict(rows[0], dialogue_id="toy_99999")]
    with pytest.raises(TraceDataError) as e:
        validate_predictions(bad, dialogues, split="test", path="preds.jsonl")
    msg = str(e.value)
    assert msg.startswith("preds.jsonl: predictions do not match the 10 system turns of split 'test'")
    assert "2 missing (first: toy_00001/1, toy_00001/3)" in msg
    assert "1 duplicate (first: toy_00002/3)" in msg
    assert "2 unknown: no such system turn in split 'test' (first: toy_00001/2, toy_99999/1)" in msg


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"turn_id": "3"}, "turn_id '3' is not an integer"),
        ({"turn_id": True}, "turn_id True is not an integer"),
        ({"dialogue_id": ""}, "dialogue_id '' is not a non-empty string"),
        ({"ranked_poi_ids": "r01"}, "ranked_poi_ids is not a list of non-empty strings"),
        ({"ranked_poi_ids": ["r01", ""]}, "ranked_poi_ids is not a list of non-empty strings"),
        ({"ranked_poi_ids": ["r01", "r02", "r01"]}, r"ranked_poi_ids lists \['r01'\] more than once"),
        ({"response": None}, "response is NoneType; expected a string"),
        ({"citations": {"S1": "rv01"}}, "citation label 'S1' is not of the form"),
        ({"citations": {"R1": ""}}, "citation R1 has review_id ''"),
        ({"citations": "R1"}, "citations is str"),
        ({"score": 1}, r"unknown field\(s\) \['score'\]"),
    ],
)
def test_malformed_rows(rows, dialogues, change, message):
    bad = list(rows)
    bad[4] = {**bad[4], **change}
    with pytest.raises(TraceDataError, match=r"1 malformed prediction row\(s\): row 5: " + message):
        validate_predictions(bad, dialogues, split="test")


def test_missing_field(rows, dialogues):
    bad = list(rows)
    bad[0] = {k: v for k, v in bad[0].items() if k != "citations"}
    with pytest.raises(TraceDataError, match=r"row 1: missing field\(s\) \['citations'\]"):
        validate_predictions(bad, dialogues, split="test")


def test_meta_is_allowed_and_citation_list_form(rows, dialogues):
    rows[0]["meta"] = {"raw": "..."}
    rows[1]["citations"] = [{"label": "R1", "review_id": "rv01"}]
    index = validate_predictions(rows, dialogues, split="test")
    assert index[("toy_00001", 3)]["citations"] == {"R1": "rv01"} and "meta" not in index[("toy_00001", 1)]
    with pytest.raises(ValueError, match="twice with different reviews"):
        normalize_citations([{"label": "R1", "review_id": "a"}, {"label": "R1", "review_id": "b"}])


def test_out_of_pool_and_unknown_poi(rows, dialogues):
    rows[1]["ranked_poi_ids"] = ["h01"] + rows[1]["ranked_poi_ids"]  # a hotel: not a closed candidate
    with pytest.raises(
        TraceDataError,
        match=r"1 ranked POI id\(s\) outside the 'closed' pool .*toy_00001/3: 'h01' not a closed candidate",
    ):
        validate_predictions(rows, dialogues, pool="closed", split="test")
    assert validate_predictions(rows, dialogues, pool="pool_16", split="test")  # h01 is in the 16-pool
    assert validate_predictions(rows, dialogues, pool="closed", split="test", check_pool=False)
    with pytest.raises(TraceDataError, match="'h01' not in the knowledge base"):
        validate_predictions(rows, dialogues, split="test", check_pool=False, known_poi_ids={"r01"})


def test_split_and_pool_names(rows, dialogues):
    with pytest.raises(TraceDataError, match=r"3 dialogue\(s\) are not in split 'validation'"):
        validate_predictions(rows, dialogues, split="validation")
    with pytest.raises(ValueError, match="unknown pool 'pool_8'; expected one of"):
        validate_predictions(rows, dialogues, pool="pool_8")
    with pytest.raises(ValueError, match="unknown split 'dev'"):
        validate_predictions(rows, dialogues, split="dev")


def test_rows_are_not_mutated(rows, dialogues):
    before = json.dumps(rows)
    validate_predictions(rows, dialogues, split="test")
    assert json.dumps(rows) == before


def test_label_numbers_are_bounded(rows, dialogues):
    rows[1]["citations"] = {"R1000": "rv01"}  # a huge label would otherwise size the label table
    with pytest.raises(
        TraceDataError, match=r"'R1000' is not of the form 'R1', 'R2', ... \(at most 'R999'\)"
    ):
        validate_predictions(rows, dialogues, split="test")


def test_checked_rows_are_records_without_meta(rows, dialogues):
    rows[0]["meta"] = {"counts": {"fallback_popularity": 1}}
    index = validate_predictions(rows, dialogues, split="test")
    record = index[("toy_00001", 1)]
    assert isinstance(record, Prediction) and record.meta is None
    assert record == {k: v for k, v in rows[0].items() if k != "meta"}


def test_a_malformed_row_in_a_file_is_named_by_file_line_and_field(tmp_path, rows, dialogues):
    rows[2] = {**rows[2], "ranked_poi_ids": [7]}
    path = tmp_path / "run.jsonl"
    write_jsonl(path, rows)
    with pytest.raises(TraceDataError) as e:
        validate_predictions(load_predictions(path), dialogues, split="test", path=path)
    assert str(e.value) == (
        f"{path}: 1 malformed prediction row(s): row 3: ranked_poi_ids is not a list of non-empty strings "
        "(of at most 200 characters)"
    )
