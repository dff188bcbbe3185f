from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from trace_bench.cli import main
from trace_dataset.constants import (
    CITY_NAMES,
    KB_META_FILE,
    KB_TARGET_REVIEWS_PER_POI,
    POI_TYPES,
    POIS_FILE,
    REVIEW_INDEX_FILE,
    REVIEW_MAX_CHARS,
    REVIEWS_FILE,
    YELP_REVIEW_FILE,
)
from trace_dataset.io import TraceDataError, read_json, read_jsonl, sha256_file
from trace_dataset.kb import KnowledgeBase
from trace_dataset.kb import build as build_mod
from trace_dataset.kb.build import build_kb, kb_version
from trace_dataset.kb.stats import kb_stats
from trace_dataset.schema import ATTRIBUTE_FEATURES, POI_FEATURES, REVIEW_FEATURES, REVIEW_INDEX_FEATURES
from trace_dataset.yelp.reader import SYNTHETIC_MANIFEST, iter_reviews

PER_CELL = 10
FILES = (POIS_FILE, REVIEW_INDEX_FILE, REVIEWS_FILE, KB_META_FILE)


@pytest.fixture(scope="module")
def small_kb(small_bundle: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("kb") / "kb"
    return out, build_kb(small_bundle, out, per_cell=PER_CELL)


def test_balance_and_schema(small_kb, small_bundle):
    out, meta = small_kb
    pois = list(read_jsonl(out / POIS_FILE))
    assert len(pois) == 8 * 3 * PER_CELL
    for city in CITY_NAMES:
        for t in POI_TYPES:
            assert sum(p["city"] == city and p["poi_type"] == t for p in pois) == PER_CELL
    assert all(list(p) == list(POI_FEATURES) for p in pois)
    assert all(list(p["attributes"]) == list(ATTRIBUTE_FEATURES) for p in pois)
    assert all(p["price"] is None or p["price"] in (1, 2, 3, 4) for p in pois)
    assert all(len(p["review_ids"]) >= 3 for p in pois)
    assert len({p["business_id"] for p in pois}) == len(pois)
    index = list(read_jsonl(out / REVIEW_INDEX_FILE))
    reviews = list(read_jsonl(out / REVIEWS_FILE))
    assert all(list(r) == list(REVIEW_INDEX_FEATURES) for r in index)
    assert all(list(r) == list(REVIEW_FEATURES) for r in reviews)
    assert (
        [r["review_id"] for r in index]
        == [r["review_id"] for r in reviews]
        == [rid for p in pois for rid in p["review_ids"]]
    )
    owner = {rid: p["business_id"] for p in pois for rid in p["review_ids"]}
    assert all(owner[r["review_id"]] == r["business_id"] for r in index)
    assert meta["source"] == "synthetic"


def test_review_count_reproduces_the_paper_average(small_kb):
    _, meta = small_kb
    n = meta["stats"]["pois"]
    assert meta["stats"]["reviews"] == round(
        n * KB_TARGET_REVIEWS_PER_POI
    )  # 14.25 per POI, as 34,208 / 2,400
    assert abs(meta["stats"]["avg_reviews_per_poi"] - 34208 / 2400) < 0.01


def test_text_truncated_as_a_prefix_with_original_length(small_kb, small_bundle):
    out, meta = small_kb
    original = {r.review_id: r.text for r in iter_reviews(small_bundle)}
    index = {r["review_id"]: r for r in read_jsonl(out / REVIEW_INDEX_FILE)}
    n_long = 0
    for r in read_jsonl(out / REVIEWS_FILE):
        full = original[r["review_id"]]
        assert len(r["text"]) <= REVIEW_MAX_CHARS
        assert r["text"] == full[:REVIEW_MAX_CHARS]
        assert index[r["review_id"]]["length"] == len(full)
        n_long += len(full) > REVIEW_MAX_CHARS
    assert n_long > 0 and meta["stats"]["reviews_truncated"] == n_long


def test_kb_json_hashes_and_stats(small_kb):
    out, meta = small_kb
    assert read_json(out / KB_META_FILE) == meta
    assert meta["files"] == {
        name: sha256_file(out / name) for name in (POIS_FILE, REVIEW_INDEX_FILE, REVIEWS_FILE)
    }
    assert meta["kb_version"] == kb_version(meta["files"])
    assert meta["parameters"]["per_cell"] == PER_CELL and meta["parameters"]["seed"] == 42
    s = meta["stats"]
    assert s["pois_per_type"] == {t: 8 * PER_CELL for t in POI_TYPES}
    assert s["cities"] == 8
    assert 3.0 < s["avg_stars"] < 4.5
    assert s["unique_categories"] > 20
    assert (
        s["price_range"]["min"] == 1
        and s["price_range"]["max"] == 4
        and s["price_range"]["label"] == "$–$$$$"
    )
    assert kb_stats(out)["stats"] == s  # recomputed from the files
    assert meta["input"]["synthetic_manifest"]["scale"] == 0.1


def test_deterministic_and_independent_of_review_order(small_kb, small_bundle, tmp_path):
    out, meta = small_kb
    again = tmp_path / "again"
    assert build_kb(small_bundle, again, per_cell=PER_CELL) == meta
    for name in FILES:
        assert (again / name).read_bytes() == (out / name).read_bytes(), name
    shuffled = tmp_path / "shuffled"
    shutil.copytree(small_bundle, shuffled)
    lines = (shuffled / YELP_REVIEW_FILE).read_bytes().splitlines(keepends=True)
    random.Random(1).shuffle(lines)
    (shuffled / YELP_REVIEW_FILE).write_bytes(b"".join(lines))
    build_kb(shuffled, tmp_path / "kb_shuffled", per_cell=PER_CELL)
    for name in (POIS_FILE, REVIEW_INDEX_FILE, REVIEWS_FILE):
        assert (tmp_path / "kb_shuffled" / name).read_bytes() == (out / name).read_bytes(), name


def test_other_seed_selects_differently(small_kb, small_bundle, tmp_path):
    out, meta = small_kb
    other = build_kb(small_bundle, tmp_path / "s7", per_cell=PER_CELL, seed=7)
    assert other["kb_version"] != meta["kb_version"]
    assert other["stats"]["pois_per_type"] == meta["stats"]["pois_per_type"]


def test_second_pass_when_selection_passes_the_tracked_prefix(small_kb, small_bundle, tmp_path, monkeypatch):
    out, _ = small_kb
    monkeypatch.setattr(build_mod, "TRACK_FACTOR", 0)
    monkeypatch.setattr(build_mod, "TRACK_EXTRA", 1)
    build_kb(small_bundle, tmp_path / "kb2", per_cell=PER_CELL)
    for name in (POIS_FILE, REVIEW_INDEX_FILE, REVIEWS_FILE):
        assert (tmp_path / "kb2" / name).read_bytes() == (out / name).read_bytes(), name


def test_too_small_bundle_names_short_cells(small_bundle, tmp_path):
    with pytest.raises(TraceDataError) as err:
        build_kb(small_bundle, tmp_path / "kb", per_cell=40)
    msg = str(err.value)
    assert "short by" in msg and "of 40" in msg and "lower --per-cell to at most" in msg
    assert "Reno x hotel" in msg
    assert not (tmp_path / "kb" / KB_META_FILE).exists()


def test_source_yelp_without_manifest(small_bundle, tmp_path):
    plain = tmp_path / "plain"
    shutil.copytree(small_bundle, plain)
    (plain / SYNTHETIC_MANIFEST).unlink()
    meta = build_kb(plain, tmp_path / "kb", per_cell=3)
    assert meta["source"] == "yelp"
    assert meta["input"]["synthetic_manifest"] is None


def test_knowledge_base_loads(small_kb):
    out, meta = small_kb
    kb = KnowledgeBase.load(out)
    assert len(kb.pois) == 8 * 3 * PER_CELL
    assert len(kb.reviews) == meta["stats"]["reviews"]
    assert kb.version == meta["kb_version"] and kb.has_text
    poi = kb.pois_in("Saint Louis", "attraction")[0]
    reviews = kb.reviews_of(poi.business_id)
    assert len(reviews) == len(poi.review_ids) >= 3
    assert kb.review_text(reviews[0].review_id) == reviews[0].text
    assert reviews[0].length >= len(reviews[0].text)


def test_real_sample_is_too_small(yelp_sample_dir, tmp_path):
    """500 real reviews cannot fill the cells: the error lists them (and nothing is written)."""
    with pytest.raises(TraceDataError, match="short by"):
        build_kb(yelp_sample_dir, tmp_path / "kb", per_cell=1, min_reviews=1)


def test_cli_build_and_stats(small_bundle, tmp_path, capsys):
    out = tmp_path / "kb"
    assert main(["kb", "build", "--yelp", str(small_bundle), "--out", str(out), "--per-cell", "5"]) == 0
    printed = capsys.readouterr().out
    assert "120 (40 ea. restaurant/hotel/attr.)" in printed
    assert main(["kb", "stats", str(out)]) == 0
    table = capsys.readouterr().out
    assert "Avg. stars" in table and "Unique categories" in table and "$–$$$$" in table
    assert "avg. 14.25/POI" in table
    assert main(["kb", "stats", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["stats"]["pois"] == 120
    assert main(["kb", "build", "--yelp", str(small_bundle), "--out", str(out), "--per-cell", "500"]) == 2
    err = capsys.readouterr().err
    assert "short by" in err and "Traceback" not in err
    assert main(["kb", "stats", str(tmp_path / "missing")]) == 2


def test_build_from_archives_equals_build_from_folder(small_bundle, tmp_path):
    import tarfile
    import zipfile

    folder_meta = build_kb(small_bundle, tmp_path / "from_folder", per_cell=3)
    tar_path = tmp_path / "yelp_dataset.tar"
    with tarfile.open(tar_path, "w") as tar:
        for f in sorted(small_bundle.iterdir()):
            tar.add(f, arcname=f.name)
    zip_path = tmp_path / "Yelp-JSON.zip"
    with zipfile.ZipFile(zip_path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.write(tar_path, arcname="Yelp JSON/yelp_dataset.tar")
    for archive in (tar_path, zip_path):
        out = tmp_path / f"from_{archive.suffix[1:]}"
        meta = build_kb(archive, out, per_cell=3)
        assert meta["source"] == "synthetic"  # the manifest travels inside the archive
        assert meta["files"] == folder_meta["files"] and meta["kb_version"] == folder_meta["kb_version"]


def test_parameter_errors(small_bundle, tmp_path, capsys):
    with pytest.raises(ValueError, match="per_cell"):
        build_kb(small_bundle, tmp_path / "x", per_cell=0)
    with pytest.raises(ValueError, match="min_reviews"):
        build_kb(small_bundle, tmp_path / "x", min_reviews=1000)
    assert (
        main(
            [
                "kb",
                "build",
                "--yelp",
                str(small_bundle),
                "--out",
                str(tmp_path / "x"),
                "--min-reviews",
                "1000",
            ]
        )
        == 2
    )
    assert "--min-reviews" in capsys.readouterr().err
