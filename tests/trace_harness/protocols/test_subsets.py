"""The seeded subset folder under concurrent writers: the shards of one `--subset` run, started at once, all call
`write_subset` on the one folder; one writes it, the others wait and reuse it, and every one reads the same files."""

from __future__ import annotations

import logging
import multiprocessing
from pathlib import Path

from tests.support.baselines import sample_dialogues, write_data_dir
from trace_dataset.constants import CORPUS_META_FILE
from trace_dataset.datadir import split_file
from trace_dataset.lock import lock_path
from trace_harness.protocols.subsets import subset_dirname, write_subset

N_PROCESSES = 6


class _Count(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.wrote = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.wrote += record.getMessage().startswith("wrote the seeded")


def _shard_reads_subset(barrier, data: Path, target: Path, results) -> None:
    """One shard process: write (or reuse) the subset the moment every shard is ready, then read it."""
    counter = _Count()
    logger = logging.getLogger("trace_harness.protocols.subsets")
    logger.addHandler(counter)
    logger.setLevel(logging.INFO)
    barrier.wait()
    try:
        folder = write_subset(data, target, 5, split="test")
        results.put(("ok", counter.wrote, split_file(folder, "test").read_bytes()))
    except Exception as e:  # the test reports it
        results.put((f"{type(e).__name__}: {e}", counter.wrote, b""))


def test_shards_started_at_once_share_one_subset_written_once(tmp_path):
    data = write_data_dir(tmp_path / "corpus", sample_dialogues(20, "test"))
    target = tmp_path / "runs" / subset_dirname("test", 5, 42)
    ctx = multiprocessing.get_context("fork")
    barrier, results = ctx.Barrier(N_PROCESSES), ctx.Queue()
    shards = [
        ctx.Process(target=_shard_reads_subset, args=(barrier, data, target, results))
        for _ in range(N_PROCESSES)
    ]
    for p in shards:
        p.start()
    got = [results.get(timeout=120) for _ in shards]
    for p in shards:
        p.join(30)
    assert [status for status, _, _ in got] == ["ok"] * N_PROCESSES
    assert sum(wrote for _, wrote, _ in got) == 1  # one writer; the others waited and reused its folder
    assert len({text for _, _, text in got}) == 1
    assert (target / CORPUS_META_FILE).is_file() and not lock_path(target).exists()
    assert sorted(p.name for p in target.parent.iterdir()) == [target.name]  # no temporaries left beside it
