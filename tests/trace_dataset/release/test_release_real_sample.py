"""The release round trip over real Yelp lines (../shared/yelp_sample, read in place; skipped where absent)."""

from __future__ import annotations

from tests.support.tinydata import assert_same_corpus, make_from_real_sample, overlap, review_sixgrams
from trace_dataset.datadir import iter_dialogues
from trace_dataset.release import hydrate_release, write_release


def test_real_sample_release_hides_text_and_hydrates_exactly(yelp_sample_dir, tmp_path):
    tiny = make_from_real_sample(tmp_path, yelp_sample_dir)
    assert sum(len(d["quote_spans"]) for d in iter_dialogues(tiny.corpus)) == 8 * 4
    write_release(tiny.corpus, tmp_path / "rel")
    grams = review_sixgrams(tiny.kb)
    assert overlap(tiny.corpus, grams)  # the corpus quotes real six-word runs ...
    assert overlap(tmp_path / "rel", grams) == []  # ... the release holds none
    report = hydrate_release(tmp_path / "rel", yelp_sample_dir, tmp_path / "hyd")
    assert report["byte_identical"] is True and report["quotes_unhydrated"] == 0
    assert_same_corpus(tmp_path / "hyd", tiny.corpus)
