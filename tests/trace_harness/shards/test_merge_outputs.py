"""`--shard I/N` then `trace-bench merge`: the merged predictions file, interactive run and CoRE run are the bytes
one unsharded run writes, for N = 1, 2, 3, 7 (on the small built-in corpus and the toy CoRE data)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import run_cli
from tests.support.core import scripted
from tests.support.llm import ScriptedLLM
from trace_dataset.shards import Shard
from trace_harness.protocols.interactive.run import run_interactive
from trace_metrics.core.prompts import load_prompts
from trace_metrics.core.runner import collect_logs, run_corpus
from trace_metrics.lib.toy import write_toy_data_dir, write_toy_predictions

COUNTS = (1, 2, 3, 7)


def tree(root: Path) -> dict[str, bytes]:
    """Every file under `root` by its relative path (a file: itself)."""
    if root.is_file():
        return {root.name: root.read_bytes()}
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def merged(capsys, shards: list[Path], out: Path) -> None:
    code, text = run_cli(capsys, "merge", *map(str, reversed(shards)), "--out", str(out))  # any order
    assert code == 0, text


def run_tfidf(data: Path, out: Path, *extra: str) -> None:
    from trace_bench.cli import main

    argv = ("run", "tfidf", "--data", str(data), "--out", str(out), "--no-progress", *extra)
    assert main(list(argv)) == 0


def interact(data: Path, out: Path, shard: Shard | None = None) -> None:
    run_interactive("tfidf", data, out, n=12, progress=False, n_boot=50, shard=shard)


@pytest.fixture(scope="module")
def one_run(small_corpus, tmp_path_factory) -> dict[str, dict[str, bytes]]:
    """The unsharded run's and interactive run's files, made once for every N."""
    root = tmp_path_factory.mktemp("one")
    run_tfidf(small_corpus, root / "run" / "tfidf.jsonl")
    interact(small_corpus, root / "interactive")
    return {"run": tree(root / "run"), "interactive": tree(root / "interactive")}


@pytest.mark.parametrize("n", COUNTS)
def test_run_shards_merge_to_the_one_run(small_corpus, one_run, tmp_path, capsys, n):
    shards = [tmp_path / "shards" / f"tfidf.{i}-of-{n}.jsonl" for i in range(n)]
    for i, out in enumerate(shards):
        run_tfidf(small_corpus, out, "--shard", f"{i}/{n}")
    out = tmp_path / "merged" / "tfidf.jsonl"
    merged(capsys, shards, out)
    assert tree(out.parent) == one_run["run"]


@pytest.mark.parametrize("n", COUNTS)
def test_interactive_shards_merge_to_the_one_run(small_corpus, one_run, tmp_path, capsys, n):
    shards = [tmp_path / f"shard-{i}" for i in range(n)]
    for i, out in enumerate(shards):
        interact(small_corpus, out, Shard(i, n))
    merged(capsys, shards, tmp_path / "merged")
    assert tree(tmp_path / "merged") == one_run["interactive"]


def _core(logs_of, out: Path, shard: Shard | None = None) -> None:
    logs, source = logs_of(shard)
    responder = scripted({"Diversity": "There is no tag in this reply."})
    llm = ScriptedLLM(lambda conv: responder({"messages": conv})[1])
    run_corpus(llm, logs, out, load_prompts(), source=source, max_retries=1)


@pytest.mark.parametrize("n", COUNTS)
def test_core_shards_merge_to_the_one_run(tmp_path, capsys, n):
    data, predictions = (
        write_toy_data_dir(tmp_path / "trace"),
        write_toy_predictions(tmp_path / "tfidf.jsonl"),
    )

    def logs_of(shard):
        return collect_logs(predictions, data, shard=shard)

    _core(logs_of, tmp_path / "one")
    shards = [tmp_path / f"core-{i}" for i in range(n)]
    for i, out in enumerate(shards):
        _core(logs_of, out, Shard(i, n))
    merged(capsys, shards, tmp_path / "merged")
    assert tree(tmp_path / "merged") == tree(tmp_path / "one")
