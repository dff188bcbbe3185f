"""`TraceBuilder` and `load_trace`: every config, schema features, turn rows, keys, cache freshness, bad input."""

from __future__ import annotations

import gzip

import datasets
import pytest

from trace_dataset import load_trace
from trace_dataset.builder import CONFIG_NAMES, TraceBuilder, TraceConfig
from trace_dataset.constants import KB_DIRNAME, REVIEWS_FILE, SPLITS
from trace_dataset.datadir import iter_dialogues, split_file
from trace_dataset.io import TraceDataError, read_jsonl, write_jsonl
from trace_dataset.schema import (
    DIALOGUE_FEATURES,
    POI_FEATURES,
    REVIEW_FEATURES,
    REVIEW_INDEX_FEATURES,
    TURN_ROW_FEATURES,
)
from trace_dataset.views import turn_row, turn_rows


def test_config_names_and_default():
    assert CONFIG_NAMES == (
        "dialogues",
        "turns",
        "turns_pool_16",
        "turns_pool_32",
        "turns_open",
        "interactive",
        "knowledge_base",
        "review_index",
        "reviews",
    )
    assert [c.name for c in TraceBuilder.BUILDER_CONFIGS] == list(CONFIG_NAMES)
    assert TraceBuilder.DEFAULT_CONFIG_NAME == "dialogues"
    pools = {c.name: c.pool for c in TraceBuilder.BUILDER_CONFIGS if c.kind == "turns"}
    assert pools == {
        "turns": "closed",
        "turns_pool_16": "pool_16",
        "turns_pool_32": "pool_32",
        "turns_open": "open",
    }
    with pytest.raises(ValueError, match="unknown pool 'pool_64'"):
        TraceConfig(name="x", kind="turns", pool="pool_64")


def test_dialogues(tiny, tmp_path):
    ds = load_trace(tiny.corpus, cache_dir=tmp_path / "c")
    assert isinstance(ds, datasets.DatasetDict) and list(ds) == list(SPLITS)
    for split in SPLITS:
        assert ds[split].features == DIALOGUE_FEATURES
        expected = list(read_jsonl(split_file(tiny.corpus, split)))
        assert ds[split]["dialogue_id"] == [d["dialogue_id"] for d in expected]
        assert ds[split].to_list() == [
            DIALOGUE_FEATURES.decode_example(DIALOGUE_FEATURES.encode_example(d)) for d in expected
        ]


@pytest.mark.parametrize(
    ("config", "pool"),
    [("turns", "closed"), ("turns_pool_16", "pool_16"), ("turns_pool_32", "pool_32"), ("turns_open", "open")],
)
def test_turn_configs_are_views_turn_rows(tiny, tmp_path, config, pool):
    ds = load_trace(tiny.corpus, config, split="validation", cache_dir=tmp_path / "c")
    assert ds.features == TURN_ROW_FEATURES
    expected = [r for d in iter_dialogues(tiny.corpus, "validation") for r in turn_rows(d, pool)]
    assert ds.to_list() == expected
    assert set(ds["pool"]) == {pool}
    keys = [(r["dialogue_id"], r["turn_id"]) for r in expected]
    assert len(keys) == len(set(keys)) == 12


@pytest.mark.parametrize(
    ("config", "split", "features", "n"),
    [
        ("knowledge_base", "pois", POI_FEATURES, 10),
        ("review_index", "review_index", REVIEW_INDEX_FEATURES, 60),
        ("reviews", "reviews", REVIEW_FEATURES, 60),
    ],
)
def test_knowledge_base_configs(tiny, tmp_path, config, split, features, n):
    ds = load_trace(tiny.corpus, config, cache_dir=tmp_path / "c")
    assert list(ds) == [split] and ds[split].features == features and ds[split].num_rows == n


def test_data_dir_is_required_and_checked(tiny, tmp_path):
    with pytest.raises(TraceDataError, match="needs data_dir"):
        TraceBuilder(config_name="dialogues", cache_dir=str(tmp_path / "c"))
    with pytest.raises(TraceDataError, match="data directory not found"):
        load_trace(tmp_path / "nowhere", cache_dir=tmp_path / "c")
    with pytest.raises(ValueError, match="unknown Trace config 'turns_pool_64'"):
        load_trace(tiny.corpus, "turns_pool_64", cache_dir=tmp_path / "c")
    with pytest.raises(ValueError, match="unknown split 'dev'"):
        load_trace(tiny.corpus, "dialogues", split="dev", cache_dir=tmp_path / "c")


def test_missing_files(tiny, tmp_path):
    (tiny.corpus / KB_DIRNAME / REVIEWS_FILE).unlink()
    with pytest.raises(TraceDataError, match="hydrate it first"):
        load_trace(tiny.corpus, "reviews", cache_dir=tmp_path / "c")
    split_file(tiny.corpus, "test").unlink()
    with pytest.raises(TraceDataError, match=r"missing file\(s\) \['data/test.jsonl.gz'\]"):
        load_trace(tiny.corpus, "turns", cache_dir=tmp_path / "c")


def _dataset_error(excinfo) -> str:
    """datasets wraps generator errors; the TraceDataError is the cause."""
    e = excinfo.value
    while not isinstance(e, TraceDataError) and e.__cause__ is not None:
        e = e.__cause__
    assert isinstance(e, TraceDataError), repr(excinfo.value)
    return str(e)


def test_corrupt_line_names_file_and_line(tiny, tmp_path):
    with gzip.open(split_file(tiny.corpus, "validation"), "at", encoding="utf-8") as f:
        f.write("{oops\n")
    with pytest.raises(Exception) as excinfo:  # noqa: B017 - datasets' wrapper type varies; the cause is checked
        load_trace(tiny.corpus, cache_dir=tmp_path / "c")
    assert "validation.jsonl.gz:4: not valid JSON" in _dataset_error(excinfo)


def test_duplicate_ids_and_wrong_split(tiny, tmp_path):
    path = split_file(tiny.corpus, "test")
    rows = list(read_jsonl(path))
    write_jsonl(path, [*rows, rows[0]])
    with pytest.raises(Exception) as excinfo:  # noqa: B017
        load_trace(tiny.corpus, "turns", cache_dir=tmp_path / "c")
    assert "duplicate dialogue_id 'crs_yelp_00003'" in _dataset_error(excinfo)
    write_jsonl(path, [{**rows[0], "split": "train"}])
    with pytest.raises(Exception) as excinfo:  # noqa: B017
        load_trace(tiny.corpus, cache_dir=tmp_path / "c2")
    assert "has split 'train' but sits in the 'test' file" in _dataset_error(excinfo)


def test_missing_field_is_named(tiny, tmp_path):
    path = split_file(tiny.corpus, "train")
    rows = list(read_jsonl(path))
    del rows[2]["quote_spans"]
    write_jsonl(path, rows)
    with pytest.raises(Exception) as excinfo:  # noqa: B017
        load_trace(tiny.corpus, cache_dir=tmp_path / "c")
    assert "train.jsonl.gz:3: dialogue record lacks field(s) ['quote_spans']" in _dataset_error(excinfo)


def test_changed_files_are_not_served_from_a_stale_cache(tiny, tmp_path):
    first = load_trace(tiny.corpus, split="test", cache_dir=tmp_path / "c")
    path = split_file(tiny.corpus, "test")
    rows = list(read_jsonl(path))[:1]
    write_jsonl(path, rows)
    second = load_trace(tiny.corpus, split="test", cache_dir=tmp_path / "c")
    assert (first.num_rows, second.num_rows) == (3, 1)
    third = load_trace(tiny.corpus, split="test", cache_dir=tmp_path / "c")  # unchanged: cached and equal
    assert third.to_list() == second.to_list()


def test_an_empty_split_is_left_out(tiny, tmp_path):
    """A tiny corpus can have a split without dialogues; `datasets` cannot serve empty splits."""
    write_jsonl(split_file(tiny.corpus, "validation"), [])
    ds = load_trace(tiny.corpus, "turns", cache_dir=tmp_path / "c")
    assert list(ds) == ["train", "test"]
    with pytest.raises(ValueError, match=r"unknown split 'validation'.*expected one of \('train', 'test'\)"):
        load_trace(tiny.corpus, split="validation", cache_dir=tmp_path / "c")


def test_turn_row_is_the_row_of_one_system_turn(tiny):
    d = next(iter_dialogues(tiny.corpus, "validation"))
    system = [i for i, t in enumerate(d["turns"]) if t["role"] == "system"]
    assert [turn_row(d, i, "pool_16") for i in system] == list(turn_rows(d, "pool_16"))
    assert [len(turn_row(d, i)["history"]) for i in system] == system  # the turns before it, not itself
    user = next(i for i, t in enumerate(d["turns"]) if t["role"] == "user")
    with pytest.raises(ValueError, match=f"{d['dialogue_id']}: turn {user} is a user turn"):
        turn_row(d, user)
