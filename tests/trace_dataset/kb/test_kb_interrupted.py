"""A killed `kb build` / `corpus release` never leaves a mix of old and new files, and a rerun leaves no
temporaries; a knowledge base whose files are not the ones its kb.json records is refused on load."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.support.cli import run_cli, run_subprocess, temporaries
from trace_dataset.constants import KB_META_FILE, POIS_FILE, REVIEW_INDEX_FILE, REVIEWS_FILE
from trace_dataset.io import TraceDataError, sha256_file
from trace_dataset.kb.build import build_kb
from trace_dataset.kb.stats import kb_stats
from trace_dataset.kb.store import KnowledgeBase

KB_FILES = (POIS_FILE, REVIEW_INDEX_FILE, REVIEWS_FILE, KB_META_FILE)

# Run a command, dying like `kill -9` right after the second file of the build is written.
KILL_AFTER_SECOND_FILE = """
import os, signal, sys
import trace_dataset.kb.build as build
real = build.write_jsonl
calls = []
def write_then_die(path, records):
    n = real(path, records)
    calls.append(path)
    if len(calls) == 2:
        os.kill(os.getpid(), signal.SIGKILL)
    return n
build.write_jsonl = write_then_die
from trace_bench.cli import main
sys.exit(main(sys.argv[1:]))
"""

KILL_WHILE_WRITING_THE_CARD = """
import os, signal, sys
import trace_dataset.release.card as card
def die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)
card.write_card = die
from trace_bench.cli import main
sys.exit(main(sys.argv[1:]))
"""


def digests(folder):
    return {name: sha256_file(folder / name) for name in KB_FILES if (folder / name).exists()}


def test_killed_rebuild_leaves_the_previous_knowledge_base_whole(world, tmp_path, capsys):
    kb = tmp_path / "kb"
    before = build_kb(world.bundle, kb, per_cell=10)
    files_before = digests(kb)

    killed = run_subprocess(
        "kb",
        "build",
        "--yelp",
        world.bundle,
        "--out",
        kb,
        "--per-cell",
        "10",
        "--seed",
        "7",
        code=KILL_AFTER_SECOND_FILE,
    )
    assert killed.returncode == -9, killed.stderr
    # nothing of the new build reached the folder: the old knowledge base, whole, with its version
    assert digests(kb) == files_before
    assert kb_stats(kb)["kb_version"] == before["kb_version"]
    assert KnowledgeBase.load(kb).version == before["kb_version"]
    assert temporaries(tmp_path)  # the killed build's staging folder

    rc, out = run_cli(
        capsys, "kb", "build", "--yelp", world.bundle, "--out", kb, "--per-cell", "10", "--seed", "7"
    )
    assert rc == 0, out
    assert temporaries(tmp_path) == []
    after = json.loads((kb / KB_META_FILE).read_text())
    assert after["kb_version"] != before["kb_version"] and after["parameters"]["seed"] == 7
    assert KnowledgeBase.load(kb).version == after["kb_version"]


def test_killed_release_leaves_no_temporaries_after_a_rerun(world, tmp_path, capsys):
    out = tmp_path / "release"
    killed = run_subprocess(
        "corpus", "release", "--corpus", world.corpus, "--out", out, code=KILL_WHILE_WRITING_THE_CARD
    )
    assert killed.returncode == -9, killed.stderr
    assert not out.exists() and temporaries(tmp_path)
    rc, text = run_cli(capsys, "corpus", "release", "--corpus", world.corpus, "--out", out)
    assert rc == 0, text
    assert temporaries(tmp_path) == [] and (out / "release.json").exists()


@pytest.mark.parametrize("swapped", [POIS_FILE, REVIEW_INDEX_FILE, REVIEWS_FILE])
def test_mixed_knowledge_base_is_refused_on_load(world, tmp_path, capsys, swapped):
    mixed = tmp_path / "kb"
    shutil.copytree(world.kb, mixed)
    other = tmp_path / "other"
    build_kb(world.bundle, other, per_cell=10, seed=7)
    shutil.copyfile(
        other / swapped, mixed / swapped
    )  # one file of another build, as an interrupted copy leaves
    with pytest.raises(TraceDataError, match=f"incomplete or mixed knowledge base: {swapped}"):
        KnowledgeBase.load(mixed)
    rc, text = run_cli(capsys, "kb", "stats", mixed)
    assert rc == 2 and "incomplete or mixed knowledge base" in text and "rebuild" in text


def test_knowledge_base_missing_a_listed_file_is_refused(world, tmp_path, capsys):
    kb = tmp_path / "kb"
    shutil.copytree(world.kb, kb)
    (kb / REVIEW_INDEX_FILE).unlink()
    rc, text = run_cli(capsys, "kb", "stats", kb)
    assert rc == 2 and f"incomplete knowledge base: {REVIEW_INDEX_FILE} is missing" in text


def test_release_and_corpus_knowledge_bases_still_load(world):
    # a release has no reviews file; the corpus holds a byte-for-byte copy: both match their kb.json
    assert KnowledgeBase.load(world.release / "knowledge_base").version
    assert KnowledgeBase.load(world.corpus / "knowledge_base").version


def test_kb_build_refuses_a_folder_that_is_not_a_knowledge_base(world, tmp_path, capsys):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "todo.txt").write_text("keep me\n")
    rc, text = run_cli(capsys, "kb", "build", "--yelp", world.bundle, "--out", folder, "--per-cell", "10")
    assert rc == 2 and "holds no kb.json or pois.jsonl.gz" in text
    assert (folder / "todo.txt").read_text() == "keep me\n"


def test_kb_build_refuses_an_output_holding_the_bundle(world, tmp_path, capsys):
    shutil.copytree(world.bundle, tmp_path / "out" / "bundle")
    rc, text = run_cli(
        capsys, "kb", "build", "--yelp", tmp_path / "out" / "bundle", "--out", tmp_path / "out"
    )
    assert rc == 2 and "holds the Yelp bundle" in text
    assert (tmp_path / "out" / "bundle").is_dir()


def test_a_killed_build_leaves_nothing_once_another_output_is_staged_beside_it(world, tmp_path, capsys):
    """The killed build's hidden staging folder `.kb1.PID.*.tmp` stayed until the same --out was built again;
    now any folder output staged beside it removes what dead writers left; a live writer's staging folder is
    kept."""
    killed = run_subprocess(
        "kb",
        "build",
        "--yelp",
        world.bundle,
        "--out",
        tmp_path / "kb1",
        "--per-cell",
        "10",
        code=KILL_AFTER_SECOND_FILE,
    )
    assert killed.returncode == -9
    left = temporaries(tmp_path)
    assert left and all(name.startswith(".kb1.") for name in left), left
    live = tmp_path / f".other.{__import__('os').getpid()}.abcdefgh.tmp"
    live.mkdir()
    rc, text = run_cli(
        capsys, "kb", "build", "--yelp", world.bundle, "--out", tmp_path / "kb2", "--per-cell", "10"
    )
    assert rc == 0, text
    assert temporaries(tmp_path) == [live.name] and not (tmp_path / "kb1").exists()
