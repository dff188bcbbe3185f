"""The Inspect names of this package's components: `trace_bench/<name>`, the same in every install.

Inspect names a registered task, solver, scorer or metric `<package>/<name>` when it finds the installed
package the function's module belongs to, and `<name>` as given otherwise
(`inspect_ai._util.registry.registry_name`). Which it finds depends on the install (site-packages, an editable
install, or a source tree on `sys.path` whose `*.egg-info` hides the editable install's record), and the
package it would find is `trace_harness`, where the components live (they drive the interaction loop, which
only the harness may import). So every component is registered under its full name (`TEACHER_FORCED_TASK`,
..., in `inspect_eval/__init__.py`) and carries a module name that no import holds (`MODULE`): Inspect then
finds no package and keeps the name, and, finding no module either, records no task file or run folder (an
installed task has none). `inspect eval trace_bench/trace` reaches them through the entry point named
`trace_bench` (pyproject.toml), which imports `_registry`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from trace_harness.integrations.inspect_eval import NAMESPACE

F = TypeVar("F", bound=Callable)
MODULE = f"{NAMESPACE}:inspect"  # not a module name (a colon): Inspect finds neither module nor package


def named(fn: F) -> F:
    """`fn`, for an Inspect decorator above it given the full `trace_bench/<name>` (module docstring)."""
    fn.__module__ = MODULE
    return fn
