"""The seeded subset a run can be limited to (App. Q: "a 1,000-dialogue subset ... (seed=42)"): which
dialogues, the folder it is written to, and the rule that the runs of one folder share one subset."""

from __future__ import annotations

import logging
import os
import random
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from trace_dataset.constants import (
    CORPUS_META_FILE,
    KB_DIRNAME,
    SEED,
    resolve_splits,
)
from trace_dataset.datadir import (
    check_data_dir,
    corpus_meta,
    iter_dialogues,
    kb_dir,
    split_file,
)
from trace_dataset.io import (
    TraceDataError,
    read_json,
    sha256_file,
    staged_dir,
    write_json,
    write_jsonl,
)
from trace_dataset.lock import output_lock

log = logging.getLogger(__name__)


def select_subset(dialogues: Sequence[dict[str, Any]], n: int, seed: int = SEED) -> list[dict[str, Any]]:
    """`n` dialogues drawn with random.Random(seed).sample, kept in corpus order (all when n >= their count)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"subset must be a positive number of dialogues, got {n!r}")
    if n >= len(dialogues):
        return list(dialogues)
    return [dialogues[i] for i in sorted(random.Random(seed).sample(range(len(dialogues)), n))]


def subset_dirname(split: str, n: int, seed: int) -> str:
    return f"subset-{split}-n{n}-seed{seed}"


def check_one_subset(runs_folder: Path, target: Path) -> None:
    """Runs written into one folder share one subset (so that the folder's leaderboard compares them on the
    same dialogues): a folder that already holds another subset beside its runs is refused, naming both."""
    others = sorted(
        p.name
        for p in runs_folder.glob("subset-*")
        if p.name != target.name and (p / CORPUS_META_FILE).is_file()
    )
    if others:
        raise TraceDataError(
            f"this folder already holds the subset {others[0]}, and this run asks for "
            f"{target.name}: the runs of one folder share one subset; choose another --out "
            f"folder (or delete {others[0]} and the runs made on it)",
            path=runs_folder,
        )


def write_subset(
    data_dir: str | os.PathLike, out_dir: str | os.PathLike, n: int, *, seed: int = SEED, split: str = "test"
) -> Path:
    """A data directory holding the seeded `n`-dialogue subset of `split` ("all": of the whole corpus, each
    dialogue in its own split file) and the same knowledge base (a symlink, a copy where links fail).

    Reused when `out_dir` already holds this very subset of these very files; refused when it holds another.
    One writer at a time (`output_lock`, waiting): the shards of one run, started at once, all read the one
    subset folder; the first writes it, the others wait for it and reuse it.
    """
    splits = resolve_splits(split)
    root = check_data_dir(data_dir, splits).absolute()
    out_dir = Path(out_dir).absolute()
    record = {
        "source": str(root),
        "split": split,
        "n": n,
        "seed": seed,
        "source_data_files": {s: sha256_file(split_file(root, s)) for s in splits},
    }
    if _written(out_dir, record):
        return out_dir
    with output_lock(out_dir, "subset folder", wait=True):
        if _written(out_dir, record):  # another process wrote it while this one waited
            return out_dir
        _write(root, out_dir, splits, record)
    return out_dir


def _written(out_dir: Path, record: dict[str, Any]) -> bool:
    """Whether `out_dir` holds the subset `record` describes; TraceDataError when it holds another."""
    marker = out_dir / CORPUS_META_FILE
    if not marker.exists():
        return False
    found = read_json(marker).get("subset") or {}
    if all(found.get(k) == record[k] for k in ("split", "n", "seed", "source_data_files")):  # same files
        return True
    raise TraceDataError(
        f"this folder holds another subset ({found}); expected {record}: delete it or choose another --out folder",
        path=out_dir,
    )


def _write(root: Path, out_dir: Path, splits: Sequence[str], record: dict[str, Any]) -> None:
    chosen = select_subset(list(iter_dialogues(root, splits)), record["n"], record["seed"])
    with staged_dir(out_dir, CORPUS_META_FILE, protect=(root,), what="subset") as tmp:
        for s in splits:
            write_jsonl(split_file(tmp, s), [d for d in chosen if d["split"] == s])
        try:
            os.symlink(kb_dir(root), tmp / KB_DIRNAME, target_is_directory=True)
        except OSError:  # no symlinks here (some Windows setups): copy
            shutil.copytree(kb_dir(root), tmp / KB_DIRNAME)
        write_json(
            tmp / CORPUS_META_FILE, {**corpus_meta(root), "subset": {**record, "n_dialogues": len(chosen)}}
        )
    log.info(
        "wrote the seeded %d-dialogue subset of %s (%s) to %s", len(chosen), root, record["split"], out_dir
    )
