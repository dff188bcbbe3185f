"""Fixtures for the hardening tests: one small real world (synthetic Yelp bundle -> knowledge base -> corpus ->
release -> a baseline's predictions), built once per session with the package's own functions and only read by
the tests (a test that changes something copies it first), and a folder nothing can be written into."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from hardening_helpers import World  # noqa: E402


@pytest.fixture(scope="session")
def world(tmp_path_factory) -> World:
    from trace_dataset.generate import generate_corpus
    from trace_dataset.kb.build import build_kb
    from trace_dataset.release import write_release
    from trace_dataset.yelp.synth import write_synthetic_bundle
    from trace_harness.runner import run_baseline

    root = tmp_path_factory.mktemp("world")
    bundle = write_synthetic_bundle(root / "bundle", seed=42, scale=0.1)
    build_kb(bundle, root / "kb", per_cell=10)
    generate_corpus(root / "kb", root / "corpus", n=30, workers=1, progress=False)
    write_release(root / "corpus", root / "release")
    runs = root / "runs"
    run_baseline("popularity", root / "corpus", runs / "popularity.jsonl", progress=False)
    return World(root, bundle, root / "kb", root / "corpus", root / "release", runs / "popularity.jsonl", runs)


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
