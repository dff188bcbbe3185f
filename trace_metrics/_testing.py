"""Test helper: run the `>>>` examples of a metric card (README.md) as tests, so that a card's examples are
executed and cannot drift from the code."""

from __future__ import annotations

import doctest
import os
import re
from pathlib import Path
from typing import Any

_BLOCK_RE = re.compile(r"```python\n(.*?)```", re.DOTALL)
MODULES = (
    Path(__file__).resolve().parent
)  # each evaluate module is a folder here: module, README.md (the card)


def card_examples(readme: str | os.PathLike) -> list[str]:
    """The python code blocks of a card that hold `>>>` examples."""
    text = Path(readme).read_text(encoding="utf-8")
    return [b for b in _BLOCK_RE.findall(text) if ">>>" in b]


def run_card_examples(readme: str | os.PathLike, globs: dict[str, Any] | None = None) -> int:
    """Run every example block of the card in one namespace; returns the number of examples run.

    Raises AssertionError with doctest's report when an example's output differs.
    """
    blocks = card_examples(readme)
    if not blocks:
        raise AssertionError(f"{readme} has no `>>>` example in a ```python block")
    # one doctest over all blocks, so later blocks see the names earlier ones define
    return run_examples("\n".join(blocks), dict(globs or {}), Path(readme).parent.name, str(readme))


def run_examples(source: str, globs: dict[str, Any], name: str, filename: str, lineno: int = 0) -> int:
    """Run the `>>>` examples of `source` in `globs` (kept: a later call sees the names an earlier one defined);
    returns the number run. The docs pages' tested blocks (tests/docs) use it too."""
    test = doctest.DocTestParser().get_doctest(source, globs, name, filename, lineno)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report: list[str] = []
    result = runner.run(test, out=report.append, clear_globs=False)
    if result.failed:
        raise AssertionError("".join(report))
    return result.attempted
