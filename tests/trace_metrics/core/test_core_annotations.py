"""Human ratings for the meta-evaluation from the project's annotation format (trace_metrics.lib.human)."""

from __future__ import annotations

import json

import pytest

from trace_dataset.io import TraceDataError
from trace_metrics.core.annotations import convert_annotations, human_score_rows
from trace_metrics.core.meta import meta_evaluate_files


def row(item, annotator, baseline="tfidf", dialogue="d1", core=None, naturalness=3):
    out = {
        "item_id": item,
        "annotator": annotator,
        "baseline": baseline,
        "dialogue_id": dialogue,
        "quote_labels": [],
        "errors": ["no_errors"],
        "informativeness": 3,
        "naturalness": naturalness,
    }
    if core is not None:
        out["core"] = core
    return out


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_conversion_and_medians(tmp_path):
    path = write(
        tmp_path / "ann.jsonl",
        [
            row("d1:3:tfidf", "A1", core={"coherence": 3, "novelty": 1, "overall": 60}),
            row(
                "d1:5:tfidf", "A1", core={"coherence": 4}
            ),  # A1 rated the log twice: lower median of 3, 4 = 3
            row("d1:3:tfidf", "A2", core={"coherence": 2, "novelty": None, "overall": 75}),
            row("d1:3:tfidf", "A3", core={"coherence": 4, "overall": 70.5}),
            row("d1:3:dense", "A1", baseline="dense", core={"coherence": 0}),
            row("d2:1:tfidf", "A1", dialogue="d2"),  # no CoRE ratings: contributes nothing
        ],
    )
    rows = human_score_rows(path)
    assert rows == [
        {
            "id": "d1:dense",
            "factor": "coherence",
            "score": 0,
            "system": "dense",
            "dialogue_id": "d1",
            "n_annotators": 1,
        },
        {
            "id": "d1:tfidf",
            "factor": "coherence",
            "score": 3,
            "system": "tfidf",
            "dialogue_id": "d1",
            "n_annotators": 3,
        },
        {
            "id": "d1:tfidf",
            "factor": "novelty",
            "score": 1,
            "system": "tfidf",
            "dialogue_id": "d1",
            "n_annotators": 1,
        },
        {
            "id": "d1:tfidf",
            "factor": "overall",
            "score": 70.5,
            "system": "tfidf",
            "dialogue_id": "d1",
            "n_annotators": 3,
        },
    ]
    # annotators' per-log values 3, 2, 4 -> lower median 3; overall 60, 75, 70.5 -> median 70.5
    counts = convert_annotations(path, tmp_path / "human.jsonl")
    assert counts == {"rows": 4, "logs": 2, "factors": ["coherence", "novelty", "overall"]}
    assert [json.loads(x) for x in (tmp_path / "human.jsonl").read_text().splitlines()] == rows


def test_even_counts_take_the_lower_middle(tmp_path):
    path = write(
        tmp_path / "ann.jsonl",
        [
            row("d1:3:tfidf", "A1", core={"effectiveness": 4}),
            row("d1:3:tfidf", "A2", core={"effectiveness": 1}),
        ],
    )
    assert human_score_rows(path)[0]["score"] == 1


def test_likert_naturalness_is_opt_in(tmp_path):
    path = write(
        tmp_path / "ann.jsonl",
        [
            row("d1:3:tfidf", "A1", naturalness=5),
            row("d1:3:tfidf", "A2", naturalness=2),
            row("d1:3:tfidf", "A3", core={"naturalness": 1}, naturalness=5),
        ],
    )
    with pytest.raises(TraceDataError, match="no CoRE ratings"):
        human_score_rows(write(tmp_path / "plain.jsonl", [row("d1:3:tfidf", "A1")]))
    assert human_score_rows(path) == [
        {
            "id": "d1:tfidf",
            "factor": "naturalness",
            "score": 1,
            "system": "tfidf",
            "dialogue_id": "d1",
            "n_annotators": 1,
        }
    ]
    mapped = human_score_rows(path, likert_naturalness=True)
    assert mapped[0]["score"] == 1 and mapped[0]["n_annotators"] == 3  # 4, 1 (from 5, 2) and the explicit 1


@pytest.mark.parametrize(
    ("core", "message"),
    [
        ({"charm": 3}, "unknown key"),
        ({"coherence": 5}, "expected an integer 0-4"),
        ({"coherence": 2.5}, "expected an integer 0-4"),
        ({"coherence": True}, "expected an integer 0-4"),
        ({"overall": 120}, "expected a number 0-100"),
        ([3], "expected an object"),
    ],
)
def test_bad_ratings_name_file_and_line(tmp_path, core, message):
    path = write(
        tmp_path / "ann.jsonl",
        [row("d1:3:tfidf", "A1", core={"coherence": 1}), row("d1:3:tfidf", "A2", core=core)],
    )
    with pytest.raises(TraceDataError, match=message) as info:
        human_score_rows(path)
    assert str(info.value).startswith(f"{path}:2: ")


def test_the_project_checks_still_apply(tmp_path):
    bad = row("d1:3:tfidf", "A1", core={"coherence": 1})
    bad["errors"] = ["no_errors", "fabrication"]
    with pytest.raises(TraceDataError, match="exclusive"):
        human_score_rows(write(tmp_path / "ann.jsonl", [bad]))
    twice = [row("d1:3:tfidf", "A1", core={"coherence": 1})] * 2
    with pytest.raises(TraceDataError, match="annotated twice"):
        human_score_rows(write(tmp_path / "ann.jsonl", twice))


def test_converted_ratings_feed_the_meta_evaluation(tmp_path):
    ann = write(
        tmp_path / "ann.jsonl",
        [
            row(f"d{k}:1:tfidf", "A1", dialogue=f"d{k}", core={"coherence": k % 5, "overall": 10 * k})
            for k in range(6)
        ],
    )
    convert_annotations(ann, tmp_path / "human.jsonl")
    scores = tmp_path / "scores.jsonl"
    scores.write_text(
        "".join(
            json.dumps({"id": f"d{k}:tfidf", "factor": f, "score": v, "system": "tfidf"}) + "\n"
            for k in range(6)
            for f, v in (("coherence", (k + 1) % 5), ("overall", 5.0 * k))
        )
    )
    res = meta_evaluate_files(scores, tmp_path / "human.jsonl")
    assert res["factors"]["coherence"]["n"] == 6 and res["overall"]["multi_agent"][
        "spearman"
    ] == pytest.approx(1.0)
