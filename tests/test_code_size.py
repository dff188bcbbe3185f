"""The size rules of docs/development.md, checked on every commit: no module over 500 lines and no function over
80 (from its `def` line to its last, decorators aside) in the product packages, the benchmarks, the scripts and
the tests. A long function is split where its parts have names (the parser, the measurement, the report); a long
module where its concepts part."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support.layout import LAYERS, ROOT

MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80
CHECKED = (*LAYERS, "benchmarks", "scripts", "tests", "integrations")


def python_files() -> list[Path]:
    return sorted(
        p
        for top in CHECKED
        if (ROOT / top).is_dir()
        for p in (ROOT / top).rglob("*.py")
        if "__pycache__" not in p.parts
    )


def long_functions(source: str) -> list[tuple[int, str, int]]:
    """(line, name, length) of every function or method over MAX_FUNCTION_LINES in `source`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > MAX_FUNCTION_LINES:
                found.append((node.lineno, node.name, length))
    return found


def test_the_checker_sees_a_long_function_and_passes_a_short_one():
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    assert long_functions(f"def f():\n{body}\n") == [(1, "f", MAX_FUNCTION_LINES + 1)]
    assert long_functions(f"def f():\n{body[: body.rindex(chr(10))]}\n") == []
    method = "class A:\n    def g(self):\n" + "\n".join(f"        y{i} = {i}" for i in range(90))
    assert [name for _, name, _ in long_functions(method)] == ["g"]


@pytest.mark.parametrize("top", [t for t in CHECKED if (ROOT / t).is_dir()])
def test_no_module_over_500_lines(top):
    long = [
        f"{p.relative_to(ROOT)}: {n} lines"
        for p in python_files()
        if p.relative_to(ROOT).parts[0] == top
        and (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    ]
    assert not long, f"modules over {MAX_MODULE_LINES} lines (split them by concept):\n" + "\n".join(long)


@pytest.mark.parametrize("top", [t for t in CHECKED if (ROOT / t).is_dir()])
def test_no_function_over_80_lines(top):
    long = [
        f"{p.relative_to(ROOT)}:{line} {name}: {length} lines"
        for p in python_files()
        if p.relative_to(ROOT).parts[0] == top
        for line, name, length in long_functions(p.read_text(encoding="utf-8"))
    ]
    assert not long, (
        f"functions over {MAX_FUNCTION_LINES} lines (split them into named parts):\n" + "\n".join(long)
    )
