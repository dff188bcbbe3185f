"""The split files are streamed to disk: no dialogue is kept once written, and the bytes are those the
generator wrote when it held the whole corpus in memory."""

from __future__ import annotations

import gc
import gzip
import weakref
from collections.abc import Iterator

from trace_dataset.constants import SPLITS
from trace_dataset.datadir import split_file
from trace_dataset.generate import pipeline
from trace_dataset.generate.attempts import Result, build_context
from trace_dataset.io import atomic_open, sha256_file
from trace_dataset.kb.store import KnowledgeBase

# The fixture corpus (n=120, seed 42) as the generator wrote it before streaming (every line held, each
# file written at once): the streamed files must keep these bytes.
HELD_IN_MEMORY_SHA256 = {
    "train": "991e180716fd9a07f395240924a189498f50d62237917f53e8fa5004fbffdc58",
    "validation": "29c992f59f881201ac9820141e1836dbc145ac968a7173afc820cba36cb6ded5",
    "test": "50ae7f1b6335b3f5ab5f08d151e2a99eea7935b0ad9f43dbd68c04f3e1c608a6",
}


def test_streamed_files_keep_the_bytes_of_the_in_memory_writer(fixture_corpus):
    out, _ = fixture_corpus
    assert {s: sha256_file(split_file(out, s)) for s in SPLITS} == HELD_IN_MEMORY_SHA256


def test_streamed_file_equals_one_write_of_all_its_lines(fixture_corpus, tmp_path):
    out, _ = fixture_corpus
    for split in SPLITS:
        text = gzip.decompress(split_file(out, split).read_bytes()).decode("utf-8")
        with atomic_open(tmp_path / f"{split}.jsonl.gz", "w") as f:
            f.write(text)
        assert (tmp_path / f"{split}.jsonl.gz").read_bytes() == split_file(out, split).read_bytes()


def test_no_result_is_kept_after_its_line_is_written(fixture_kb, fixture_corpus, tmp_path):
    """The writer drops each result once written: two results back, every earlier one is freed."""
    out, _ = fixture_corpus
    ctx = build_context(KnowledgeBase.load(fixture_kb), 40, 42)
    lines = {s: gzip.decompress(split_file(out, s).read_bytes()).decode().splitlines() for s in SPLITS}
    alive: list[weakref.ref] = []
    leaked: list[int] = []

    def results() -> Iterator[Result]:
        for i in range(40):
            gc.collect()
            leaked.extend(k for k, ref in enumerate(alive[:-2]) if ref() is not None and k not in leaked)
            r = Result(index=i, split=ctx.splits[i], line=lines["train"][0], attempts=1, tier="Easy")
            alive.append(weakref.ref(r))
            yield r

    tally = pipeline._write_data(tmp_path / "c", fixture_kb, ctx, results())
    assert len(alive) == 40 and leaked == []
    assert tally.dialogues == 40 and sum(tally.splits.values()) == 40
