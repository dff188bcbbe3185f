from __future__ import annotations

import gzip
import io
import json
import shutil
import tarfile
import zipfile
from pathlib import Path

import pytest

from trace_bench.cli import main
from trace_dataset.constants import CITY_NAMES, YELP_BUSINESS_FILE, YELP_REVIEW_FILE
from trace_dataset.io import TraceDataError
from trace_dataset.schema import ATTRIBUTE_FEATURES
from trace_dataset.yelp.reader import (
    SYNTHETIC_MANIFEST,
    MalformedLog,
    inspect_bundle,
    iter_businesses,
    iter_reviews,
    open_bundle,
)

BIZ = {
    "business_id": "b1",
    "name": "Cafe One",
    "address": "1 Main St",
    "city": "St. Louis",
    "state": "MO",
    "postal_code": "63101",
    "latitude": 38.63,
    "longitude": -90.2,
    "stars": 4.5,
    "review_count": 12,
    "is_open": 1,
    "attributes": {"WiFi": "u'free'", "RestaurantsPriceRange2": "2"},
    "categories": "Cafes, Coffee & Tea",
    "hours": None,
}
REV = {
    "review_id": "r1",
    "user_id": "u1",
    "business_id": "b1",
    "stars": 5.0,
    "useful": 0,
    "funny": 0,
    "cool": 0,
    "text": "Great coffee.",
    "date": "2019-01-01 10:00:00",
}


def _line(obj) -> bytes:
    return (json.dumps(obj) + "\n").encode()


def _write_bundle(folder: Path, business_lines: list[bytes], review_lines: list[bytes]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / YELP_BUSINESS_FILE).write_bytes(b"".join(business_lines))
    (folder / YELP_REVIEW_FILE).write_bytes(b"".join(review_lines))
    return folder


def _good_bundle(folder: Path) -> Path:
    businesses = [_line({**BIZ, "business_id": f"b{i}"}) for i in range(1, 4)]
    reviews = [_line({**REV, "review_id": f"r{i}", "business_id": f"b{1 + i % 4}"}) for i in range(8)]
    return _write_bundle(folder, businesses, reviews)


# ---------------------------------------------------------------------------------------------------
# Records
# ---------------------------------------------------------------------------------------------------
def test_business_record_is_typed(tmp_path):
    bundle = _good_bundle(tmp_path / "b")
    b = next(iter_businesses(bundle))
    assert b.business_id == "b1"
    assert b.city == "Saint Louis" and b.raw_city == "St. Louis" and b.in_trace_city
    assert b.categories == ("Cafes", "Coffee & Tea")
    assert b.price == 2
    assert b.attributes["wifi"] == "free"
    assert list(b.attributes) == list(ATTRIBUTE_FEATURES)
    assert b.hours is None


def test_reviews_stream_and_inspect_counts(tmp_path):
    bundle = _good_bundle(tmp_path / "b")
    assert [r.review_id for r in iter_reviews(bundle)] == [f"r{i}" for i in range(8)]
    report = inspect_bundle(bundle)
    assert report["businesses"] == 3
    assert report["reviews"] == 8
    assert report["reviews_joining_a_business"] == 6  # b4 is not in the business file
    assert report["trace_city_businesses"]["Saint Louis"] == 3
    assert report["malformed_lines"]["total"] == 0
    assert report["source"] == "yelp"


# ---------------------------------------------------------------------------------------------------
# Malformed lines
# ---------------------------------------------------------------------------------------------------
BAD_BUSINESS_LINES = [
    (b'{"business_id": "x1", "name": "broken"\n', "broken JSON"),
    (_line({k: v for k, v in BIZ.items() if k != "business_id"}), "missing business_id"),
    (_line({**BIZ, "business_id": ""}), "missing business_id"),
    (_line({**BIZ, "business_id": 17}), "wrong type for 'business_id'"),
    (_line({**BIZ, "business_id": "x2", "stars": "four"}), "wrong type for 'stars'"),
    (_line({**BIZ, "business_id": "x3", "attributes": ["WiFi"]}), "wrong type for 'attributes'"),
    (_line({**BIZ, "business_id": "x4", "categories": 5}), "wrong type for 'categories'"),
    (_line({**BIZ, "business_id": "x5", "latitude": "39.1"}), "wrong type for 'latitude'"),
    (_line({**BIZ, "business_id": "x6", "review_count": 2.5}), "wrong type for 'review_count'"),
    (_line({**BIZ, "business_id": "x7", "hours": "9-5"}), "wrong type for 'hours'"),
    (b'{"business_id": "x8", "name": "caf\xe9 latin-1", "stars": 4.0}\n', "bad UTF-8"),
    (b"[1, 2, 3]\n", "expected a JSON object"),
]


def test_malformed_business_lines_counted_with_file_and_line(tmp_path):
    good = _line(BIZ)
    lines = [good] + [line for line, _ in BAD_BUSINESS_LINES] + [b"\n", _line({**BIZ, "business_id": "b9"})]
    bundle = _write_bundle(tmp_path / "b", lines, [_line(REV)])
    log = MalformedLog()
    ids = [b.business_id for b in iter_businesses(bundle, malformed=log)]
    assert ids == ["b1", "b9"]  # blank lines are not malformed, just skipped
    assert log.total == len(BAD_BUSINESS_LINES)
    assert len(log.examples) == len(BAD_BUSINESS_LINES)
    for example, (line_no, (_, reason)) in zip(
        log.examples, enumerate(BAD_BUSINESS_LINES, start=2), strict=True
    ):
        assert example["line"] == line_no
        assert reason in example["reason"], example
        assert example["file"].endswith(YELP_BUSINESS_FILE)


def test_malformed_review_lines(tmp_path):
    reviews = [
        _line(REV),
        _line({k: v for k, v in REV.items() if k != "business_id"}),
        _line({**REV, "text": None}),
        _line({**REV, "stars": True}),
        _line({k: v for k, v in REV.items() if k != "review_id"}),
        b'{"review_id": "r9", "business_id": "b1", "text": "\xff\xfe"}\n',
        b"not json at all\n",
        _line({**REV, "review_id": "r2"}),
    ]
    bundle = _write_bundle(tmp_path / "b", [_line(BIZ)], reviews)
    report = inspect_bundle(bundle)
    assert report["reviews"] == 2
    assert report["malformed_lines"]["total"] == 6
    reasons = [(e["line"], e["reason"]) for e in report["malformed_lines"]["examples"]]
    assert [line for line, _ in reasons] == [2, 3, 4, 5, 6, 7]
    assert "missing business_id" in reasons[0][1]
    assert "wrong type for 'text'" in reasons[1][1]
    assert "wrong type for 'stars'" in reasons[2][1]
    assert "missing review_id" in reasons[3][1]
    assert "bad UTF-8" in reasons[4][1]
    assert "broken JSON" in reasons[5][1]


def test_strict_stops_at_first_malformed_line(tmp_path):
    bundle = _write_bundle(tmp_path / "b", [_line(BIZ), b"{oops\n", b"{oops again\n"], [_line(REV)])
    with pytest.raises(TraceDataError) as err:
        inspect_bundle(bundle, strict=True)
    assert f"{YELP_BUSINESS_FILE}:2:" in str(err.value)
    assert "broken JSON" in str(err.value)
    assert err.value.line == 2


def test_cli_strict_prints_error_without_traceback(tmp_path, capsys):
    bundle = _write_bundle(tmp_path / "b", [_line(BIZ), b"{oops\n"], [_line(REV)])
    assert main(["yelp", "inspect", str(bundle), "--strict"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert f"{YELP_BUSINESS_FILE}:2: malformed line: broken JSON" in err


# ---------------------------------------------------------------------------------------------------
# Missing / empty files and bad paths
# ---------------------------------------------------------------------------------------------------
def test_missing_path(tmp_path, capsys):
    with pytest.raises(TraceDataError, match="Yelp bundle not found"):
        open_bundle(tmp_path / "nope")
    assert main(["yelp", "inspect", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "Yelp bundle not found" in err


def test_missing_review_file(tmp_path):
    folder = tmp_path / "b"
    folder.mkdir()
    (folder / YELP_BUSINESS_FILE).write_bytes(_line(BIZ))
    with pytest.raises(TraceDataError, match=f"no {YELP_REVIEW_FILE}"):
        open_bundle(folder)


def test_empty_folder(tmp_path):
    with pytest.raises(TraceDataError, match=YELP_BUSINESS_FILE):
        open_bundle(tmp_path)


def test_empty_file(tmp_path):
    bundle = _write_bundle(tmp_path / "b", [_line(BIZ)], [])
    with pytest.raises(TraceDataError, match="empty file"):
        open_bundle(bundle)


def test_blank_only_file_is_empty(tmp_path):
    bundle = _write_bundle(tmp_path / "b", [_line(BIZ)], [b"\n", b"  \n"])
    with pytest.raises(TraceDataError, match="empty file") as err:
        list(iter_reviews(bundle))
    assert YELP_REVIEW_FILE in str(err.value)


def test_empty_gz_file(tmp_path):
    folder = tmp_path / "b"
    folder.mkdir()
    (folder / (YELP_BUSINESS_FILE + ".gz")).write_bytes(gzip.compress(_line(BIZ)))
    (folder / (YELP_REVIEW_FILE + ".gz")).write_bytes(gzip.compress(b""))
    with pytest.raises(TraceDataError, match="empty file"):
        inspect_bundle(folder)


def test_unrecognised_and_corrupt_archives(tmp_path):
    other = tmp_path / "data.csv"
    other.write_text("a,b\n")
    with pytest.raises(TraceDataError, match="unrecognised Yelp bundle"):
        open_bundle(other)
    bad_zip = tmp_path / "broken.zip"
    bad_zip.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(TraceDataError, match="not a readable zip"):
        open_bundle(bad_zip)
    bad_tar = tmp_path / "broken.tar"
    bad_tar.write_bytes(b"\x00" * 10 + b"garbage")
    with pytest.raises(TraceDataError):
        open_bundle(bad_tar)
    wrong_json = tmp_path / "something.json"
    wrong_json.write_text("{}\n")
    with pytest.raises(TraceDataError, match="not a Yelp bundle file"):
        open_bundle(wrong_json)


def test_archive_without_the_files(tmp_path):
    path = tmp_path / "yelp_dataset.tar"
    with tarfile.open(path, "w") as tar:
        data = _line(BIZ)
        info = tarfile.TarInfo(YELP_BUSINESS_FILE)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    with pytest.raises(TraceDataError, match=f"no {YELP_REVIEW_FILE}"):
        open_bundle(path)


# ---------------------------------------------------------------------------------------------------
# Containers: folder, tar, tar.gz, zip (flat, nested folder, holding the tar), .json.gz, single file
# ---------------------------------------------------------------------------------------------------
def _containers(src: Path, tmp: Path) -> dict[str, Path]:
    out: dict[str, Path] = {"folder": src}
    names = [YELP_BUSINESS_FILE, YELP_REVIEW_FILE]
    tar_path = tmp / "yelp_dataset.tar"
    with tarfile.open(tar_path, "w") as tar:
        tar.add(src / "Dataset_User_Agreement.pdf", arcname="Dataset_User_Agreement.pdf")
        for n in names:
            tar.add(src / n, arcname=n)
    out["tar"] = tar_path
    tgz = tmp / "yelp_dataset.tar.gz"
    with tarfile.open(tgz, "w:gz") as tar:
        for n in names:
            tar.add(src / n, arcname=f"yelp_dataset/{n}")
    out["tar.gz"] = tgz
    zflat = tmp / "flat.zip"
    with zipfile.ZipFile(zflat, "w", zipfile.ZIP_DEFLATED) as zf:
        for n in names:
            zf.write(src / n, arcname=f"Yelp JSON/{n}")
    out["zip"] = zflat
    ztar = tmp / "Yelp-JSON.zip"
    with zipfile.ZipFile(ztar, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.write(tar_path, arcname="Yelp JSON/yelp_dataset.tar")
    out["zip+tar"] = ztar
    gz_dir = tmp / "gz"
    gz_dir.mkdir()
    for n in names:
        (gz_dir / (n + ".gz")).write_bytes(gzip.compress((src / n).read_bytes()))
    out["json.gz"] = gz_dir
    out["single .json.gz file"] = gz_dir / (YELP_REVIEW_FILE + ".gz")
    out["single .json file"] = src / YELP_BUSINESS_FILE
    folder_with_tar = tmp / "download"
    folder_with_tar.mkdir()
    shutil.copy(tar_path, folder_with_tar / "yelp_dataset.tar")
    out["folder holding the tar"] = folder_with_tar
    return out


def test_every_container_gives_the_same_records(tmp_path):
    src = _good_bundle(tmp_path / "src")
    (src / "Dataset_User_Agreement.pdf").write_bytes(b"%PDF-1.4 placeholder")
    expected_b = list(iter_businesses(src))
    expected_r = list(iter_reviews(src))
    containers = _containers(src, tmp_path)
    for kind, path in containers.items():
        assert list(iter_businesses(path)) == expected_b, kind
        assert list(iter_reviews(path)) == expected_r, kind
    assert open_bundle(containers["tar"]).container == "tar"
    assert open_bundle(containers["zip"]).container == "zip"
    assert open_bundle(containers["zip+tar"]).container == "zip+tar"


def test_errors_inside_archives_name_the_member(tmp_path):
    src = _write_bundle(tmp_path / "src", [_line(BIZ), b"{broken\n"], [_line(REV)])
    tar_path = tmp_path / "yelp_dataset.tar"
    with tarfile.open(tar_path, "w") as tar:
        for n in (YELP_BUSINESS_FILE, YELP_REVIEW_FILE):
            tar.add(src / n, arcname=n)
    with pytest.raises(TraceDataError) as err:
        inspect_bundle(tar_path, strict=True)
    assert f"yelp_dataset.tar[{YELP_BUSINESS_FILE}]:2:" in str(err.value)


# ---------------------------------------------------------------------------------------------------
# The synthetic bundle and the real sample
# ---------------------------------------------------------------------------------------------------
def test_reader_on_synthetic_bundle(small_bundle):
    manifest = json.loads((small_bundle / SYNTHETIC_MANIFEST).read_text())
    report = inspect_bundle(small_bundle)
    assert report["source"] == "synthetic"
    assert report["businesses"] == manifest["businesses"]
    assert report["reviews"] == manifest["reviews"]
    assert report["reviews_joining_a_business"] == manifest["reviews"]
    assert report["malformed_lines"]["total"] == 0
    assert all(report["trace_city_businesses"][c] > 0 for c in CITY_NAMES)
    assert report["other_city_businesses"] > 0
    raw_cities = {json.loads(line)["city"] for line in (small_bundle / YELP_BUSINESS_FILE).open()}
    assert {"St. Louis", "Saint Louis"} <= raw_cities  # spelling variants in the file ...
    assert "St. Louis" not in {b.city for b in iter_businesses(small_bundle)}  # ... canonical once read


def test_inspect_real_sample(yelp_sample_dir, capsys):
    assert main(["yelp", "inspect", str(yelp_sample_dir), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["businesses"] == 5000
    assert report["reviews"] == 500
    assert report["reviews_joining_a_business"] == 189
    assert report["malformed_lines"]["total"] == 0
    assert report["source"] == "yelp"
    assert sum(report["trace_city_businesses"].values()) + report["other_city_businesses"] == 5000
    assert report["trace_city_businesses"]["Saint Louis"] > 0


def test_real_sample_attributes_parse(yelp_sample_dir):
    businesses = list(iter_businesses(yelp_sample_dir, strict=True))
    assert len(businesses) == 5000
    prices = {b.price for b in businesses}
    assert prices <= {None, 1, 2, 3, 4} and {1, 2, 3, 4} <= prices
    wifi = {b.attributes["wifi"] for b in businesses}
    assert wifi <= {None, "free", "paid", "no"} and "free" in wifi
    noise = {b.attributes["noise_level"] for b in businesses}
    assert noise <= {None, "quiet", "average", "loud", "very_loud"}
    assert any(b.attributes["parking"] for b in businesses)
    assert any(b.attributes["ambience"] for b in businesses)
    assert any(not b.categories for b in businesses)  # null categories exist in the real file
    assert any(b.hours is None for b in businesses)
    assert all(list(b.attributes) == list(ATTRIBUTE_FEATURES) for b in businesses)
    reviews = list(iter_reviews(yelp_sample_dir, strict=True))
    assert len(reviews) == 500 and all(isinstance(r.stars, float) for r in reviews)


def test_cli_inspect_text_output(small_bundle, capsys):
    assert main(["yelp", "inspect", str(small_bundle)]) == 0
    out = capsys.readouterr().out
    assert "businesses per Trace city" in out and "Saint Louis" in out and "source: synthetic" in out
