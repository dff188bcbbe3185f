"""The layers, checked on every import of the product (module level, inside functions, under TYPE_CHECKING).

Bottom to top (docs/development.md): a module may import its own package and any package below it, never one
above. The simulated traveler lives in the harness (`trace_harness.protocols.interactive.simulator`), above every system,
so no system can read a traveler's hidden goal; only the interaction loop and its protocols import it. And no
two modules import each other, directly or through others.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

from tests.support.layout import LAYERS, ROOT

SIMULATOR = "trace_harness.protocols.interactive.simulator"
SIMULATOR_USERS = ("trace_harness.protocols.interactive",)  # the loop and its protocols


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module) of every import in a file."""
    found = []
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            found.append((node.lineno, target))
            # `from pkg import submodule` imports the submodule too
            found.extend((node.lineno, f"{target}.{alias.name}") for alias in node.names)
    return found


def product_files() -> list[Path]:
    return sorted(p for layer in LAYERS for p in (ROOT / layer).rglob("*.py") if "__pycache__" not in p.parts)


def product_modules() -> set[str]:
    return {module_name(p) for p in product_files()}


def layer_of(module: str) -> int | None:
    top = module.split(".")[0]
    return LAYERS.index(top) if top in LAYERS else None


def edges() -> dict[str, set[str]]:
    """module -> the product modules it imports (a name that is an attribute, not a module, is dropped)."""
    known = product_modules()
    graph: dict[str, set[str]] = {}
    for path in product_files():
        source = module_name(path)
        graph[source] = {t for _, t in imports_of(path) if t in known and t != source}
    return graph


def test_every_product_file_is_in_a_layer():
    tops = {
        p.name
        for p in ROOT.iterdir()
        if (p / "__init__.py").is_file() and p.name not in ("tests", "benchmarks")
    }
    assert tops == set(LAYERS), f"top-level packages {sorted(tops)}; the layers name {LAYERS}"


@pytest.mark.parametrize("layer", LAYERS)
def test_imports_point_down(layer: str):
    own = LAYERS.index(layer)
    wrong = []
    for path in sorted((ROOT / layer).rglob("*.py")):
        for line, target in imports_of(path):
            other = layer_of(target)
            if other is not None and other > own:
                wrong.append(
                    f"{path.relative_to(ROOT)}:{line} imports {target} ({LAYERS[other]} is above {layer})"
                )
    assert not wrong, "\n".join(wrong)


def test_only_the_interaction_loop_reaches_the_simulator():
    wrong = []
    for path in product_files():
        source = module_name(path)
        if source.startswith(SIMULATOR_USERS):
            continue
        wrong += [
            f"{path.relative_to(ROOT)}:{line} imports {target}"
            for line, target in imports_of(path)
            if target == SIMULATOR or target.startswith(SIMULATOR + ".")
        ]
    assert not wrong, "\n".join(wrong)


def test_no_import_cycles():
    graph = edges()
    # a package's __init__ that imports its own submodules is not a cycle with them: drop parent -> child
    # edges back from a child to its own package only when the package imports nothing of the child's
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:  # Tarjan's strongly connected components, iteratively deep enough here
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


@functools.cache
def system_of(module: str) -> str | None:
    """The system a module of `baselines` belongs to, or None for what the systems share.

    A registered baseline's module in `baselines/non_llm` or `baselines/llm` is a system of its own; a system
    written as a folder of modules (`baselines/sniprec`, `baselines/collab_rec`) is one system; the rest is
    shared: the contract (`baselines.base`), the registry, `baselines/toolkit`, and what the LLM family shares
    (`baselines.llm` and its `common` and `prompting` modules).
    """
    from baselines import BASELINES

    if not module.startswith("baselines."):
        return None
    singles = {
        BASELINES.module(name)
        for name in BASELINES
        if BASELINES.module(name).startswith(SINGLE_MODULE_FAMILIES)
    }
    if module in singles:
        return module
    folder = ".".join(module.split(".")[:2])
    if folder in singles or folder in SINGLE_MODULE_FAMILIES or folder == "baselines.toolkit":
        return None
    registered_folders = {".".join(BASELINES.module(name).split(".")[:2]) for name in BASELINES}
    return folder if folder in registered_folders else None


SINGLE_MODULE_FAMILIES = ("baselines.non_llm", "baselines.llm")  # one module per baseline


def test_no_system_reaches_into_another_systems_module():
    """Systems share the toolkit and the contract, never each other's modules (Persona-Grounded takes Aspect's
    pipeline from `baselines.toolkit.aspect`; the LLM baselines' Popularity fallback comes from the registry).
    """
    wrong = []
    known = product_modules()
    for path in sorted((ROOT / "baselines").rglob("*.py")):
        source = module_name(path)
        mine = system_of(source)
        for line, target in imports_of(path):
            theirs = system_of(target) if target in known else None
            if theirs is not None and theirs != mine:
                wrong.append(
                    f"{path.relative_to(ROOT)}:{line} imports {target} (system {theirs}) from "
                    f"{'system ' + mine if mine else 'shared code'}"
                )
    assert not wrong, "\n".join(wrong)


def test_the_system_check_knows_the_systems():
    assert system_of("baselines.non_llm.persona") == "baselines.non_llm.persona"
    assert system_of("baselines.llm.llm_zero_shot") == "baselines.llm.llm_zero_shot"
    assert system_of("baselines.sniprec.queries") == "baselines.sniprec"
    assert system_of("baselines.sniprec.pipeline") == "baselines.sniprec"
    assert system_of("baselines.collab_rec.agents") == "baselines.collab_rec"
    for shared in (
        "baselines.base",
        "baselines",
        "baselines.toolkit.aspect",
        "baselines.llm.common",
        "baselines.llm.prompting",
        "baselines.llm",
        "baselines.non_llm",
        "trace_llm.base",
    ):
        assert system_of(shared) is None, shared


def test_the_checks_see_a_violation(tmp_path):
    """The scanner itself: a lazy import of a higher layer, inside a function, is found."""
    sample = ROOT / "trace_llm" / "__init__.py"
    found = dict((t, line) for line, t in imports_of(sample))
    assert "trace_llm.base" in found
    fake = tmp_path / "m.py"
    fake.write_text("def f():\n    from baselines.base import X\n")
    assert [t for _, t in imports_of_file_outside(fake)] == ["baselines.base", "baselines.base.X"]


def imports_of_file_outside(path: Path) -> list[tuple[int, str]]:
    """imports_of for a file outside the product tree (absolute imports only)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and not node.level and node.module:
            out.append((node.lineno, node.module))
            out.extend((node.lineno, f"{node.module}.{a.name}") for a in node.names)
    return out
