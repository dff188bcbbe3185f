"""Hostile predictions files (deep nesting, binary bytes, huge integers) get one line naming the file and line
from `evaluate` and `submit`; a corrupt release (span offsets far past a review's end) is reported as corrupt."""

from __future__ import annotations

import gzip
import json
import shutil

import pytest

from tests.support.cli import run_cli
from trace_dataset.io import TraceDataError, iter_jsonl_lines, read_json
from trace_metrics.lib.predictions import check_row


def _hostile(world, tmp_path, kind):
    lines = world.predictions.read_bytes().splitlines(keepends=True)
    first = json.loads(lines[0])
    text = json.dumps(first)
    if kind == "deep":
        lines[0] = (text[:-1] + ', "meta": ' + "[" * 200_000 + "]" * 200_000 + "}\n").encode()
    elif kind == "huge integer":
        lines[0] = (text[:-1] + ', "meta": {"n": ' + "9" * 6000 + "}}\n").encode()
    elif kind == "huge turn_id":
        lines[0] = text.replace(f'"turn_id": {first["turn_id"]}', '"turn_id": ' + "7" * 4000).encode() + b"\n"
    elif kind == "binary":
        lines.insert(2, b"\x00\xff\xfe\x89PNG\r\n")
    path = tmp_path / f"{kind.replace(' ', '_')}.jsonl"
    path.write_bytes(b"".join(lines))
    return path


EXPECTED = {
    "deep": ":1: JSON nested too deeply",
    "huge integer": ":1: unreadable JSON value",
    "binary": ":3: not UTF-8 text",
    "huge turn_id": "turn_id 77777777777777777777... is out of range",
}


@pytest.mark.parametrize("kind", list(EXPECTED))
def test_evaluate_names_the_bad_line(world, tmp_path, capsys, kind):
    path = _hostile(world, tmp_path, kind)
    rc, text = run_cli(
        capsys, "evaluate", "--data", world.corpus, "--predictions", path, "--out", tmp_path / "r.json"
    )
    assert rc == 2 and EXPECTED[kind] in text and path.name in text, text
    assert len(text) < 1000  # one readable line, not a 4,000-digit number
    assert not (tmp_path / "r.json").exists()


@pytest.mark.parametrize("kind", list(EXPECTED))
def test_submit_names_the_bad_line(world, tmp_path, capsys, kind):
    path = _hostile(world, tmp_path, kind)
    rc, text = run_cli(
        capsys, "submit", path, "--name", "hostile", "--data", world.corpus, "--results", tmp_path / "store"
    )
    assert rc == 2 and EXPECTED[kind] in text, text


def test_gzip_predictions_truncated(world, tmp_path, capsys):
    data = gzip.compress(world.predictions.read_bytes())
    path = tmp_path / "p.jsonl.gz"
    path.write_bytes(data[: len(data) // 2])
    rc, text = run_cli(
        capsys, "evaluate", "--data", world.corpus, "--predictions", path, "--out", tmp_path / "r.json"
    )
    assert rc == 2 and "truncated or not gzip" in text and "p.jsonl.gz" in text


def test_reader_and_row_checks_directly(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"a": 1}\n{"b": ' + b"[" * 50_000 + b"]" * 50_000 + b"}\n")
    with pytest.raises(TraceDataError, match=r"x.jsonl:2: JSON nested too deeply"):
        list(iter_jsonl_lines(path))
    (tmp_path / "d.json").write_bytes(b"[" * 50_000)
    with pytest.raises(TraceDataError, match="d.json"):
        read_json(tmp_path / "d.json")
    row = {"dialogue_id": "d", "turn_id": -1, "ranked_poi_ids": [], "response": "", "citations": {}}
    with pytest.raises(ValueError, match="out of range"):
        check_row(row)
    with pytest.raises(ValueError, match="at most 200 characters"):
        check_row({**row, "turn_id": 1, "dialogue_id": "d" * 5000})


def test_span_far_past_the_review_is_a_corrupt_release(world, tmp_path, capsys):
    release = tmp_path / "release"
    shutil.copytree(world.release, release)
    path = release / "data" / "test.jsonl.gz"
    lines = gzip.decompress(path.read_bytes()).decode().splitlines()
    k = next(i for i, line in enumerate(lines) if json.loads(line)["quote_spans"])
    d = json.loads(lines[k])
    d["quote_spans"][0]["start"], d["quote_spans"][0]["end"] = 90_000, 90_012
    lines[k] = json.dumps(d, ensure_ascii=False, separators=(",", ":"))
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    rc, text = run_cli(
        capsys,
        "corpus",
        "hydrate",
        "--release",
        release,
        "--yelp",
        world.bundle,
        "--out",
        tmp_path / "hydrated",
    )
    assert rc == 2 and f"test.jsonl.gz:{k + 1}:" in text and "the release is corrupt" in text, text
    assert "another Yelp" not in text.replace("not built from another Yelp version", "")
    assert not (tmp_path / "hydrated").exists()
