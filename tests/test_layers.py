"""The layers, checked on every import of the product (module level, inside functions, under TYPE_CHECKING).

Bottom to top (docs/development.md): a module may import its own package and any package below it, never one
above. The simulated traveler lives in the harness (`trace_harness.interactive.simulator`), above every system,
so no system can read a traveler's hidden goal; only the interaction loop and its protocols import it. And no
two modules import each other, directly or through others.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS: tuple[str, ...] = (
    "trace_bench",  # the kernel: seed, user-facing error base, printed commands, the root command
    "trace_llm",  # the LLM layer, self-contained
    "trace_dataset",  # data: Yelp reader, knowledge base, generator, release, datasets builder
    "trace_metrics",  # metrics and evaluators (CoRE)
    "baselines",  # the systems and the toolkit they share
    "trace_harness",  # runner, interactive evaluation with the simulator, leaderboard building
    "spaces_app",  # the Space and the main job
)
SIMULATOR = "trace_harness.interactive.simulator"
SIMULATOR_USERS = ("trace_harness.interactive",)  # the loop and its protocols


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
    tops = {p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file() and p.name not in ("tests", "benchmarks")}
    assert tops == set(LAYERS), f"top-level packages {sorted(tops)}; the layers name {LAYERS}"


@pytest.mark.parametrize("layer", LAYERS)
def test_imports_point_down(layer: str):
    own = LAYERS.index(layer)
    wrong = []
    for path in sorted((ROOT / layer).rglob("*.py")):
        for line, target in imports_of(path):
            other = layer_of(target)
            if other is not None and other > own:
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {target} ({LAYERS[other]} is above {layer})")
    assert not wrong, "\n".join(wrong)


def test_only_the_interaction_loop_reaches_the_simulator():
    wrong = []
    for path in product_files():
        source = module_name(path)
        if source.startswith(SIMULATOR_USERS):
            continue
        wrong += [f"{path.relative_to(ROOT)}:{line} imports {target}" for line, target in imports_of(path)
                  if target == SIMULATOR or target.startswith(SIMULATOR + ".")]
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
