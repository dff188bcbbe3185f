"""Shards: `I/N` parsed and checked, a partition stable under order and independent of anything but the id."""

from __future__ import annotations

import argparse

import pytest

from trace_bench.errors import UsageError
from trace_dataset.shards import Shard, shard_argument, shard_of

IDS = [f"crs_yelp_{i:05d}" for i in range(1, 200)]


@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_every_id_in_exactly_one_shard_whatever_the_order(n):
    shards = [Shard(i, n) for i in range(n)]
    assert all(sum(s.owns(u) for s in shards) == 1 for u in IDS)
    forward = [s.pick(IDS, str)[0] for s in shards]
    backward = [s.pick(reversed(IDS), str)[0] for s in shards]
    assert [sorted(f) for f in forward] == [sorted(b) for b in backward]
    if n > 1:
        assert all(forward)  # 199 ids: every shard gets some


def test_the_partition_is_pinned():
    """The hash is part of the contract (shards started on other machines, by other versions, must agree)."""
    assert shard_of("crs_yelp_00001", 1) == 0
    assert [shard_of(f"crs_yelp_{i:05d}", 3) for i in range(1, 9)] == [2, 0, 2, 2, 1, 0, 0, 0]


def test_pick_keeps_order_and_records_positions():
    shard = Shard(1, 3)
    mine, positions, total = shard.pick(IDS, str)
    assert total == len(IDS) and [IDS[p] for p in positions] == mine
    assert positions == sorted(positions)
    record = shard.record(mine, positions, total)
    assert record["index"] == 1 and record["count"] == 3 and record["of"] == total
    assert record["units"][0] == [positions[0], mine[0]]


@pytest.mark.parametrize("text", ["0/1", "2/3", " 6/7"])
def test_parse(text):
    shard = Shard.parse(text)
    assert str(shard) == text.strip()


@pytest.mark.parametrize("text", ["3/3", "1", "a/b", "-1/2", "0/0", "1/2/3"])
def test_bad_shards_are_refused_naming_the_value(text):
    with pytest.raises(UsageError, match="shard"):
        Shard.parse(text)
    with pytest.raises(argparse.ArgumentTypeError):
        shard_argument(text)
