"""Fixtures of the Space's tests, over the small end-to-end world `space_world` (tests/support/worlds.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _away_from_the_checkout(tmp_path, monkeypatch):
    """Every Space test runs in a folder of its own: the app's default folders (runs/interactive, runs/core,
    runs/space) are read relative to it, never the checkout's own runs (a run the docs' commands wrote there
    once showed in a test's Interactive tab)."""
    monkeypatch.chdir(tmp_path)


@pytest.fixture()
def space_settings(space_world, tmp_path):
    from spaces_app.settings import Settings

    return Settings(
        data_dir=space_world["data"],
        results_dir=tmp_path / "results",
        runs_dir=space_world["runs"],
        baselines_file=space_world["baselines"],
        split="test",
        max_upload_mb=5,
        interactive_dirs=(tmp_path / "interactive",),
        core_dirs=(tmp_path / "core",),
    )


@pytest.fixture()
def valid_predictions(space_world, tmp_path) -> Path:
    path = tmp_path / "valid.jsonl"
    shutil.copyfile(space_world["runs"] / "tfidf.jsonl", path)
    return path


@pytest.fixture()
def other_predictions(space_world, tmp_path) -> Path:
    """A second valid file with other scores (popularity's run)."""
    path = tmp_path / "other.jsonl"
    shutil.copyfile(space_world["runs"] / "popularity.jsonl", path)
    return path


@pytest.fixture()
def invalid_predictions(space_world, tmp_path) -> Path:
    lines = (space_world["runs"] / "tfidf.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    path = tmp_path / "invalid.jsonl"
    path.write_text("".join(lines[:-3]), encoding="utf-8")  # three system turns missing
    return path


@pytest.fixture(scope="session")
def paper_text() -> str:
    """The Trace paper's text in ../shared/papers (read in place); skipped when absent."""
    import os

    shared = Path(os.environ.get("TRACE_SHARED_DIR", Path(__file__).resolve().parents[3] / "shared"))
    path = shared / "papers" / "000_16aa03ad148772e3.txt"
    if not path.exists():
        pytest.skip(
            f"the Trace paper's text is not at {path} (set TRACE_SHARED_DIR to the folder holding papers/)"
        )
    return path.read_text(encoding="utf-8")
