"""Run a baseline over a Trace data directory and write the predictions file, resumably.

`run_baseline` writes one JSON line per system turn of the split(s), in corpus order (dialogue file order,
then turn order), whatever `num_proc` is: dialogues are cut into chunks, workers predict whole chunks and the
parent appends the chunks' lines in chunk order. Lines are appended whole and flushed after every chunk,
so an interrupted run leaves a valid prefix (plus at most one torn line). Rerunning the same command
validates that prefix against the expected rows, drops a torn last line, and continues after it.

Run metadata goes beside the file as `<file>.meta.json`: baseline, parameters, split, pool, the data files'
SHA-256 and the corpus and knowledge-base versions. A rerun with different settings refuses to append to
a file another configuration started (use `overwrite=True` / `--overwrite`).
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from baselines import NON_LLM_BASELINES, pipeline
from baselines.base import TracePipeline
from trace_dataset import __version__ as TRACE_VERSION
from trace_dataset.constants import POOLS, SPLITS
from trace_dataset.datadir import (
    check_data_dir,
    corpus_meta,
    corpus_version,
    iter_dialogues,
    kb_dir,
    split_file,
)
from trace_dataset.io import TraceDataError, dumps, read_json, sha256_file, write_json
from trace_dataset.kb.store import KnowledgeBase
from trace_dataset.views import turn_rows

log = logging.getLogger(__name__)

META_SUFFIX = ".meta.json"
DEFAULT_CHUNK_DIALOGUES = 50
ALL_SPLITS = "all"
# Meta fields that must match for a rerun to append to an existing predictions file.
IDENTITY_KEYS: tuple[str, ...] = ("baseline", "parameters", "split", "pool", "data_files", "kb_version")


def meta_path(out: str | os.PathLike) -> Path:
    out = Path(out)
    return out.with_name(out.name + META_SUFFIX)


def resolve_splits(split: str) -> tuple[str, ...]:
    if split == ALL_SPLITS:
        return SPLITS
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; expected one of {(*SPLITS, ALL_SPLITS)}")
    return (split,)


def system_turn_ids(dialogue: dict[str, Any]) -> list[int]:
    return [t["turn_id"] for t in dialogue["turns"] if t["role"] == "system"]


# -------------------------------------------------------------------------------------------------------
# Resuming: validate what an earlier run left behind
# -------------------------------------------------------------------------------------------------------
def read_done(out: Path, expected: Sequence[tuple[str, int]]) -> int:
    """Number of complete, valid leading rows in `out`; a torn last line is cut off the file.

    Every complete line must be a JSON object whose (dialogue_id, turn_id) is the next expected row;
    anything else means the file is not a prefix of this run's output, and it is an error.
    """
    if not out.exists():
        return 0
    with open(out, "rb") as f:
        data = f.read()
    end = data.rfind(b"\n") + 1
    if end < len(data):
        log.warning("%s: discarding a torn last line (%d bytes) left by an interrupted run", out, len(data) - end)
        with open(out, "r+b") as f:
            f.truncate(end)
    n = 0
    for lineno, line in enumerate(data[:end].splitlines(), start=1):
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            raise TraceDataError(f"not valid JSON ({e.msg}); delete the file or rerun with --overwrite",
                                 path=out, line=lineno) from None
        if n >= len(expected):
            raise TraceDataError(f"more rows than the split has ({len(expected)}); rerun with --overwrite",
                                 path=out, line=lineno)
        key = (record.get("dialogue_id"), record.get("turn_id")) if isinstance(record, dict) else None
        if key != expected[n]:
            raise TraceDataError(
                f"row {key} where {expected[n]} was expected: not a prefix of this run's output; "
                "delete the file or rerun with --overwrite", path=out, line=lineno,
            )
        n += 1
    return n


# -------------------------------------------------------------------------------------------------------
# Workers
# -------------------------------------------------------------------------------------------------------
_WORKER: TracePipeline | None = None


def _init_worker(name: str, kb_root: str, params: dict[str, Any], batch_size: int) -> None:
    global _WORKER
    # N workers already use N cores: a model-backed baseline (dense, hybrid_rrf) must not also start a
    # thread pool per worker, which oversubscribes the cores (measured: 2x the CPU time for the same work).
    os.environ["OMP_NUM_THREADS"] = "1"
    _WORKER = pipeline(name, kb=KnowledgeBase.load(kb_root), batch_size=batch_size, **params)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)


def predict_lines(pipe: TracePipeline, dialogues: Sequence[dict[str, Any]], pool: str, skip: int = 0) -> list[str]:
    """JSON lines for every system turn of `dialogues`, in order, without the first `skip` rows."""
    rows = (r for d in dialogues for r in turn_rows(d, pool))
    lines = [dumps(rec) + "\n" for rec in pipe(rows)]
    return lines[skip:]


def _work(task: tuple[list[dict[str, Any]], str, int]) -> list[str]:
    if _WORKER is None:
        raise RuntimeError("worker process was not initialised")
    dialogues, pool, skip = task
    return predict_lines(_WORKER, dialogues, pool, skip)


def _chunks(dialogues: Sequence[dict[str, Any]], counts: Sequence[int], done: int,
            size: int) -> Iterator[tuple[list[dict[str, Any]], int, int]]:
    """(dialogues, rows to skip, rows produced) for the work left after `done` rows."""
    start, before = 0, 0
    while start < len(dialogues) and before + counts[start] <= done:
        before += counts[start]
        start += 1
    skip = done - before
    for i in range(start, len(dialogues), size):
        chunk = list(dialogues[i : i + size])
        rows = sum(counts[i : i + size]) - skip
        yield chunk, skip, rows
        skip = 0


# -------------------------------------------------------------------------------------------------------
# The run
# -------------------------------------------------------------------------------------------------------
def run_baseline(name: str, data_dir: str | os.PathLike, out: str | os.PathLike, *, split: str = "test",
                 pool: str = "closed", batch_size: int = 64, num_proc: int = 1,
                 params: dict[str, Any] | None = None, overwrite: bool = False, progress: bool = True,
                 chunk_dialogues: int = DEFAULT_CHUNK_DIALOGUES, kb: KnowledgeBase | None = None) -> dict[str, Any]:
    """Write predictions of baseline `name` for `split` under `pool` to `out`; returns the run metadata."""
    if pool not in POOLS:
        raise ValueError(f"unknown pool {pool!r}; expected one of {POOLS}")
    if num_proc < 1:
        raise ValueError(f"num_proc must be >= 1, got {num_proc}")
    if chunk_dialogues < 1:
        raise ValueError(f"chunk_dialogues must be >= 1, got {chunk_dialogues}")
    splits = resolve_splits(split)
    params = dict(params or {})
    root = check_data_dir(data_dir, splits)
    out = Path(out)
    kb = KnowledgeBase.load(kb_dir(root)) if kb is None else kb
    pipe = pipeline(name, kb=kb, batch_size=batch_size, **params)

    dialogues = list(iter_dialogues(root, splits))
    counts = [len(system_turn_ids(d)) for d in dialogues]
    expected = [(d["dialogue_id"], t) for d in dialogues for t in system_turn_ids(d)]
    corpus = corpus_meta(root)
    meta: dict[str, Any] = {
        **pipe.describe(),
        "split": split,
        "pool": pool,
        "data_files": {s: sha256_file(split_file(root, s)) for s in splits},
        "corpus_version": corpus_version(corpus),
        "kb_version": kb.version,
        "n_dialogues": len(dialogues),
        "n_rows": len(expected),
        "trace_bench_version": TRACE_VERSION,
        "complete": False,
    }

    mpath = meta_path(out)
    if overwrite:
        for path in (out, mpath):
            path.unlink(missing_ok=True)
    if out.exists():
        if not mpath.exists():
            raise TraceDataError(f"predictions file exists without its {META_SUFFIX}; delete it or rerun with "
                                 "--overwrite", path=out)
        old = read_json(mpath)
        diff = [k for k in IDENTITY_KEYS if old.get(k) != meta[k]]
        if diff:
            raise TraceDataError(f"predictions file was started with other settings (differing: {', '.join(diff)}); "
                                 "use another --out or rerun with --overwrite", path=out)
    done = read_done(out, expected)
    if done:
        log.info("%s: resuming after %d of %d rows", out, done, len(expected))
    write_json(mpath, meta)

    out.parent.mkdir(parents=True, exist_ok=True)
    tasks = list(_chunks(dialogues, counts, done, chunk_dialogues))
    bar = _progress(total=len(expected), initial=done, desc=name, enabled=progress)
    written = done
    with open(out, "a", encoding="utf-8", newline="\n") as f:
        for lines in _results(pipe, name, kb, params, batch_size, tasks, pool, num_proc):
            f.write("".join(lines))
            f.flush()
            written += len(lines)
            bar.update(len(lines))
    bar.close()
    if written != len(expected):
        raise RuntimeError(f"wrote {written} rows, expected {len(expected)}")  # a bug, not bad input
    meta["complete"] = True
    write_json(mpath, meta)
    log.info("%s: %d predictions in %s", name, written, out)
    return meta


def _results(pipe: TracePipeline, name: str, kb: KnowledgeBase, params: dict[str, Any], batch_size: int,
             tasks: list[tuple[list[dict[str, Any]], int, int]], pool: str, num_proc: int) -> Iterator[list[str]]:
    """Lines of each chunk, in chunk order (single process, or a process pool's ordered imap)."""
    if num_proc == 1 or len(tasks) <= 1:
        for chunk, skip, _ in tasks:
            yield predict_lines(pipe, chunk, pool, skip)
        return
    if kb.root is None:
        raise ValueError("num_proc > 1 needs a knowledge base loaded from a folder (KnowledgeBase.load)")
    # spawn: workers rebuild the pipeline from its name and parameters; no inherited threads or locks.
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(num_proc, initializer=_init_worker, initargs=(name, str(kb.root), params, batch_size)) as mp:
        yield from mp.imap(_work, [(chunk, pool, skip) for chunk, skip, _ in tasks])


def _progress(total: int, initial: int, desc: str, enabled: bool):
    from tqdm.auto import tqdm

    return tqdm(total=total, initial=initial, desc=desc, unit="turn", disable=not enabled, dynamic_ncols=True)


def run_all(data_dir: str | os.PathLike, out_dir: str | os.PathLike, names: Sequence[str] | None = None,
            **kwargs: Any) -> dict[str, dict[str, Any] | str]:
    """Every non-LLM baseline (or `names`) into out_dir/<name>.jsonl; name -> meta, or the error text.

    A baseline that fails (for example, dense without its model package) is reported and the rest run.
    """
    names = list(NON_LLM_BASELINES) if names is None else list(names)
    out_dir = Path(out_dir)
    root = check_data_dir(data_dir, resolve_splits(kwargs.get("split", "test")))
    kb = KnowledgeBase.load(kb_dir(root))
    results: dict[str, dict[str, Any] | str] = {}
    for name in names:
        try:
            results[name] = run_baseline(name, root, out_dir / f"{name}.jsonl", kb=kb, **kwargs)
        except (ImportError, KeyError, RuntimeError) as e:
            log.error("baseline %s failed: %s", name, e)
            results[name] = f"{type(e).__name__}: {e}"
    return results
