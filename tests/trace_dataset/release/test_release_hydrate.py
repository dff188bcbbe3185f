"""`hydrate_release`: exact round trip, bundle forms, one scan, version mismatches, --allow-partial, bad input."""

from __future__ import annotations

import gzip
import json
import shutil
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.support.tinydata import assert_same_corpus, write_yelp
from trace_dataset.constants import (
    KB_DIRNAME,
    REVIEW_INDEX_FILE,
    REVIEWS_FILE,
    YELP_BUSINESS_FILE,
    YELP_REVIEW_FILE,
)
from trace_dataset.datadir import iter_dialogues, split_file
from trace_dataset.io import TraceDataError, read_jsonl, write_jsonl
from trace_dataset.quotes import PLACEHOLDER_RE
from trace_dataset.release import hydrate_release


def test_round_trip_is_byte_identical(tiny, release_dir, tmp_path):
    report = hydrate_release(release_dir, tiny.yelp, tmp_path / "hyd")
    assert_same_corpus(tmp_path / "hyd", tiny.corpus)
    assert report["byte_identical"] is True
    assert report["partial"] is False
    assert report["quotes"] == report["quotes_hydrated"] == 48
    assert report["reviews_written"] == 60
    assert (tmp_path / "hyd" / "corpus.json").read_bytes() == (tiny.corpus / "corpus.json").read_bytes()
    on_disk = json.loads((tmp_path / "hyd" / "hydration.json").read_text())
    assert on_disk["quotes_hydrated"] == 48 and on_disk["byte_identical"] is True


def test_hydration_is_deterministic(tiny, release_dir, tmp_path):
    hydrate_release(release_dir, tiny.yelp, tmp_path / "a")
    hydrate_release(release_dir, tiny.yelp, tmp_path / "b")
    for p in sorted((tmp_path / "a").rglob("*")):
        if p.is_file():
            assert p.read_bytes() == (tmp_path / "b" / p.relative_to(tmp_path / "a")).read_bytes(), p


def test_only_referenced_reviews_are_kept(tiny, release_dir, tmp_path):
    hydrate_release(release_dir, tiny.yelp, tmp_path / "hyd")
    kept = [r["review_id"] for r in read_jsonl(tmp_path / "hyd" / KB_DIRNAME / REVIEWS_FILE)]
    index = [r["review_id"] for r in read_jsonl(release_dir / KB_DIRNAME / REVIEW_INDEX_FILE)]
    assert kept == index  # the bundle's 30 other reviews are not written
    bundle_ids = {
        json.loads(line)["review_id"] for line in (tiny.yelp / YELP_REVIEW_FILE).read_text().splitlines()
    }
    assert len(bundle_ids) == 90 and len(kept) == 60


def _tar(src: Path, dst: Path, mode: str, prefix: str = "yelp_dataset/") -> Path:
    with tarfile.open(dst, mode) as tar:
        for name in (YELP_BUSINESS_FILE, YELP_REVIEW_FILE):
            tar.add(src / name, arcname=prefix + name)
    return dst


@pytest.mark.parametrize("form", ["tar", "tar.gz", "zip", "zip+tar", "json.gz", "json"])
def test_bundle_forms(tiny, release_dir, tmp_path, form):
    src = tiny.yelp
    if form == "tar":
        path = _tar(src, tmp_path / "yelp_dataset.tar", "w")
    elif form == "tar.gz":
        path = _tar(src, tmp_path / "yelp_dataset.tar.gz", "w:gz")
    elif form == "zip":
        path = tmp_path / "Yelp-JSON.zip"
        with zipfile.ZipFile(path, "w") as zf:
            for name in (YELP_BUSINESS_FILE, YELP_REVIEW_FILE):
                zf.write(src / name, arcname="Yelp JSON/" + name)
    elif form == "zip+tar":
        inner = _tar(src, tmp_path / "yelp_dataset.tar", "w", prefix="")
        path = tmp_path / "Yelp-JSON.zip"
        with zipfile.ZipFile(path, "w") as zf:
            zf.write(inner, arcname="Yelp JSON/yelp_dataset.tar")
    else:
        folder = tmp_path / "gz"
        folder.mkdir()
        for name in (YELP_BUSINESS_FILE, YELP_REVIEW_FILE):
            data = (src / name).read_bytes()
            if form == "json.gz":
                (folder / (name + ".gz")).write_bytes(gzip.compress(data))
            else:
                (folder / name).write_bytes(data)
        path = folder / (YELP_REVIEW_FILE + (".gz" if form == "json.gz" else ""))
    hydrate_release(release_dir, path, tmp_path / "hyd")
    assert_same_corpus(tmp_path / "hyd", tiny.corpus)


def test_spaced_json_layout(tiny, release_dir, tmp_path):
    """Lines written with `": "` separators (not the dump's compact form) are found too."""
    folder = tmp_path / "spaced"
    folder.mkdir()
    shutil.copy(tiny.yelp / YELP_BUSINESS_FILE, folder)
    lines = (tiny.yelp / YELP_REVIEW_FILE).read_text().splitlines()
    (folder / YELP_REVIEW_FILE).write_text(
        "".join(json.dumps(json.loads(x), indent=None) + "\n" for x in lines)
    )
    hydrate_release(release_dir, folder, tmp_path / "hyd")
    assert_same_corpus(tmp_path / "hyd", tiny.corpus)


def test_review_file_is_scanned_once_and_parsed_sparingly(tiny, release_dir, tmp_path, monkeypatch):
    from trace_dataset.yelp import reader

    calls = {"iter_lines": 0, "parse": 0}
    orig_iter, orig_parse = reader.YelpBundle.iter_lines, reader.parse_line

    def iter_lines(self, kind):
        calls["iter_lines"] += kind == "review"
        return orig_iter(self, kind)

    def parse_line(*args, **kwargs):
        calls["parse"] += 1
        return orig_parse(*args, **kwargs)

    monkeypatch.setattr(reader.YelpBundle, "iter_lines", iter_lines)
    monkeypatch.setattr(reader, "parse_line", parse_line)
    hydrate_release(release_dir, tiny.yelp, tmp_path / "hyd")
    assert calls["iter_lines"] == 1
    assert calls["parse"] == 60  # only the referenced lines of the 90 are JSON-parsed


# -- another Yelp version --------------------------------------------------------------------------
def _quoted_review(corpus: Path) -> tuple[str, int, int]:
    span = next(iter_dialogues(corpus, "train"))["quote_spans"][0]
    return span["review_id"], span["start"], span["end"]


def _bundle_with(tiny, tmp_path: Path, edit) -> Path:
    reviews = [dict(r) for r in tiny.reviews]
    businesses = [dict(b) for b in tiny.businesses]
    reviews = edit(reviews)
    return write_yelp(tmp_path / "other-yelp", businesses, reviews)


def test_missing_review_fails_with_counts_and_ids(tiny, release_dir, tmp_path):
    rid, _, _ = _quoted_review(tiny.corpus)
    bundle = _bundle_with(tiny, tmp_path, lambda rs: [r for r in rs if r["review_id"] != rid])
    with pytest.raises(
        TraceDataError, match=rf"1 referenced review\(s\) not in the Yelp bundle \(first: \['{rid}'\]\)"
    ):
        hydrate_release(release_dir, bundle, tmp_path / "hyd")
    assert not (tmp_path / "hyd").exists()


def test_missing_review_with_allow_partial(tiny, release_dir, tmp_path):
    rid, _, _ = _quoted_review(tiny.corpus)
    bundle = _bundle_with(tiny, tmp_path, lambda rs: [r for r in rs if r["review_id"] != rid])
    report = hydrate_release(release_dir, bundle, tmp_path / "hyd", allow_partial=True)
    affected = sum(s["review_id"] == rid for d in iter_dialogues(tiny.corpus) for s in d["quote_spans"])
    assert report["partial"] is True and report["missing_reviews"] == [rid]
    assert report["quotes_unhydrated"] == affected >= 1
    assert report["quotes_hydrated"] == 48 - affected
    assert report["byte_identical"] is False
    # the affected quotes stay visible as [Q:N], every other one is filled
    left = []
    for d in iter_dialogues(tmp_path / "hyd"):
        ids = {s["quote_id"] for s in d["quote_spans"] if s["review_id"] == rid}
        found = {int(m.group(1)) for t in d["turns"] for m in PLACEHOLDER_RE.finditer(t["text"])}
        assert found == ids
        left.extend(found)
    assert len(left) == affected
    kept = {r["review_id"] for r in read_jsonl(tmp_path / "hyd" / KB_DIRNAME / REVIEWS_FILE)}
    assert rid not in kept and len(kept) == 59


def test_changed_span_is_a_checksum_mismatch(tiny, release_dir, tmp_path):
    rid, start, end = _quoted_review(tiny.corpus)

    def edit(rs):
        for r in rs:
            if r["review_id"] == rid:  # same length, one letter changed inside the quoted span
                t = r["text"]
                r["text"] = t[:start] + ("X" if t[start] != "X" else "Y") + t[start + 1 :]
        return rs

    bundle = _bundle_with(tiny, tmp_path, edit)
    with pytest.raises(TraceDataError, match=r"quote checksum mismatch\(es\) in 1 review\(s\)") as e:
        hydrate_release(release_dir, bundle, tmp_path / "hyd")
    assert rid in str(e.value) and "--allow-partial" in str(e.value)
    report = hydrate_release(release_dir, bundle, tmp_path / "hyd", allow_partial=True)
    assert report["checksum_mismatches"] == {rid: report["quotes_unhydrated"]}
    assert report["quotes_unhydrated"] >= 1


def test_changed_length_is_another_version(tiny, release_dir, tmp_path):
    rid, _, _ = _quoted_review(tiny.corpus)

    def edit(rs):
        for r in rs:
            if r["review_id"] == rid:
                r["text"] += " Edited later."  # spans still match, the text is not the indexed one
        return rs

    bundle = _bundle_with(tiny, tmp_path, edit)
    with pytest.raises(TraceDataError, match=r"1 review\(s\) differ from the review index"):
        hydrate_release(release_dir, bundle, tmp_path / "hyd")
    report = hydrate_release(release_dir, bundle, tmp_path / "hyd", allow_partial=True)
    assert report["quotes_unhydrated"] == 0 and list(report["version_mismatches"]) == [rid]


# -- bad release input -----------------------------------------------------------------------------
def _edit_release(release: Path, split: str, index: int, fn) -> None:
    path = split_file(release, split)
    rows = list(read_jsonl(path))
    fn(rows[index])
    write_jsonl(path, rows)


def test_corrupt_release_line(tiny, release_dir, tmp_path):
    path = split_file(release_dir, "test")
    with gzip.open(path, "at", encoding="utf-8") as f:
        f.write("not json\n")
    with pytest.raises(TraceDataError, match=r"data/test\.jsonl\.gz:4: not valid JSON"):
        hydrate_release(release_dir, tiny.yelp, tmp_path / "hyd")


def test_truncated_release_file(tiny, release_dir, tmp_path):
    path = split_file(release_dir, "train")
    path.write_bytes(path.read_bytes()[:200])
    with pytest.raises(TraceDataError, match=r"train\.jsonl\.gz"):
        hydrate_release(release_dir, tiny.yelp, tmp_path / "hyd")


def test_unknown_review_id_in_release(tiny, release_dir, tmp_path):
    _edit_release(release_dir, "validation", 1, lambda d: d["quote_spans"][0].update(review_id="ghost"))
    with pytest.raises(TraceDataError, match=r"validation\.jsonl\.gz:2: .*unknown review id 'ghost'"):
        hydrate_release(release_dir, tiny.yelp, tmp_path / "hyd")


def test_wrong_checksum_in_release(tiny, release_dir, tmp_path):
    _edit_release(release_dir, "train", 0, lambda d: d["quote_spans"][0].update(checksum="deadbeefdeadbeef"))
    with pytest.raises(TraceDataError, match="checksum mismatch"):
        hydrate_release(release_dir, tiny.yelp, tmp_path / "hyd")


def test_missing_split_file(tiny, release_dir, tmp_path):
    split_file(release_dir, "validation").unlink()
    with pytest.raises(
        TraceDataError, match=r"missing split or knowledge-base file\(s\) \['data/validation.jsonl.gz'\]"
    ):
        hydrate_release(release_dir, tiny.yelp, tmp_path / "hyd")


def test_placeholder_without_span(tiny, release_dir, tmp_path):
    _edit_release(release_dir, "test", 0, lambda d: d["turns"][0].update(text="Hello [Q:99]"))
    with pytest.raises(TraceDataError, match=r"placeholder\(s\) \['\[Q:99\]'\] have no quote span"):
        hydrate_release(release_dir, tiny.yelp, tmp_path / "hyd")


def test_span_without_placeholder(tiny, release_dir, tmp_path):
    def drop(d):
        t = next(t for t in d["turns"] if "[Q:1]" in t["text"])
        t["text"] = t["text"].replace("[Q:1]", "gone")

    _edit_release(release_dir, "test", 0, drop)
    with pytest.raises(TraceDataError, match="each span needs exactly one placeholder"):
        hydrate_release(release_dir, tiny.yelp, tmp_path / "hyd")


def test_bad_bundle_and_output_rules(tiny, release_dir, tmp_path):
    with pytest.raises(TraceDataError, match="Yelp bundle not found"):
        hydrate_release(release_dir, tmp_path / "nowhere", tmp_path / "hyd")
    with pytest.raises(TraceDataError, match="overlaps the input"):
        hydrate_release(release_dir, tiny.yelp, release_dir / "hyd")
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "x").write_text("x")
    with pytest.raises(TraceDataError, match="refusing to overwrite"):
        hydrate_release(release_dir, tiny.yelp, busy)
    hydrate_release(release_dir, tiny.yelp, tmp_path / "hyd")
    hydrate_release(release_dir, tiny.yelp, tmp_path / "hyd")  # an earlier hydration is replaced
    assert_same_corpus(tmp_path / "hyd", tiny.corpus)


def test_placeholder_text_outside_turns_round_trips(tiny, tmp_path):
    """A literal `[Q:1]` in a non-turn field is authored text: it survives release and hydration unchanged."""
    from trace_dataset.release import write_release

    path = split_file(tiny.corpus, "test")
    rows = list(read_jsonl(path))
    rows[0]["scenario"]["persona"] = "Writes notes like [Q:1] in the margins."
    write_jsonl(path, rows)
    write_release(tiny.corpus, tmp_path / "rel")
    assert hydrate_release(tmp_path / "rel", tiny.yelp, tmp_path / "hyd")["byte_identical"] is True
    assert_same_corpus(tmp_path / "hyd", tiny.corpus)


@pytest.mark.parametrize("gz", [False, True])
def test_review_file_alone(tiny, release_dir, tmp_path, gz):
    """Hydration needs only the review file: the file alone (or a folder with just it) is enough."""
    folder = tmp_path / "only-reviews"
    folder.mkdir()
    data = (tiny.yelp / YELP_REVIEW_FILE).read_bytes()
    path = folder / (YELP_REVIEW_FILE + (".gz" if gz else ""))
    path.write_bytes(gzip.compress(data) if gz else data)
    hydrate_release(release_dir, path, tmp_path / "a")
    assert_same_corpus(tmp_path / "a", tiny.corpus)
    hydrate_release(release_dir, folder, tmp_path / "b")
    assert_same_corpus(tmp_path / "b", tiny.corpus)
    with pytest.raises(TraceDataError, match="expected a Yelp Open Dataset bundle"):
        hydrate_release(release_dir, tmp_path / "a", tmp_path / "c")  # a folder without Yelp files
