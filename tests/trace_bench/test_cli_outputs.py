"""`--out` that is a file, a folder, a path under a file, or unwritable: one line naming it, exit code 2, before
any work, and nothing written; `corpus generate` refuses a non-empty folder that is not a corpus and bad
counts."""

from __future__ import annotations

import pytest

from tests.support.cli import run_cli, temporaries
from trace_dataset.io import TraceDataError, atomic_open, check_output_dir, check_output_file, write_json


def commands(world, out):
    """Every command with an --out, writing to `out` (a file or a folder, depending on the command)."""
    return {
        "kb build": ["kb", "build", "--yelp", world.bundle, "--out", out, "--per-cell", "10"],
        "corpus generate": [
            "corpus",
            "generate",
            "--kb",
            world.kb,
            "--out",
            out,
            "--n",
            "3",
            "--no-progress",
        ],
        "corpus release": ["corpus", "release", "--corpus", world.corpus, "--out", out],
        "corpus hydrate": [
            "corpus",
            "hydrate",
            "--release",
            world.release,
            "--yelp",
            world.bundle,
            "--out",
            out,
        ],
        "run": ["run", "popularity", "--data", world.corpus, "--out", out, "--no-progress"],
        "evaluate": ["evaluate", "--data", world.corpus, "--predictions", world.predictions, "--out", out],
        "yelp synth": ["yelp", "synth", "--out", out, "--scale", "0.01"],
    }


FOLDER_OUTPUTS = ("kb build", "corpus generate", "corpus release", "corpus hydrate", "yelp synth")
COMMANDS = (
    "kb build",
    "corpus generate",
    "corpus release",
    "corpus hydrate",
    "run",
    "evaluate",
    "yelp synth",
)


@pytest.mark.parametrize("command", FOLDER_OUTPUTS)  # (a file output replaces a file: that is its job)
def test_out_is_an_existing_file(world, tmp_path, capsys, command):
    target = tmp_path / "a_file"
    target.write_text("mine\n")
    rc, text = run_cli(capsys, *commands(world, target)[command])
    assert rc == 2 and str(target) in text and "not a folder" in text, text
    assert target.read_text() == "mine\n"


@pytest.mark.parametrize("command", COMMANDS)
def test_out_under_a_file(world, tmp_path, capsys, command):
    (tmp_path / "a_file").write_text("mine\n")
    target = tmp_path / "a_file" / "out"
    rc, text = run_cli(capsys, *commands(world, target)[command])
    assert rc == 2 and str(target) in text and "a part of the path is a file" in text, text
    assert len(text.strip().splitlines()) == 1


@pytest.mark.parametrize("command", ["run", "evaluate"])
def test_file_out_is_a_folder(world, tmp_path, capsys, command):
    target = tmp_path / "folder"
    target.mkdir()
    rc, text = run_cli(capsys, *commands(world, target)[command])
    assert rc == 2 and "is a folder; expected a file path" in text, text


@pytest.mark.parametrize("command", COMMANDS)
def test_out_in_an_unwritable_folder(world, unwritable_dir, capsys, command):
    target = unwritable_dir / "out"
    rc, text = run_cli(capsys, *commands(world, target)[command])
    assert rc == 2 and str(target) in text and "choose a writable location" in text, text
    assert list(unwritable_dir.iterdir()) == []


def test_generate_refuses_a_folder_that_is_not_a_corpus(world, tmp_path, capsys):
    folder = tmp_path / "photos"
    folder.mkdir()
    (folder / "beach.jpg").write_bytes(b"\xff\xd8")
    rc, text = run_cli(capsys, "corpus", "generate", "--kb", world.kb, "--out", folder, "--n", "3")
    assert rc == 2 and "holds no corpus.json" in text
    assert [p.name for p in folder.iterdir()] == ["beach.jpg"]


def test_generate_reuses_its_own_corpus_folder(world, tmp_path, capsys):
    out = tmp_path / "corpus"
    for _ in range(2):
        rc, text = run_cli(
            capsys, "corpus", "generate", "--kb", world.kb, "--out", out, "--n", "3", "--no-progress"
        )
        assert rc == 0, text
    assert temporaries(tmp_path) == []


@pytest.mark.parametrize(
    ("option", "value"),
    [("--n", "0"), ("--n", "-4"), ("--workers", "0"), ("--max-attempts", "0"), ("--llm-attempts", "-1")],
)
def test_generate_refuses_bad_counts(world, tmp_path, capsys, option, value):
    argv = ["corpus", "generate", "--kb", world.kb, "--out", tmp_path / "c", option, value]
    rc, text = run_cli(capsys, *argv)
    assert rc == 2 and f"argument {option}: expected an integer >= 1, got '{value}'" in text
    assert not (tmp_path / "c").exists()


def test_stale_temporaries_of_dead_writers_are_removed(tmp_path):
    target = tmp_path / "x.json"
    legacy = tmp_path / ".x.json.ab12cd34.tmp"  # the name an earlier version gave its temporaries
    dead = tmp_path / ".x.json.999999999.ab12cd34.tmp"  # a pid no process has
    mine = tmp_path / f".x.json.{__import__('os').getpid()}.zz12cd34.tmp"  # a live writer's: kept
    other = tmp_path / ".x.jsonl.999999999.ab12cd34.tmp"  # another file's: kept
    for p in (legacy, dead, mine, other):
        p.write_text("partial")
    write_json(target, {"a": 1})
    assert not legacy.exists() and not dead.exists() and mine.exists() and other.exists()


def test_check_helpers_refuse_before_writing(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(TraceDataError, match="a part of the path is a file"):
        check_output_file(tmp_path / "f" / "out.json")
    with pytest.raises(TraceDataError, match="is a folder"):
        check_output_file(tmp_path)
    with pytest.raises(TraceDataError, match="not a folder"):
        check_output_dir(tmp_path / "f")
    with pytest.raises(TraceDataError, match="is a folder"), atomic_open(tmp_path, "w"):
        pass
    assert temporaries(tmp_path) == []


def test_generate_writes_over_what_a_killed_run_began(world, tmp_path, capsys):
    out = tmp_path / "corpus"
    (out / "data").mkdir(parents=True)
    (out / "data" / "train.jsonl.gz").write_bytes(b"")  # written before the kill; corpus.json never was
    rc, text = run_cli(
        capsys, "corpus", "generate", "--kb", world.kb, "--out", out, "--n", "3", "--no-progress"
    )
    assert rc == 0, text
    assert (out / "corpus.json").exists()
