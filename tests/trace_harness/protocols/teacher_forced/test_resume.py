"""Resuming a run keeps only the rows its metadata vouches for: edited rows are refused (--overwrite is the way
out); `--param` with an unknown name or a value of the wrong type is one line, not a traceback."""

from __future__ import annotations

import json

import pytest

import trace_harness.protocols.teacher_forced.workers as workers
from tests.support.cli import run_cli
from trace_dataset.io import TraceDataError
from trace_harness.protocols.teacher_forced.resume import HASH_KEY, ROWS_KEY
from trace_harness.protocols.teacher_forced.runner import meta_path, run_baseline


def _run(world, out, chunk_dialogues=1, **kwargs):
    return run_baseline("tfidf", world.corpus, out, progress=False, chunk_dialogues=chunk_dialogues, **kwargs)


def test_metadata_records_a_running_hash(world, tmp_path):
    out = tmp_path / "p.jsonl"
    meta = _run(world, out)
    import hashlib

    assert meta[ROWS_KEY] == meta["n_rows"] == len(out.read_bytes().splitlines())
    assert meta[HASH_KEY] == hashlib.sha256(out.read_bytes()).hexdigest()


@pytest.mark.parametrize("edit", ["change a ranking", "swap two rows", "drop a row"])
def test_edited_rows_are_refused_on_resume(world, tmp_path, capsys, edit):
    out = tmp_path / "p.jsonl"
    _run(world, out)
    lines = out.read_text().splitlines(keepends=True)
    if edit == "change a ranking":
        row = json.loads(lines[1])
        row["ranked_poi_ids"] = row["ranked_poi_ids"][::-1]
        lines[1] = json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n"
    elif edit == "swap two rows":
        row0, row1 = json.loads(lines[0]), json.loads(lines[1])
        row0["response"], row1["response"] = row1["response"], row0["response"]
        lines[0], lines[1] = (
            json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in (row0, row1)
        )
    else:
        del lines[-1]
    out.write_text("".join(lines))
    with pytest.raises(TraceDataError, match="--overwrite"):
        _run(world, out)
    rc, text = run_cli(capsys, "run", "tfidf", "--data", world.corpus, "--out", out, "--no-progress")
    assert rc == 2 and str(out) in text and "--overwrite" in text
    assert out.read_text() == "".join(lines)  # nothing changed by the refusal
    rc, text = run_cli(
        capsys, "run", "tfidf", "--data", world.corpus, "--out", out, "--no-progress", "--overwrite"
    )
    assert rc == 0, text


def test_a_killed_run_resumes_to_the_same_bytes(world, tmp_path, monkeypatch, caplog):
    ref = tmp_path / "ref.jsonl"
    _run(world, ref)
    out = tmp_path / "out.jsonl"
    real = workers.predict_lines
    calls = []

    def die_on_third_chunk(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(workers, "predict_lines", die_on_third_chunk)
    with caplog.at_level("INFO"), pytest.raises(KeyboardInterrupt):
        _run(world, out)
    monkeypatch.setattr(workers, "predict_lines", real)
    recorded = json.loads(meta_path(out).read_text())[ROWS_KEY]
    assert 0 < recorded == len(out.read_bytes().splitlines())
    total = len(ref.read_bytes().splitlines())
    said = [r.getMessage() for r in caplog.records]
    assert (
        f"{out}: {recorded} of {total} rows written (a rerun resumes after them)" in said
    )  # each checkpoint
    assert f"{out}: stopped after {recorded} of {total} rows (a rerun resumes after them)" in said
    with open(out, "ab") as f:  # the kill also left rows the metadata never recorded, the last one torn
        f.write(ref.read_bytes().splitlines(keepends=True)[recorded] + b'{"dialogue_id": "crs_yel')
    _run(world, out)
    assert out.read_bytes() == ref.read_bytes()
    assert (
        json.loads(meta_path(out).read_text())[HASH_KEY] == json.loads(meta_path(ref).read_text())[HASH_KEY]
    )


def test_a_run_stopped_in_its_first_chunk_leaves_no_empty_file_and_resumes(
    world, tmp_path, monkeypatch, caplog
):
    ref, out = tmp_path / "ref.jsonl", tmp_path / "out.jsonl"
    _run(world, ref, chunk_dialogues=50)

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt  # Ctrl-C while the first chunk's LLM requests are out

    monkeypatch.setattr(workers, "predict_lines", stopped)
    with caplog.at_level("INFO"), pytest.raises(KeyboardInterrupt):
        _run(world, out, chunk_dialogues=50)
    assert not out.exists()  # no 0-byte predictions file
    total = len(ref.read_bytes().splitlines())
    assert f"{out}: stopped after 0 of {total} rows (a rerun resumes after them)" in caplog.messages
    monkeypatch.undo()
    _run(world, out, chunk_dialogues=50)
    assert out.read_bytes() == ref.read_bytes()


@pytest.mark.parametrize(
    ("param", "expected"),
    [
        (
            "bogus=1",
            "--param bogus: baseline 'spatial' has no parameter 'bogus'; expected one of: spatial_weight, "
            "text_weight",
        ),
        ("text_weight=abc", "--param text_weight=abc: expected a number, got the text 'abc'"),
        ("text_weight=[1, 2]", "--param text_weight=[1, 2]: expected a number"),
        ("text_weight=true", "--param text_weight=true: expected a number"),
        ("text_weight=" + "[" * 5000, "expected a number, got the text"),
    ],
)
def test_bad_param_is_one_line(world, tmp_path, capsys, param, expected):
    rc, text = run_cli(
        capsys, "run", "spatial", "--data", world.corpus, "--out", tmp_path / "p.jsonl", "--param", param
    )
    assert rc == 2 and expected in text and len(text.strip().splitlines()) == 1, text
    assert not (tmp_path / "p.jsonl").exists()


def test_param_out_of_range_is_one_line(world, tmp_path, capsys):
    rc, text = run_cli(
        capsys,
        "run",
        "itinerary",
        "--data",
        world.corpus,
        "--out",
        tmp_path / "p.jsonl",
        "--param",
        "radius_m=-5",
    )
    assert rc == 2 and "baseline 'itinerary' rejects its parameters {'radius_m': -5}" in text


def test_unknown_baseline_and_bad_numbers(world, tmp_path, capsys):
    out = tmp_path / "p.jsonl"
    rc, text = run_cli(capsys, "run", "nosuch", "--data", world.corpus, "--out", out)
    assert rc == 2 and "unknown baseline 'nosuch'; expected one of: popularity" in text
    for option in ("--batch-size", "--num-proc"):
        rc, text = run_cli(capsys, "run", "tfidf", "--data", world.corpus, "--out", out, option, "0")
        assert rc == 2 and f"argument {option}: expected an integer >= 1, got '0'" in text


def test_bare_string_params_still_work(world, tmp_path, capsys):
    from trace_harness.protocols.params import check_params

    assert check_params("hybrid_rrf", {"use_dense": False, "query_mode": "concat", "k": 60}) is None
    assert check_params("spatial", {"text_weight": 1}) is None  # an integer is a number
    assert "expected true or false" in check_params("hybrid_rrf", {"use_dense": "maybe"})


def test_shards_without_dialogues_complete_with_an_empty_file(world, tmp_path):
    """The predictions file appears with the first finished chunk; a shard with no dialogues has none, and
    still ends complete with its (empty) file, so that every shard of a run can be merged."""
    from trace_dataset.shards import Shard

    rows = []
    for i in range(8):
        out = tmp_path / f"shard{i}.jsonl"
        meta = run_baseline("popularity", world.corpus, out, progress=False, shard=Shard(i, 8))
        assert meta["complete"] and out.exists()
        rows.append(len(out.read_bytes().splitlines()))
    whole = tmp_path / "whole.jsonl"
    _run(world, whole, chunk_dialogues=50)
    assert 0 in rows and sum(rows) == len(whole.read_bytes().splitlines())
