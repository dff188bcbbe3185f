"""A release and a hydrated release load with plain `datasets.load_dataset(DIR)` through the card's YAML."""

from __future__ import annotations

import datasets
import pytest

from trace_dataset import load_trace
from trace_dataset.constants import KB_DIRNAME, POIS_FILE, REVIEW_INDEX_FILE, REVIEWS_FILE, SPLITS
from trace_dataset.datadir import split_file
from trace_dataset.io import read_jsonl
from trace_dataset.release import hydrate_release
from trace_dataset.schema import DIALOGUE_FEATURES, POI_FEATURES, REVIEW_FEATURES, REVIEW_INDEX_FEATURES


@pytest.fixture
def hydrated(tiny, release_dir, tmp_path):
    hydrate_release(release_dir, tiny.yelp, tmp_path / "hyd")
    return tmp_path / "hyd"


def _encoded(features, records):
    """What `datasets` should hand back for these records (schema-encoded, missing keys as None)."""
    return [features.decode_example(features.encode_example(r)) for r in records]


def test_hydrated_dialogues_load_with_plain_load_dataset(tiny, hydrated, tmp_path):
    ds = datasets.load_dataset(str(hydrated), cache_dir=str(tmp_path / "cache"))
    assert set(ds) == set(SPLITS)
    for split in SPLITS:
        assert ds[split].features == DIALOGUE_FEATURES
        assert ds[split].to_list() == _encoded(DIALOGUE_FEATURES, read_jsonl(split_file(tiny.corpus, split)))


@pytest.mark.parametrize(
    ("config", "split", "file", "features"),
    [
        ("knowledge_base", "pois", POIS_FILE, POI_FEATURES),
        ("review_index", "review_index", REVIEW_INDEX_FILE, REVIEW_INDEX_FEATURES),
        ("reviews", "reviews", REVIEWS_FILE, REVIEW_FEATURES),
    ],
)
def test_hydrated_kb_configs_load_with_plain_load_dataset(
    tiny, hydrated, tmp_path, config, split, file, features
):
    ds = datasets.load_dataset(str(hydrated), config, cache_dir=str(tmp_path / "cache"))
    assert list(ds) == [split]
    assert ds[split].features == features
    assert ds[split].to_list() == _encoded(features, read_jsonl(tiny.corpus / KB_DIRNAME / file))


def test_release_loads_too_without_review_text(release_dir, tmp_path):
    ds = datasets.load_dataset(str(release_dir), cache_dir=str(tmp_path / "cache"))
    assert ds["test"].num_rows == 3 and "[Q:1]" in ds["test"][0]["turns"][3]["text"]
    assert (
        datasets.load_dataset(str(release_dir), "knowledge_base", cache_dir=str(tmp_path / "cache"))[
            "pois"
        ].num_rows
        == 10
    )
    with pytest.raises(ValueError, match="reviews"):
        datasets.load_dataset(str(release_dir), "reviews", cache_dir=str(tmp_path / "cache"))


def test_hydrated_release_loads_with_load_trace(tiny, hydrated, tmp_path):
    dialogues = load_trace(hydrated, cache_dir=tmp_path / "c")
    assert {s: dialogues[s].num_rows for s in SPLITS} == {"train": 6, "validation": 3, "test": 3}
    turns = load_trace(hydrated, "turns", split="test", cache_dir=tmp_path / "c")
    assert turns.num_rows == 3 * 4  # four system turns per tiny dialogue
    kb = load_trace(hydrated, "knowledge_base", cache_dir=tmp_path / "c")
    assert list(kb) == ["pois"] and kb["pois"].num_rows == 10


def test_an_empty_split_is_left_out_of_the_card(tiny, tmp_path):
    from trace_dataset.io import write_jsonl
    from trace_dataset.release import write_release

    write_jsonl(split_file(tiny.corpus, "test"), [])
    write_release(tiny.corpus, tmp_path / "rel")
    hydrate_release(tmp_path / "rel", tiny.yelp, tmp_path / "hyd")
    ds = datasets.load_dataset(str(tmp_path / "hyd"), cache_dir=str(tmp_path / "cache"))
    assert {s: d.num_rows for s, d in ds.items()} == {"train": 6, "validation": 3}
