"""The documentation's tested examples run: every block marked `<!-- test -->` in README.md and docs/*.md
(docs_blocks.py says how; docs/development.md documents the convention)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.docs_blocks import (
    DATA_ENV,
    Block,
    marked_blocks,
    run_python,
    run_shell,
    shell_env,
    venv_bin,
)

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
TESTED = {p.name: marked_blocks(p) for p in PAGES}


def test_the_front_page_tour_is_tested():
    languages = [b.language for b in TESTED["README.md"]]
    assert "bash" in languages and "python" in languages


@pytest.mark.parametrize("page", [name for name, blocks in TESTED.items() if blocks])
def test_page_examples_run(page, tmp_path, monkeypatch, request):
    blocks: list[Block] = TESTED[page]
    data = request.getfixturevalue("docs_data") if any(DATA_ENV in b.code for b in blocks) else None
    env = shell_env(venv_bin(), data)
    monkeypatch.chdir(tmp_path)
    for key in (DATA_ENV, "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE"):
        if key in env:
            monkeypatch.setenv(key, env[key])
    namespace: dict = {"__name__": "__docs__"}
    for block in blocks:
        if block.language == "python":
            run_python(block, namespace)
        else:
            run_shell(block, tmp_path, env)
