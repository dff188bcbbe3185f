"""One bad number in a Yelp line is a malformed line (skipped, counted, reported with file and line), never a
traceback and never a NaN in the knowledge base; a truncated or non-gzip `.json.gz` is one line naming it."""

from __future__ import annotations

import gzip
import json
import math
import shutil

import pytest

from tests.support.cli import run_cli
from trace_dataset.constants import POIS_FILE, REVIEWS_FILE, YELP_BUSINESS_FILE, YELP_REVIEW_FILE
from trace_dataset.io import TraceDataError, read_jsonl
from trace_dataset.kb.build import build_kb
from trace_dataset.yelp.reader import MalformedLog, inspect_bundle, parse_line

DEEP = "[" * 100_000 + "]" * 100_000

# (what replaces the value of "review_count" in a business line, the reason the report gives)
BAD_NUMBERS = [
    ("Infinity", "Infinity is not a number JSON allows"),
    ("-Infinity", "-Infinity is not a number JSON allows"),
    ("NaN", "NaN is not a number JSON allows"),
    ("9" * 5000, "unreadable number"),
    ("1e999", "expected an integer"),
    (DEEP, "nested too deeply"),
]


def _lines(path):
    return path.read_text(encoding="utf-8").splitlines()


def _write(path, lines):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.parametrize(
    ("value", "reason"), BAD_NUMBERS, ids=["inf", "-inf", "nan", "5000-digits", "1e999", "deep"]
)
def test_bad_number_is_a_malformed_line(value, reason):
    line = '{"business_id":"b1","name":"X","city":"Tampa","stars":4.0,"review_count":' + value + "}"
    malformed = MalformedLog()
    assert parse_line("business", line.encode(), "f.json", 7, malformed) is None
    assert malformed.total == 1
    example = malformed.examples[0]
    assert example["file"] == "f.json" and example["line"] == 7 and reason in example["reason"]


@pytest.mark.parametrize("field", ["stars", "latitude", "longitude"])
@pytest.mark.parametrize("value", ["NaN", "Infinity", "1e999"])
def test_non_finite_stars_and_coordinates_are_malformed(field, value):
    obj = {
        "business_id": "b1",
        "name": "X",
        "city": "Tampa",
        "stars": 4.0,
        "latitude": 27.9,
        "longitude": -82.4,
    }
    line = json.dumps(obj).replace(f'"{field}": {json.dumps(obj[field])}', f'"{field}": {value}')
    malformed = MalformedLog()
    assert parse_line("business", line.encode(), "f.json", 1, malformed) is None
    assert (
        field in malformed.examples[0]["reason"]
        or "NaN" in malformed.examples[0]["reason"]
        or "Infinity" in malformed.examples[0]["reason"]
    )


def test_coordinates_off_the_globe_are_malformed():
    malformed = MalformedLog()
    line = b'{"business_id":"b1","city":"Tampa","stars":4.0,"latitude":127.9,"longitude":-82.4}'
    assert parse_line("business", line, "f.json", 3, malformed) is None
    assert "expected a coordinate in [-90, 90]" in malformed.examples[0]["reason"]


def _poisoned_bundle(world, tmp_path):
    """The world's bundle with bad numbers in some business and review lines."""
    bundle = tmp_path / "bundle"
    shutil.copytree(world.bundle, bundle)
    businesses = _lines(bundle / YELP_BUSINESS_FILE)
    for i, (value, _) in enumerate(BAD_NUMBERS):
        businesses[i] = businesses[i].replace('"review_count":', f'"review_count":{value},"was":', 1)
    for i in range(len(BAD_NUMBERS), len(BAD_NUMBERS) + 4):  # NaN stars or coordinates
        obj = json.loads(businesses[i])
        key = ("stars", "latitude")[i % 2]
        businesses[i] = json.dumps(obj).replace(f'"{key}": {json.dumps(obj[key])}', f'"{key}": NaN')
    _write(bundle / YELP_BUSINESS_FILE, businesses)
    reviews = _lines(bundle / YELP_REVIEW_FILE)
    reviews[0] = reviews[0].replace('"stars":', '"stars":NaN,"was":', 1)
    reviews[1] = reviews[1].replace('"stars":', '"stars":1e999,"was":', 1)
    _write(bundle / YELP_REVIEW_FILE, reviews)
    return bundle


def test_scan_and_build_survive_bad_numbers_and_keep_nan_out(world, tmp_path, capsys):
    bundle = _poisoned_bundle(world, tmp_path)
    report = inspect_bundle(bundle)
    bad = len(BAD_NUMBERS) + 4 + 2
    assert report["malformed_lines"]["total"] == bad
    lines = {(e["file"].rsplit("/", 1)[-1], e["line"]) for e in report["malformed_lines"]["examples"]}
    assert (YELP_BUSINESS_FILE, 1) in lines and (YELP_REVIEW_FILE, 2) in lines

    rc, text = run_cli(capsys, "yelp", "inspect", bundle)
    assert rc == 0 and f"malformed    {bad} lines" in text and f"{YELP_BUSINESS_FILE}:1:" in text

    meta = build_kb(bundle, tmp_path / "kb", per_cell=3)
    assert meta["input"]["malformed_lines"] >= len(BAD_NUMBERS) + 4
    json.dumps(meta, allow_nan=False)  # no NaN anywhere in kb.json (avg_stars was NaN before)
    for poi in read_jsonl(tmp_path / "kb" / POIS_FILE):
        assert all(math.isfinite(poi[k]) for k in ("stars", "latitude", "longitude"))
    for review in read_jsonl(tmp_path / "kb" / REVIEWS_FILE):
        assert math.isfinite(review["stars"])


def test_strict_stops_at_the_first_bad_number_with_file_and_line(world, tmp_path, capsys):
    bundle = _poisoned_bundle(world, tmp_path)
    rc, text = run_cli(capsys, "yelp", "inspect", bundle, "--strict")
    assert rc == 2 and f"{YELP_BUSINESS_FILE}:1: malformed line: Infinity" in text


def _gz_bundles(world, tmp_path):
    truncated, plain = tmp_path / "truncated", tmp_path / "plain"
    for folder in (truncated, plain):
        folder.mkdir()
    for name in (YELP_BUSINESS_FILE, YELP_REVIEW_FILE):
        data = (world.bundle / name).read_bytes()
        (truncated / (name + ".gz")).write_bytes(gzip.compress(data)[: len(data) // 40])
        (plain / (name + ".gz")).write_bytes(data)  # not gzip at all, despite the name
    return {"truncated": truncated, "not gzip": plain}


@pytest.mark.parametrize("kind", ["truncated", "not gzip"])
def test_broken_gzip_is_one_line_naming_the_file(world, tmp_path, capsys, kind):
    bundle = _gz_bundles(world, tmp_path)[kind]
    expect = "truncated or not gzip"
    rc, text = run_cli(capsys, "yelp", "inspect", bundle)
    assert rc == 2 and expect in text and f"{YELP_BUSINESS_FILE}.gz" in text and len(text.splitlines()) == 1
    rc, text = run_cli(capsys, "kb", "build", "--yelp", bundle, "--out", tmp_path / "kb")
    assert rc == 2 and expect in text and f"{YELP_BUSINESS_FILE}.gz" in text
    assert not (tmp_path / "kb").exists()
    rc, text = run_cli(
        capsys,
        "corpus",
        "hydrate",
        "--release",
        world.release,
        "--yelp",
        bundle / (YELP_REVIEW_FILE + ".gz"),
        "--out",
        tmp_path / "hydrated",
    )
    assert rc == 2 and expect in text and f"{YELP_REVIEW_FILE}.gz" in text
    assert not (tmp_path / "hydrated").exists()
    with pytest.raises(TraceDataError, match=expect):
        inspect_bundle(bundle)
