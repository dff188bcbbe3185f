"""The `human` evaluate module: loads through `evaluate.load`, equals the library, and its metric card's
examples run and print what the card says."""

from __future__ import annotations

import json

import evaluate
import pytest

from trace_dataset.io import TraceDataError
from trace_metrics._testing import MODULES, run_card_examples
from trace_metrics.lib.human import human_metrics
from trace_metrics.lib.human_format import REQUIRED_FIELDS, annotation_columns

HERE = MODULES / "human"  # the evaluate module folder: module, metric card, examples
S, P, N = "Supported", "Partial", "Not supported"
ROWS = [
    ("d1:a", "A1", [S, S], ["too_vague"], 2, 2),
    ("d1:a", "A2", [S, P], ["too_vague"], 1, 3),
    ("d1:a", "A3", [S, P], ["no_errors"], 2, 2),
    ("d1:b", "A1", [N], ["fabrication"], 4, 5),
    ("d1:b", "A2", [N], ["fabrication", "wrong_poi"], 5, 4),
    ("d1:b", "A3", [S], [], 4, None),
    ("d2:a", "A1", [], ["no_errors"], 3, 2),
    ("d2:a", "A2", [], ["too_vague"], 3, 2),
    ("d2:b", "A1", [S, S], ["exaggeration"], 4, 4),
    ("d2:b", "A3", [P, S], ["exaggeration"], 5, 5),
]


@pytest.fixture
def annotations(tmp_path):
    path = tmp_path / "ann.jsonl"
    with open(path, "w") as f:
        for item, annotator, labels, errors, info, nat in ROWS:
            dialogue, baseline = item.split(":")
            row = dict(
                zip(
                    REQUIRED_FIELDS,
                    (item, annotator, baseline, dialogue, labels, errors, info, nat),
                    strict=True,
                )
            )
            f.write(json.dumps(row) + "\n")
    return path


@pytest.fixture(scope="module")
def metric():
    return evaluate.load(str(HERE))


def test_compute_equals_the_library(metric, annotations):
    auto = {"d1:a": {"cgs": 0.9}, "d1:b": {"cgs": 0.2}, "d2:a": {"cgs": 0.7}, "d2:b": {"cgs": 0.5}}
    res = metric.compute(**annotation_columns(annotations), auto_scores=auto)
    lib = human_metrics(annotations, auto_scores=auto)
    assert (
        res["spearman_human_citation_precision_vs_cgs"]
        == lib["correlation"]["human_citation_precision"]["cgs"]["rho"]
    )
    assert res["spearman_p_human_naturalness_vs_cgs"] == lib["correlation"]["human_naturalness"]["cgs"]["p"]
    assert (
        res["human_citation_precision"] == lib["values"]["human_citation_precision"] == pytest.approx(2 / 5)
    )
    assert res["human_naturalness"] == pytest.approx((7 / 3 + 4.5 + 2 + 4.5) / 4)
    for scale in ("informativeness", "naturalness", "citation", "errors"):
        assert res[f"alpha_{scale}"] == lib["alpha"][scale]
    assert (res["n_items"], res["n_annotators"], res["n_quotes"]) == (4, 3, 5)


def test_bad_input_is_refused(metric, annotations):
    columns = annotation_columns(annotations)
    columns["informativeness"][0] = 7
    with pytest.raises(TraceDataError, match="inputs:1: field 'informativeness' is 7"):
        metric.compute(**columns)


def test_card_examples_run():
    assert run_card_examples(HERE / "README.md") >= 10
