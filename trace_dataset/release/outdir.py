"""All-or-nothing output folders for a release or a hydration: built in a hidden sibling folder and swapped
into place only when every file is written and checked (`trace_dataset.io.staged_dir`, shared with the
knowledge-base builder), so an interrupted or failed run leaves the previous output (or nothing) behind,
never a mix, never a stale reviews file inside a release, and no temporaries after a rerun.
"""

from __future__ import annotations

from pathlib import Path

from trace_dataset.io import copy_file, staged_dir

__all__ = ["copy_bytes", "staged_dir"]


def copy_bytes(src: Path, dst: Path) -> None:
    """Byte-for-byte copy (the knowledge-base files travel unchanged, so their checksums hold)."""
    copy_file(src, dst)
