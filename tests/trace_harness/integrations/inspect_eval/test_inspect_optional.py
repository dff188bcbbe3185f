"""Inspect AI stays optional: only the integration's Inspect modules import it, nothing below the harness does,
the protocol modules import none of it, and without it the command says how to install the extra."""

from __future__ import annotations

import importlib.util

import pytest

from tests.support.cli import run_cli
from tests.support.layout import LAYERS, ROOT
from tests.test_layers import imports_of

PACKAGE = ROOT / "trace_harness" / "integrations" / "inspect_eval"
WITHOUT_INSPECT = ("__init__.py", "_namespace.py", "turns.py", "scores.py", "live_setup.py", "cli.py")


def _imports_inspect(path) -> list[int]:
    return [line for line, target in imports_of(path) if target.split(".")[0] == "inspect_ai"]


def test_only_the_integration_imports_inspect_ai():
    wrong = [
        f"{p.relative_to(ROOT)}:{line}"
        for layer in LAYERS
        for p in sorted((ROOT / layer).rglob("*.py"))
        if PACKAGE not in p.parents
        for line in _imports_inspect(p)
    ]
    assert not wrong, wrong
    assert all(not _imports_inspect(PACKAGE / name) for name in WITHOUT_INSPECT)
    assert _imports_inspect(PACKAGE / "tasks.py") and _imports_inspect(PACKAGE / "live.py")


def test_without_inspect_the_command_names_the_extra(monkeypatch, capsys, tmp_path):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "inspect_ai" else real(name, *a)
    )
    rc, text = run_cli(capsys, "inspect", "predictions", tmp_path / "x.eval", "--out", tmp_path / "p.jsonl")
    assert rc == 2
    assert "Inspect AI is not installed" in text and "pip install" in text and "[inspect]" in text


@pytest.mark.parametrize("name", ["trace_bench/trace", "trace_bench/trace_live"])
def test_the_entry_point_registers_the_tasks_under_the_benchmarks_name(name):
    from inspect_ai._util.registry import registry_lookup

    assert registry_lookup("task", name) is not None
    for kind, component in (
        ("solver", "trace_bench/trace_answer"),
        ("scorer", "trace_bench/trace_scores"),
        ("metric", "trace_bench/trace_suite"),
    ):
        assert registry_lookup(kind, component) is not None, component


def test_the_releases_eval_yaml_names_the_tasks_solver_and_scorer():
    from inspect_ai._util.registry import registry_lookup

    from trace_dataset.release.eval_yaml import eval_yaml
    from trace_harness.integrations.inspect_eval import SCORER, SOLVER, TEACHER_FORCED_TASK

    doc = eval_yaml()
    for task in doc["tasks"]:
        assert [s["name"] for s in task["solvers"]] == [SOLVER]
        assert [s["name"] for s in task["scorers"]] == [SCORER]
    assert registry_lookup("solver", SOLVER) is not None and registry_lookup("scorer", SCORER) is not None
    assert f"inspect eval {TEACHER_FORCED_TASK}" in doc["description"]
