"""Human evaluation (App. K) on a small hand-computed annotation set."""

from __future__ import annotations

import json

import krippendorff
import numpy as np
import pytest
from scipy.stats import spearmanr, ttest_rel

from trace_dataset.io import TraceDataError
from trace_metrics.lib.human import (
    _alpha,
    agreement,
    human_metrics,
    human_metrics_from_rows,
    leave_one_out,
    majority_label,
)
from trace_metrics.lib.human_format import load_annotations, validate_annotation

S, P, N = "Supported", "Partial", "Not supported"


def row(item, annotator, labels, errors, info, nat):
    dialogue, baseline = item.split(":")
    return {
        "item_id": item,
        "annotator": annotator,
        "baseline": baseline,
        "dialogue_id": dialogue,
        "quote_labels": labels,
        "errors": errors,
        "informativeness": info,
        "naturalness": nat,
    }


ROWS = [
    row("d1:tfidf", "A1", [S, S], ["too_vague"], 2, 2),
    row("d1:tfidf", "A2", [S, P], ["too_vague"], 1, 3),
    row("d1:tfidf", "A3", [P, P], ["no_errors"], 2, 2),
    row("d1:llm", "A1", [S, N, S], ["fabrication", "irrelevant_citation"], 4, 5),
    row("d1:llm", "A2", [S, N, P], ["fabrication"], 5, 4),
    row("d1:llm", "A3", [S, P, None], ["irrelevant_citation"], 4, 4),
    row("d2:tfidf", "A1", [S], ["no_errors"], 3, 2),
    row("d2:tfidf", "A2", [S], ["too_vague"], 2, 2),
    row("d2:tfidf", "A3", [N], ["too_vague"], 2, 1),
    row("d2:llm", "A1", [], ["missing_citation"], 5, 5),
    row("d2:llm", "A2", [], ["missing_citation"], 4, 5),
    row("d2:llm", "A3", [], [], None, 4),
]
AUTO = {
    "d1:tfidf": {"cgs": 0.8, "grounding_score": 1.0, "citation_density": 0.6},
    "d1:llm": {"cgs": 0.3, "grounding_score": 0.7, "citation_density": 0.1},
    "d2:tfidf": {"cgs": 0.9, "grounding_score": 1.0, "citation_density": 0.5},
    "d2:llm": {"cgs": 0.0, "grounding_score": 1.0, "citation_density": 0.0},
}


@pytest.fixture
def annotations(tmp_path):
    path = tmp_path / "annotations.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    return path


def test_majority_label_and_ties():
    assert majority_label([S, S, P]) == S
    assert majority_label([S, P]) == P  # tie: the less favourable label
    assert majority_label([S, N, P, P, N]) == N
    assert majority_label([None, None]) is None


def test_items_and_baselines_hand_computed(annotations):
    res = human_metrics(annotations)
    items = res["items"]
    assert items["d1:tfidf"]["majority_labels"] == [S, P]
    assert items["d1:llm"]["majority_labels"] == [S, N, P]
    assert items["d1:tfidf"]["human_citation_precision"] == 0.5
    assert items["d1:llm"]["human_citation_precision"] == pytest.approx(1 / 3)
    assert items["d2:llm"]["human_citation_precision"] is None
    assert items["d1:tfidf"]["human_informativeness"] == pytest.approx(5 / 3)
    assert items["d2:llm"]["human_informativeness"] == 4.5  # A3's missing rating is skipped
    assert items["d1:tfidf"]["error_free_rate"] == pytest.approx(1 / 3)
    assert items["d2:llm"]["error_free_rate"] == 0.0  # A3 did not answer the checklist
    assert items["d1:llm"]["majority_errors"] == ["fabrication", "irrelevant_citation"]

    tfidf, llm = res["per_baseline"]["tfidf"], res["per_baseline"]["llm"]
    assert (tfidf["supported"], tfidf["partial"], tfidf["not_supported"]) == (2, 1, 0)
    assert tfidf["human_citation_precision"] == pytest.approx(2 / 3)  # pooled, as Table 10
    assert tfidf["citation_precision_item_mean"] == pytest.approx(0.75)  # per item, as Table 15
    assert tfidf["human_informativeness"] == pytest.approx(2.0) and tfidf[
        "human_naturalness"
    ] == pytest.approx(2.0)
    assert llm["human_citation_precision"] == pytest.approx(1 / 3)
    assert llm["human_informativeness"] == pytest.approx((13 / 3 + 4.5) / 2)
    assert llm["human_naturalness"] == pytest.approx(4.5)
    assert tfidf["error_rates"]["too_vague"] == 1.0 and llm["error_rates"]["missing_citation"] == 0.5
    assert res["values"]["human_citation_precision"] == 0.5
    assert res["values"]["human_informativeness"] == pytest.approx((5 / 3 + 13 / 3 + 7 / 3 + 4.5) / 4)
    assert res["n"] == {"items": 4, "annotators": 3, "rows": 12, "quotes": 6, "dialogues": 2}


def test_alpha_equals_the_krippendorff_package_on_hand_built_matrices(annotations):
    nan = np.nan
    # units in item order d1:llm, d1:tfidf, d2:llm, d2:tfidf; annotators A1, A2, A3
    info = [[4, 2, 5, 3], [5, 1, 4, 2], [4, 2, nan, 2]]
    nat = [[5, 2, 5, 2], [4, 3, 5, 2], [4, 2, 4, 1]]
    cite = [[0, 2, 0, 0, 0, 0], [0, 2, 1, 0, 1, 0], [0, 1, nan, 1, 1, 2]]  # S=0, P=1, N=2
    cats = [
        "fabrication",
        "wrong_poi",
        "irrelevant_citation",
        "too_vague",
        "missing_citation",
        "exaggeration",
        "factual_error",
        "no_errors",
    ]

    def onehot(selected):
        return [float(c in selected) for c in cats]

    errs = [
        onehot({"fabrication", "irrelevant_citation"})
        + onehot({"too_vague"})
        + onehot({"missing_citation"})
        + onehot({"no_errors"}),
        onehot({"fabrication"})
        + onehot({"too_vague"})
        + onehot({"missing_citation"})
        + onehot({"too_vague"}),
        onehot({"irrelevant_citation"}) + onehot({"no_errors"}) + [nan] * 8 + onehot({"too_vague"}),
    ]
    expected = {
        "informativeness": krippendorff.alpha(
            reliability_data=info, level_of_measurement="ordinal", value_domain=[1, 2, 3, 4, 5]
        ),
        "naturalness": krippendorff.alpha(
            reliability_data=nat, level_of_measurement="ordinal", value_domain=[1, 2, 3, 4, 5]
        ),
        "citation": krippendorff.alpha(reliability_data=cite, level_of_measurement="nominal"),
        "errors": krippendorff.alpha(reliability_data=errs, level_of_measurement="nominal"),
    }
    got = human_metrics(annotations)["alpha"]
    for scale, value in expected.items():
        assert got[scale] == pytest.approx(value)
    assert got["mean"] == pytest.approx(sum(expected.values()) / 4)


def test_alpha_on_krippendorffs_published_example():
    """Krippendorff (2011), 'Computing Krippendorff's Alpha-Reliability': 4 coders x 12 units."""
    nan = np.nan
    data = np.array(
        [
            [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
            [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
            [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
            [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
        ]
    )
    assert _alpha(data, "nominal") == pytest.approx(0.743, abs=5e-4)
    assert _alpha(data, "ordinal", [1, 2, 3, 4, 5]) == pytest.approx(0.815, abs=5e-4)
    assert _alpha(data, "interval") == pytest.approx(0.849, abs=5e-4)
    assert _alpha(data[:1], "nominal") is None  # one annotator: undefined
    assert _alpha(np.ones((3, 4)), "nominal") is None  # no variation: undefined


def test_leave_one_out(annotations):
    rows = load_annotations(annotations)
    loo = leave_one_out(rows)
    base = agreement(rows)["mean"]
    without_a3 = agreement([r for r in rows if r["annotator"] != "A3"])
    assert loo["A3"]["informativeness"] == pytest.approx(without_a3["informativeness"])
    assert loo["A3"]["delta"] == pytest.approx(without_a3["mean"] - base)
    assert set(loo) == {"A1", "A2", "A3"}


def test_annotator_diagnostics(annotations):
    diag = human_metrics(annotations)["annotators"]
    a1 = diag["A1"]
    assert a1["informativeness_mean"] == pytest.approx((2 + 4 + 3 + 5) / 4)
    # item medians of informativeness: d1:tfidf 2, d1:llm 4, d2:tfidf 2, d2:llm 4.5
    assert a1["informativeness_deviation"] == pytest.approx((0 + 0 + 1 + 0.5) / 4)
    assert a1["flag_rate"] == 0.75 and a1["avg_categories"] == pytest.approx((1 + 2 + 0 + 1) / 4)
    assert diag["A3"]["flag_rate"] == pytest.approx(2 / 3)  # d2:llm unanswered


def test_spearman_and_paired_ttests(annotations):
    res = human_metrics(annotations, auto_scores=AUTO)
    corr = res["correlation"]["human_citation_precision"]["cgs"]
    ref = spearmanr([1 / 3, 0.5, 1.0], [0.3, 0.8, 0.9])  # d2:llm has no quotes: left out
    assert (
        corr["n"] == 3
        and corr["rho"] == pytest.approx(ref.statistic)
        and corr["p"] == pytest.approx(ref.pvalue)
    )
    informativeness = res["correlation"]["human_informativeness"]["citation_density"]
    ref = spearmanr([5 / 3, 13 / 3, 7 / 3, 4.5], [0.6, 0.1, 0.5, 0.0])
    assert informativeness["rho"] == pytest.approx(ref.statistic) and informativeness["n"] == 4
    gs = res["correlation"]["human_informativeness"]["grounding_score"]
    assert gs["n"] == 4 and gs["rho"] is not None

    test = res["ttests"]["human_informativeness"]["llm vs tfidf"]
    ref = ttest_rel([13 / 3, 4.5], [5 / 3, 7 / 3])
    assert (
        test["n"] == 2
        and test["t"] == pytest.approx(ref.statistic)
        and test["p"] == pytest.approx(ref.pvalue)
    )
    assert res["ttests"]["human_citation_precision"]["llm vs tfidf"]["n"] == 1
    assert res["ttests"]["human_citation_precision"]["llm vs tfidf"]["t"] is None
    cd = res["ttests"]["citation_density"]["llm vs tfidf"]
    assert cd["mean_a"] == pytest.approx(0.05) and cd["mean_b"] == pytest.approx(0.55)


def test_the_paired_ttests_are_corrected_over_the_table(annotations):
    """Table 15's p-values adjusted by Holm over every test of the table with a p-value (statsmodels)."""
    from statsmodels.stats.multitest import multipletests

    tests = [
        t
        for by_pair in human_metrics(annotations, auto_scores=AUTO)["ttests"].values()
        for t in by_pair.values()
    ]
    defined = [t for t in tests if t["p"] is not None]
    assert len(defined) >= 3 and any(t["p"] is None and t["p_adjusted"] is None for t in tests)
    expected = multipletests([t["p"] for t in defined], method="holm")[1]
    assert [t["p_adjusted"] for t in defined] == pytest.approx(list(expected))
    assert all(t["p_adjusted"] >= t["p"] for t in defined)


def test_auto_scores_from_file_and_unknown_items(annotations, tmp_path):
    path = tmp_path / "auto.jsonl"
    path.write_text("".join(json.dumps({"item_id": k, **v}) + "\n" for k, v in AUTO.items()))
    assert (
        human_metrics(annotations, auto_scores=path)["correlation"]
        == human_metrics(annotations, AUTO)["correlation"]
    )
    with pytest.raises(TraceDataError, match="not annotated"):
        human_metrics(annotations, auto_scores={"zz": {"cgs": 1.0}})
    with pytest.raises(TraceDataError, match="finite number"):
        human_metrics(annotations, auto_scores={"d1:llm": {"cgs": "high"}})


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"quote_labels": ["Yes"]}, "citation label 'Yes'"),
        ({"informativeness": 6}, "integer 1-5"),
        ({"naturalness": "3"}, "integer 1-5"),
        ({"informativeness": True}, "integer 1-5"),
        ({"errors": ["no_errors", "too_vague"]}, "exclusive"),
        ({"errors": ["typo"]}, "unknown error categories"),
        ({"annotator": ""}, "non-empty string"),
        ({"quote_labels": "Supported"}, "expected a list"),
    ],
)
def test_bad_rows_are_refused(change, message):
    with pytest.raises(TraceDataError, match=message):
        validate_annotation({**ROWS[0], **change})


def test_label_spellings_are_normalised():
    r = validate_annotation({**ROWS[0], "quote_labels": ["not_supported", "PARTIAL", "Not Supported", None]})
    assert r["quote_labels"] == [N, P, N, None]


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (ROWS + [ROWS[0]], "annotated twice"),
        (ROWS + [{**ROWS[0], "annotator": "A9", "baseline": "dense"}], "baseline"),
        (ROWS + [{**ROWS[0], "annotator": "A9", "quote_labels": [S]}], "quote labels"),
        ([], "no annotation rows"),
    ],
)
def test_inconsistent_files_are_refused(rows, message):
    with pytest.raises(TraceDataError, match=message):
        human_metrics_from_rows([validate_annotation(r) for r in rows])


def test_file_errors_name_file_and_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(ROWS[0]) + "\n" + json.dumps({**ROWS[1], "informativeness": 9}) + "\n")
    with pytest.raises(TraceDataError, match=r"bad.jsonl:2: field 'informativeness'"):
        human_metrics(path)
    with pytest.raises(TraceDataError, match="file not found"):
        human_metrics(tmp_path / "missing.jsonl")
    path.write_text(json.dumps({k: v for k, v in ROWS[0].items() if k != "errors"}) + "\n")
    with pytest.raises(TraceDataError, match=r"bad.jsonl:1: missing field\(s\) \['errors'\]"):
        human_metrics(path)
