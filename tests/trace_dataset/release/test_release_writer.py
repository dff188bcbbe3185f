"""`write_release`: layout, placeholders, byte-for-byte KB copies, determinism, the six-word guarantee, bad input."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import pytest

from tests.support.tinydata import overlap, review_sixgrams
from trace_dataset.constants import KB_DIRNAME, POIS_FILE, REVIEW_INDEX_FILE, REVIEWS_FILE, SPLITS
from trace_dataset.datadir import iter_dialogues, split_file
from trace_dataset.io import TraceDataError, read_jsonl, write_jsonl
from trace_dataset.quotes import PLACEHOLDER_RE, extract_quotes
from trace_dataset.release import write_release


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_layout_has_no_review_text_file(release_dir):
    files = set(_files(release_dir))
    assert files == {
        "README.md",
        "eval.yaml",
        "release.json",
        "corpus.json",
        "data/train.jsonl.gz",
        "data/validation.jsonl.gz",
        "data/test.jsonl.gz",
        "knowledge_base/pois.jsonl.gz",
        "knowledge_base/review_index.jsonl.gz",
        "knowledge_base/kb.json",
    }
    assert not any(name.endswith(REVIEWS_FILE) for name in files)


def test_every_quote_becomes_its_placeholder(tiny, release_dir):
    corpus = {d["dialogue_id"]: d for d in iter_dialogues(tiny.corpus)}
    released = list(iter_dialogues(release_dir))
    assert len(released) == len(corpus) == 12
    for d in released:
        original = corpus[d["dialogue_id"]]
        # everything but turn text is unchanged, key order included
        assert list(d) == list(original)
        assert d["quote_spans"] == original["quote_spans"]
        assert {k: v for k, v in d.items() if k != "turns"} == {
            k: v for k, v in original.items() if k != "turns"
        }
        quote_ids = []
        for turn, orig in zip(d["turns"], original["turns"], strict=True):
            assert {k: v for k, v in turn.items() if k != "text"} == {
                k: v for k, v in orig.items() if k != "text"
            }
            for q in extract_quotes(turn["text"]):
                m = re.fullmatch(r"\[Q:(\d+)\]", q.text)
                assert m, f"quote left in release text: {q.text!r}"
                quote_ids.append(int(m.group(1)))
        assert quote_ids == list(range(1, len(original["quote_spans"]) + 1))
        assert quote_ids, "the tiny corpus quotes in every dialogue"


def test_split_files_hold_their_split(release_dir):
    for split in SPLITS:
        rows = list(read_jsonl(split_file(release_dir, split)))
        assert rows and {r["split"] for r in rows} == {split}


def test_knowledge_base_files_copied_byte_for_byte(tiny, release_dir):
    for name in (POIS_FILE, REVIEW_INDEX_FILE, "kb.json"):
        assert (release_dir / KB_DIRNAME / name).read_bytes() == (
            tiny.corpus / KB_DIRNAME / name
        ).read_bytes()


def test_release_is_deterministic(tiny, release_dir, tmp_path):
    again = tmp_path / "again"
    write_release(tiny.corpus, again)
    assert _files(again) == _files(release_dir)


def test_manifest_counts(tiny, release_dir):
    meta = json.loads((release_dir / "release.json").read_text())
    assert meta["dialogues"] == {"train": 6, "validation": 3, "test": 3}
    assert meta["quotes"] == sum(len(d["quote_spans"]) for d in iter_dialogues(tiny.corpus)) == 48
    assert set(meta["hydrated_sha256"]) == {
        "data/train.jsonl.gz",
        "data/validation.jsonl.gz",
        "data/test.jsonl.gz",
        f"knowledge_base/{REVIEWS_FILE}",
    }


# -- six consecutive words: checked by tinydata's own tokeniser, independent of trace_dataset.release.leaks
def test_no_release_file_contains_six_consecutive_review_words(tiny, release_dir):
    review_grams = review_sixgrams(tiny.kb)
    assert len(review_grams) > 1000
    # the corpus itself quotes six-word runs (so this check has something to find) ...
    assert "data/train.jsonl.gz" in overlap(tiny.corpus, review_grams)
    # ... and the release, card included, holds none
    assert overlap(release_dir, review_grams) == []


def test_release_refuses_authored_text_that_copies_a_review(tiny, tmp_path):
    path = split_file(tiny.corpus, "test")
    rows = list(read_jsonl(path))
    review = next(iter(read_jsonl(tiny.kb / REVIEWS_FILE)))["text"]
    copied = " ".join(review.split()[:7])  # seven review words, no quote marks: not a quote, a leak
    rows[1]["turns"][0]["text"] += " " + copied
    write_jsonl(path, rows)
    with pytest.raises(TraceDataError, match="6 consecutive words") as e:
        write_release(tiny.corpus, tmp_path / "rel")
    assert "data/test.jsonl.gz:2" in str(e.value)
    assert not (tmp_path / "rel").exists()


def test_release_refuses_a_leaking_corpus_json(tiny, tmp_path):
    review = next(iter(read_jsonl(tiny.kb / REVIEWS_FILE)))["text"]
    (tiny.corpus / "corpus.json").write_text(json.dumps({"note": review[:200]}))
    with pytest.raises(TraceDataError, match="corpus.json"):
        write_release(tiny.corpus, tmp_path / "rel")


# -- bad input -------------------------------------------------------------------------------------
def _edit(corpus: Path, split: str, index: int, fn) -> None:
    path = split_file(corpus, split)
    rows = list(read_jsonl(path))
    fn(rows[index])
    write_jsonl(path, rows)


def test_wrong_offsets_name_file_and_line(tiny, tmp_path):
    def shift(d):
        d["quote_spans"][0]["start"] += 1

    _edit(tiny.corpus, "validation", 2, shift)
    with pytest.raises(TraceDataError, match=r"validation\.jsonl\.gz:3: .*is not review"):
        write_release(tiny.corpus, tmp_path / "rel")


def test_wrong_checksum(tiny, tmp_path):
    def bad(d):
        d["quote_spans"][1]["checksum"] = "0" * 16

    _edit(tiny.corpus, "train", 0, bad)
    with pytest.raises(TraceDataError, match="wrong checksum"):
        write_release(tiny.corpus, tmp_path / "rel")


def test_unknown_review_id(tiny, tmp_path):
    def bad(d):
        d["quote_spans"][0]["review_id"] = "no-such-review"

    _edit(tiny.corpus, "train", 0, bad)
    with pytest.raises(TraceDataError, match="unknown review id 'no-such-review'"):
        write_release(tiny.corpus, tmp_path / "rel")


def test_unlisted_quote(tiny, tmp_path):
    def bad(d):
        d["quote_spans"].pop()

    _edit(tiny.corpus, "train", 0, bad)
    with pytest.raises(TraceDataError, match="has no quote_spans entry"):
        write_release(tiny.corpus, tmp_path / "rel")


def test_text_with_a_placeholder_is_refused(tiny, tmp_path):
    def bad(d):
        d["turns"][0]["text"] += " see [Q:1]"

    _edit(tiny.corpus, "test", 0, bad)
    with pytest.raises(TraceDataError, match="already contains a \\[Q:N\\] placeholder"):
        write_release(tiny.corpus, tmp_path / "rel")


def test_duplicate_dialogue_and_wrong_split(tiny, tmp_path):
    test_rows = list(read_jsonl(split_file(tiny.corpus, "test")))
    train_path = split_file(tiny.corpus, "train")
    write_jsonl(train_path, [*read_jsonl(train_path), {**test_rows[0], "split": "train"}])
    with pytest.raises(TraceDataError, match="duplicate dialogue_id"):
        write_release(tiny.corpus, tmp_path / "rel")
    write_jsonl(train_path, [*list(read_jsonl(train_path))[:-1], test_rows[1]])
    with pytest.raises(TraceDataError, match="has split 'test' but sits in the 'train' file"):
        write_release(tiny.corpus, tmp_path / "rel")


def test_corrupt_line_and_missing_split(tiny, tmp_path):
    path = split_file(tiny.corpus, "validation")
    with gzip.open(path, "at", encoding="utf-8") as f:
        f.write('{"dialogue_id": "broken"\n')
    with pytest.raises(TraceDataError, match=r"validation\.jsonl\.gz:4: not valid JSON"):
        write_release(tiny.corpus, tmp_path / "rel")
    path.unlink()
    with pytest.raises(TraceDataError, match="missing data/validation.jsonl.gz"):
        write_release(tiny.corpus, tmp_path / "rel")


def test_missing_review_text(tiny, tmp_path):
    (tiny.corpus / KB_DIRNAME / REVIEWS_FILE).unlink()
    with pytest.raises(TraceDataError, match="has no reviews.jsonl.gz"):
        write_release(tiny.corpus, tmp_path / "rel")


def test_a_release_cannot_be_released_again(release_dir, tmp_path):
    with pytest.raises(TraceDataError, match="no reviews.jsonl.gz"):
        write_release(release_dir, tmp_path / "again")


def test_output_folder_rules(tiny, release_dir, tmp_path):
    # an unrelated non-empty folder is never overwritten
    other = tmp_path / "other"
    other.mkdir()
    (other / "keep.txt").write_text("mine")
    with pytest.raises(TraceDataError, match="refusing to overwrite"):
        write_release(tiny.corpus, other)
    assert (other / "keep.txt").read_text() == "mine"
    # an earlier release is replaced whole (no stale files survive)
    (release_dir / "stale.txt").write_text("old")
    write_release(tiny.corpus, release_dir)
    assert not (release_dir / "stale.txt").exists()
    # the output may not be the corpus or inside it
    with pytest.raises(TraceDataError, match="overlaps the input"):
        write_release(tiny.corpus, tiny.corpus / "release")
    assert not any(p.name.endswith(".tmp") for p in tmp_path.iterdir())


def test_failed_release_keeps_the_previous_one(tiny, release_dir):
    before = _files(release_dir)
    shutil.rmtree(tiny.corpus / "data")
    with pytest.raises(TraceDataError):
        write_release(tiny.corpus, release_dir)
    assert _files(release_dir) == before
    assert PLACEHOLDER_RE.search(gzip.decompress(before["data/test.jsonl.gz"]).decode())
