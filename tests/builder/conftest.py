"""Fixtures: the hand-made tiny data of tests/release/tinydata.py (loaded by path, so this folder's tests run
on their own too)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[1] / "release" / "tinydata.py"
if "tinydata" not in sys.modules:
    _spec = importlib.util.spec_from_file_location("tinydata", _PATH)
    _module = importlib.util.module_from_spec(_spec)
    sys.modules["tinydata"] = _module
    _spec.loader.exec_module(_module)
tinydata = sys.modules["tinydata"]


@pytest.fixture
def tiny(tmp_path):
    return tinydata.make_tiny(tmp_path)
