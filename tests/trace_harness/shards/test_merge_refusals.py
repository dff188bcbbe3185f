"""`trace-bench merge` refuses what does not belong together, naming the shard: other settings, data or
baseline (its parameters and prompt hashes), a missing, doubled or unfinished shard, other counts, overlapping
dialogues, edited rows, an unsharded output; and `--shard` is refused where a shard would change the output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.baselines import sample_dialogues, write_data_dir
from tests.support.cli import run_cli
from tests.support.interactive import Scripted
from trace_dataset.io import read_json, write_json
from trace_dataset.shards import Shard
from trace_harness.protocols.interactive.run import run_interactive
from trace_harness.protocols.teacher_forced.runner import meta_path, run_baseline


def corpus(root: Path, n: int = 9, first: int = 1) -> Path:
    dialogues = sample_dialogues(n, "test")
    for i, d in enumerate(dialogues):
        d["dialogue_id"] = f"crs_yelp_{i + first:05d}"
    return write_data_dir(root, dialogues)


@pytest.fixture
def data(tmp_path) -> Path:
    return corpus(tmp_path / "corpus")


def shard_files(data: Path, folder: Path, n: int, name: str = "tfidf", **kwargs) -> list[Path]:
    outs = [folder / f"{name}.{i}-of-{n}.jsonl" for i in range(n)]
    for i, out in enumerate(outs):
        run_baseline(name, data, out, progress=False, shard=Shard(i, n), **kwargs)
    return outs


def refused(capsys, shards, out: Path, *expected: str) -> str:
    code, text = run_cli(capsys, "merge", *map(str, shards), "--out", str(out))
    assert code == 2, text
    assert not out.exists()
    for part in expected:
        assert part in text, text
    return text


def test_a_missing_shard(data, tmp_path, capsys):
    outs = shard_files(data, tmp_path / "s", 3)
    refused(capsys, outs[:2], tmp_path / "m.jsonl", "shard(s) 2/3 missing")


def test_a_doubled_shard(data, tmp_path, capsys):
    outs = shard_files(data, tmp_path / "s", 2)
    refused(capsys, [outs[0], outs[1], outs[1]], tmp_path / "m.jsonl", "shard 1/2 is given twice")


def test_shards_of_other_counts(data, tmp_path, capsys):
    two, three = shard_files(data, tmp_path / "a", 2), shard_files(data, tmp_path / "b", 3)
    refused(capsys, [two[0], three[1]], tmp_path / "m.jsonl", "shard 1/3", "does not belong with shard 0/2")


def test_other_settings(data, tmp_path, capsys):
    closed = shard_files(data, tmp_path / "a", 2)
    opened = shard_files(data, tmp_path / "b", 2, pool="open")
    refused(
        capsys, [closed[0], opened[1]], tmp_path / "m.jsonl", "shard 1/2", "differing: pool", str(opened[1])
    )


def test_another_baseline(data, tmp_path, capsys):
    tfidf, aspect = shard_files(data, tmp_path / "a", 2), shard_files(data, tmp_path / "b", 2, name="aspect")
    refused(capsys, [tfidf[0], aspect[1]], tmp_path / "m.jsonl", "other settings", "baseline")


def test_other_data(data, tmp_path, capsys):
    other = corpus(tmp_path / "other", n=9, first=101)
    mine, theirs = shard_files(data, tmp_path / "a", 2), shard_files(other, tmp_path / "b", 2)
    refused(capsys, [mine[0], theirs[1]], tmp_path / "m.jsonl", "shard 1/2", "data_files")


def test_an_unfinished_shard(data, tmp_path, capsys):
    outs = shard_files(data, tmp_path / "s", 2)
    meta = read_json(meta_path(outs[1]))
    write_json(meta_path(outs[1]), {**meta, "complete": False})
    refused(capsys, outs, tmp_path / "m.jsonl", "shard 1/2 is not complete", str(outs[1]))


def test_overlapping_dialogues(data, tmp_path, capsys):
    outs = shard_files(data, tmp_path / "s", 2)
    meta0, meta1 = read_json(meta_path(outs[0])), read_json(meta_path(outs[1]))
    meta1["shard"]["units"].append(meta0["shard"]["units"][0])
    write_json(meta_path(outs[1]), meta1)
    unit = meta0["shard"]["units"][0][1]
    refused(capsys, outs, tmp_path / "m.jsonl", f"both hold dialogue {unit!r}")


def test_edited_rows(data, tmp_path, capsys):
    outs = shard_files(data, tmp_path / "s", 2)
    lines = outs[0].read_text(encoding="utf-8").splitlines(keepends=True)
    row = json.loads(lines[0])
    row["ranked_poi_ids"] = list(reversed(row["ranked_poi_ids"]))
    outs[0].write_text(json.dumps(row) + "\n" + "".join(lines[1:]), encoding="utf-8")
    refused(capsys, outs, tmp_path / "m.jsonl", "shard 0/2", "not the ones its run recorded")


def test_an_unsharded_run(data, tmp_path, capsys):
    outs = shard_files(data, tmp_path / "s", 2)
    whole = tmp_path / "whole.jsonl"
    run_baseline("tfidf", data, whole, progress=False)
    refused(capsys, [outs[0], whole], tmp_path / "m.jsonl", "not a shard's output", str(whole))


def test_a_shard_resumes_only_itself(data, tmp_path, capsys):
    outs = shard_files(data, tmp_path / "s", 2)
    code, text = run_cli(
        capsys, "run", "tfidf", "--data", str(data), "--out", str(outs[0]), "--shard", "1/2", "--no-progress"
    )
    assert code == 2 and "other settings (differing: shard)" in text


def test_bad_shard_option(data, tmp_path, capsys):
    out = tmp_path / "x.jsonl"
    code, text = run_cli(capsys, "run", "tfidf", "--data", str(data), "--out", str(out), "--shard", "2/2")
    assert code == 2 and "shard index 2 is not in 0..1" in text


def test_a_system_with_memory_is_not_sharded(small_corpus, tmp_path):
    system = Scripted([])
    system.session_isolated = False
    with pytest.raises(ValueError, match="not session-isolated"):
        run_interactive(system, small_corpus, tmp_path / "out", n=3, progress=False, shard=Shard(0, 2))


def test_sniprec_protocol_takes_no_shard(tmp_path, capsys):
    code, text = run_cli(
        capsys,
        "interact",
        "--system",
        "sniprec",
        "--data",
        str(tmp_path),
        "--out",
        str(tmp_path / "o"),
        "--protocol",
        "sniprec",
        "--shard",
        "0/2",
    )
    assert code == 2 and "--shard applies to --protocol trace" in text
