"""Skips for tests that need an optional package, each saying how to get it."""

from __future__ import annotations

from types import ModuleType

import pytest


def needs_llama_cpp() -> ModuleType:
    """llama-cpp-python (the module), or a skip naming how to install it."""
    return pytest.importorskip(
        "llama_cpp",
        reason="llama-cpp-python is not installed (scripts/setup.sh builds it; docs/development.md)",
    )
