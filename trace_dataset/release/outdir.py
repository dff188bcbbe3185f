"""All-or-nothing output folders: a release or a hydration is built in a hidden sibling folder and renamed
into place only when every file is written and checked, so an interrupted or failed run leaves the
previous output (or nothing) behind, never a mix, and never a stale reviews file inside a release.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from trace_dataset.io import TraceDataError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def staged_dir(out_dir: str | os.PathLike, marker: str, *, protect: tuple[Path, ...] = ()) -> Iterator[Path]:
    """Yield an empty staging folder; on success it replaces `out_dir`.

    An existing `out_dir` is replaced only when it is empty or holds `marker` (a previous output of the
    same kind); anything else is refused rather than deleted. `protect` lists input folders that must
    not be the output or inside it.
    """
    out_dir = Path(out_dir).absolute()
    for p in protect:
        p = Path(p).absolute()
        if out_dir == p or p.is_relative_to(out_dir) or out_dir.is_relative_to(p):
            raise TraceDataError(f"output folder overlaps the input folder {p}; choose a separate folder",
                                 path=out_dir)
    if out_dir.exists():
        if not out_dir.is_dir():
            raise TraceDataError("output path exists and is not a folder", path=out_dir)
        if any(out_dir.iterdir()) and not (out_dir / marker).exists():
            raise TraceDataError(
                f"output folder is not empty and holds no {marker} (not an earlier output of this command); "
                "refusing to overwrite it: choose a new or empty folder",
                path=out_dir,
            )
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", suffix=".tmp", dir=out_dir.parent))
    try:
        yield tmp
        os.chmod(tmp, 0o777 & ~_umask())
        if out_dir.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.", suffix=".old", dir=out_dir.parent))
            os.rmdir(old)
            os.replace(out_dir, old)
            os.replace(tmp, out_dir)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def copy_bytes(src: Path, dst: Path) -> None:
    """Byte-for-byte copy (the knowledge-base files travel unchanged, so their checksums hold)."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)
