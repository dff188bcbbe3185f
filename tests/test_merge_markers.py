"""No tracked file keeps a merge's conflict markers (a merge once left three in docs/figures.md, which the docs
build rendered as text): every file git tracks is read, and a line that is exactly a marker fails the test."""

from __future__ import annotations

import re
import subprocess

from tests.support.layout import ROOT

MARKER = re.compile(r"^(<{7}|>{7})( |$)|^={7}$")


def test_no_tracked_file_keeps_conflict_markers():
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    found = []
    for name in filter(None, listed.decode().split("\0")):
        path = ROOT / name
        if not path.is_file():
            continue
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (UnicodeDecodeError, OSError):
            continue  # binary files hold no text markers
        found += [f"{name}:{i}: {line[:20]}" for i, line in enumerate(lines, 1) if MARKER.match(line)]
    assert not found, "merge conflict markers left in:\n" + "\n".join(found)
