"""The small worlds that tests of several packages share, one definition each (a pytest plugin that
tests/conftest.py loads). Each is built with the package's own functions; the session-scoped ones are only
read by the tests (a test that changes something copies it first).

    small_bundle   the synthetic Yelp bundle at scale 0.1 (14 POIs per city x type), seed 42
    small_corpus   small_bundle -> knowledge base (11 POIs per cell) -> 48 template dialogues
    hand_kb        a hand-made knowledge base (tests/support/interactive.py) in tmp_path
    world          synthetic bundle -> knowledge base -> 30 dialogues -> release -> Popularity's predictions
    space_world    synthetic bundle -> knowledge base -> 120 dialogues -> Popularity and TF-IDF runs (closed
                   pool), TF-IDF (open pool) -> leaderboard files (~15 s)
    unwritable_dir a folder nothing can be written into
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import World
from tests.support.interactive import HAND_POIS, HAND_REVIEWS, write_kb
from trace_dataset.kb.store import KnowledgeBase

SMALL_SCALE = 0.1
SPACE_BASELINES = ("popularity", "tfidf")


@pytest.fixture(scope="session")
def small_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from trace_dataset.yelp.synth import write_synthetic_bundle

    return write_synthetic_bundle(tmp_path_factory.mktemp("synth") / "bundle", seed=42, scale=SMALL_SCALE)


@pytest.fixture(scope="session")
def small_corpus(small_bundle, tmp_path_factory) -> Path:
    """The built-in pipeline at small scale: synthetic bundle -> KB (11 per cell) -> 48 dialogues."""
    from trace_dataset.generate import generate_corpus
    from trace_dataset.kb.build import build_kb

    root = tmp_path_factory.mktemp("small_corpus")
    build_kb(small_bundle, root / "kb", per_cell=11)
    generate_corpus(root / "kb", root / "corpus", n=48, seed=42, workers=1, progress=False)
    return root / "corpus"


@pytest.fixture
def hand_kb(tmp_path: Path) -> KnowledgeBase:
    return KnowledgeBase.load(write_kb(tmp_path / "kb", HAND_POIS, HAND_REVIEWS))


@pytest.fixture(scope="session")
def world(tmp_path_factory) -> World:
    from trace_dataset.generate import generate_corpus
    from trace_dataset.kb.build import build_kb
    from trace_dataset.release import write_release
    from trace_dataset.yelp.synth import write_synthetic_bundle
    from trace_harness.protocols.teacher_forced.runner import run_baseline

    root = tmp_path_factory.mktemp("world")
    bundle = write_synthetic_bundle(root / "bundle", seed=42, scale=0.1)
    build_kb(bundle, root / "kb", per_cell=10)
    generate_corpus(root / "kb", root / "corpus", n=30, workers=1, progress=False)
    write_release(root / "corpus", root / "release")
    runs = root / "runs"
    run_baseline("popularity", root / "corpus", runs / "popularity.jsonl", progress=False)
    return World(
        root, bundle, root / "kb", root / "corpus", root / "release", runs / "popularity.jsonl", runs
    )


def _chattr(flag: str, path: Path) -> bool:
    if shutil.which("chattr") is None:
        return False
    return subprocess.run(["chattr", flag, str(path)], capture_output=True).returncode == 0


@pytest.fixture
def unwritable_dir(tmp_path) -> Path:
    """A folder nothing can be written into: read-only for a normal user, immutable (chattr +i) for root."""
    folder = tmp_path / "locked"
    folder.mkdir()
    if os.geteuid() != 0:
        folder.chmod(0o555)
        yield folder
        folder.chmod(0o755)
        return
    if not _chattr("+i", folder):
        pytest.skip("running as root without chattr +i support: no way to make a folder unwritable here")
    try:
        yield folder
    finally:
        _chattr("-i", folder)


@pytest.fixture(scope="session")
def space_world(tmp_path_factory) -> dict[str, Path]:
    from trace_dataset.generate import generate_corpus
    from trace_dataset.kb.build import build_kb
    from trace_dataset.yelp.synth import write_synthetic_bundle
    from trace_harness.leaderboard.build import build_leaderboard, write_leaderboard
    from trace_harness.protocols.teacher_forced.runner import run_baseline

    root = tmp_path_factory.mktemp("space_world")
    write_synthetic_bundle(root / "yelp", scale=0.25)
    build_kb(root / "yelp", root / "kb", per_cell=12)
    generate_corpus(root / "kb", root / "data", n=120, workers=1, progress=False)
    for name in SPACE_BASELINES:
        run_baseline(
            name,
            root / "data",
            root / "runs" / "closed" / f"{name}.jsonl",
            split="test",
            pool="closed",
            progress=False,
        )
    run_baseline(
        "tfidf",
        root / "data",
        root / "runs" / "open" / "tfidf.jsonl",
        split="test",
        pool="open",
        progress=False,
    )
    rows = build_leaderboard(root / "data", root / "runs", split="test")
    paths = write_leaderboard(rows, root / "leaderboard")
    return {
        "root": root,
        "data": root / "data",
        "runs": root / "runs" / "closed",
        "open_runs": root / "runs" / "open",
        "baselines": paths["json"],
    }
