"""The six-word redistribution guard itself."""

from __future__ import annotations

import json

from trace_dataset.io import write_jsonl
from trace_dataset.release.leaks import ReviewNgrams, find_leaks, words

REVIEWS = {
    "r1": "The smoky brisket arrived near the charred patio with briny oysters.",
    "r2": "Silky crepes lingered on the counter.",
}


def test_words_are_lower_cased_word_runs():
    assert words("The SMOKY brisket, arrived!") == ["the", "smoky", "brisket", "arrived"]


def test_six_words_leak_five_do_not(tmp_path):
    (tmp_path / "a.md").write_text(
        "We loved it: the smoky brisket arrived near our door."
    )  # 5 review words + other
    assert find_leaks(tmp_path, REVIEWS) == []
    (tmp_path / "b.md").write_text("Honestly THE SMOKY BRISKET ARRIVED NEAR THE charred patio.")
    leaks = find_leaks(tmp_path, REVIEWS)
    assert [(x.path, x.review_id) for x in leaks] == [("b.md", "r1")]
    assert leaks[0].words == "the smoky brisket arrived near the"


def test_json_lines_are_checked_per_record_across_fields(tmp_path):
    write_jsonl(
        tmp_path / "x.jsonl.gz",
        [
            {"a": "nothing here"},
            {"a": "brisket arrived near", "b": ["the charred patio"]},  # a run split across two fields
        ],
    )
    leaks = find_leaks(tmp_path, REVIEWS)
    assert [(x.path, x.line) for x in leaks] == [("x.jsonl.gz", 2)]


def test_json_file_and_index_reuse(tmp_path):
    (tmp_path / "meta.json").write_text(json.dumps({"notes": ["Silky crepes lingered on the counter"]}))
    index = ReviewNgrams(REVIEWS)
    assert len(index) == 6 + 1  # an 11-word and a 6-word review
    assert [x.review_id for x in find_leaks(tmp_path, index)] == ["r2"]
