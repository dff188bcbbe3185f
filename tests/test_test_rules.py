"""What every test keeps to: LLM doubles subclass the real `trace_llm.LLM` and fake only its backend hook
(`_complete`), so every test goes through the layer's real generate / generate_json path (tests/support/llm.py); no
test asserts on wall-clock time (inject the sleep or the clock; speed is measured in benchmarks/); helpers are
imported by their full name (`from tests.support.x import ...`)."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
CONTRACT = {"generate", "generate_batch", "generate_json", "generate_json_batch", "complete_batch"}


def test_no_double_replaces_the_llm_contract():
    wrong = []
    for path in sorted(TESTS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                own = {f.name for f in node.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
                if own & CONTRACT:
                    wrong.append(
                        f"{path.relative_to(TESTS)}:{node.lineno} {node.name} defines {sorted(own & CONTRACT)}"
                    )
    assert not wrong, "implement `_complete` on a subclass of trace_llm.LLM instead:\n" + "\n".join(wrong)


def test_the_doubles_go_through_the_real_layer():
    from tests.support.llm import QueueLLM, ScriptedLLM
    from trace_llm import LLM, LLMOutputError

    llm = QueueLLM(["not json", '{"a": 1}'])
    assert isinstance(llm, LLM) and isinstance(llm, ScriptedLLM)
    assert llm.generate_json(
        [{"role": "user", "content": "give a"}], {"type": "object", "required": ["a"]}
    ) == {"a": 1}
    assert llm.usage["requests"] == 2 and llm.usage["json_repairs"] == 1  # the layer's repair round
    assert "JSON" in llm.seen[0][-1]["content"]  # the layer's schema instruction reached the "model"
    failing = ScriptedLLM(lambda conversation: "still not json")
    result = failing.generate_json_batch(
        [[{"role": "user", "content": "x"}]], {"type": "object"}, max_repairs=1
    )
    assert isinstance(result[0], LLMOutputError) and result[0].attempts == 2


CLOCKS = {"monotonic", "perf_counter", "time", "process_time", "monotonic_ns", "perf_counter_ns", "time_ns"}


def _clock_call(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in CLOCKS
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "time"
    )


def test_no_test_asserts_on_wall_clock_time():
    wrong = []
    for path in sorted(TESTS.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        clocked = {
            t.id
            for node in ast.walk(tree)
            if isinstance(node, ast.Assign) and _clock_call(node.value)
            for t in node.targets
            if isinstance(t, ast.Name)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Assert) and any(
                _clock_call(n) or (isinstance(n, ast.Name) and n.id in clocked) for n in ast.walk(node.test)
            ):
                wrong.append(f"{path.relative_to(TESTS)}:{node.lineno}")
    assert not wrong, "assertions on wall-clock time:\n" + "\n".join(wrong)


def test_helpers_are_imported_by_full_name():
    product = {p.name for p in TESTS.parent.iterdir() if (p / "__init__.py").is_file()} - {"tests"}
    local = {p.stem for p in TESTS.rglob("*.py")} - {"__init__", "conftest"} - product
    wrong = []
    for path in sorted(TESTS.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and not node.level
                else []
            )
            wrong += [
                f"{path.relative_to(TESTS)}:{node.lineno} {n}" for n in names if n.split(".")[0] in local
            ]
    assert not wrong, wrong
