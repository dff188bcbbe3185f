"""`generate_corpus`: the five stages end to end, writing a Trace data directory.

Determinism: the whole corpus is assigned up front (cells, tiers, archetypes, splits) and every dialogue
draws from its own RNG seeded with (seed, index, attempt), so the output is byte-identical for the same
inputs whatever the number of worker processes. Workers are forked after the knowledge base has been
indexed, so they share it; results come back in index order and only the parent writes files.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import multiprocessing as mp
import os
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trace_dataset.constants import (
    CORPUS_META_FILE,
    DATA_DIRNAME,
    GENERATOR_BACKENDS,
    KB_DIRNAME,
    KB_META_FILE,
    POIS_FILE,
    REVIEW_INDEX_FILE,
    REVIEWS_FILE,
    SCHEMA_VERSION,
    SPLITS,
    TIERS,
)
from trace_dataset.datafiles import table_hashes
from trace_dataset.generate.attempts import (
    MAX_ATTEMPTS,
    Context,
    Result,
    build_context,
    make_dialogue,
)
from trace_dataset.generate.personas import PERSONAS_FILE
from trace_dataset.generate.phrases import PHRASES_FILE
from trace_dataset.generate.record import GENERATOR
from trace_dataset.io import (
    TraceDataError,
    atomic_open,
    check_output_dir,
    copy_file,
    sha256_file,
    write_json,
)
from trace_dataset.kb.store import KnowledgeBase

if TYPE_CHECKING:
    from trace_llm import LLM

log = logging.getLogger(__name__)

CHUNK = 50
KB_FILES: tuple[str, ...] = (POIS_FILE, REVIEW_INDEX_FILE, REVIEWS_FILE, KB_META_FILE)


_CTX: Context | None = None  # set in the parent right before forking workers


def _work(indices: range) -> list[Result]:
    if _CTX is None:
        raise RuntimeError("worker context not initialised")
    return [make_dialogue(_CTX, i) for i in indices]


def _run_template(ctx: Context, workers: int, progress) -> Iterator[Result]:
    global _CTX
    n = len(ctx.assignments)
    chunks = [range(s, min(n, s + CHUNK)) for s in range(0, n, CHUNK)]
    if workers <= 1 or len(chunks) == 1 or "fork" not in mp.get_all_start_methods():
        if workers > 1:
            log.warning("no 'fork' start method on this platform: generating in one process")
        for chunk in chunks:
            for r in (make_dialogue(ctx, i) for i in chunk):
                progress.update(1)
                yield r
        return
    _CTX = ctx
    try:
        with mp.get_context("fork").Pool(workers) as pool:
            for results in pool.imap(_work, chunks):
                progress.update(len(results))
                yield from results
    finally:
        _CTX = None


def _run_llm(
    ctx: Context,
    llm: LLM | str | None,
    progress: Any,
    *,
    attempts: int,
    fallback: str,
    batch_size: int,
    json_repairs: int,
) -> tuple[list[Result], dict[str, Any]]:
    """The llm backend's results (in-process, in index order) and its part of the report."""
    from trace_dataset.generate.llm_backend import run_llm

    run = run_llm(
        ctx,
        llm,
        attempts=attempts,
        fallback=fallback,
        batch_size=batch_size,
        json_repairs=json_repairs,
        progress=progress,
    )
    return run.results, run.report()


def _generate_and_write(
    ctx: Context,
    out_dir: Path,
    kb_dir: Path,
    backend: str,
    workers: int,
    llm: LLM | str | None,
    progress: bool | None,
    llm_options: dict[str, Any],
) -> tuple[_Tally, dict[str, Any] | None]:
    """Stages 3-5 for every dialogue, each written to its split file as it comes; the tally of the
    results and the llm backend's part of the report (None for the template backend)."""
    from tqdm.auto import tqdm

    disable = True if progress is False else None  # None: tqdm shows the bar only on a terminal
    with tqdm(total=len(ctx.assignments), desc=f"generating ({backend})", unit="dlg", disable=disable) as bar:
        if backend == "template":
            return _write_data(out_dir, kb_dir, ctx, _run_template(ctx, workers, bar)), None
        llm_results, llm_info = _run_llm(ctx, llm, bar, **llm_options)
        return _write_data(out_dir, kb_dir, ctx, iter(llm_results)), llm_info


def _check_out_dir(out_dir: Path) -> None:
    """Before any work: refuse a file, an unwritable place, or a non-empty folder that is not a corpus. A
    corpus holds corpus.json; a folder holding only data/ and knowledge_base/ is one a killed run began (the
    files are written at the end, corpus.json last) and is written over."""
    begun = out_dir.is_dir() and {p.name for p in out_dir.iterdir() if not p.name.startswith(".")} <= {
        DATA_DIRNAME,
        KB_DIRNAME,
    }
    check_output_dir(out_dir, () if begun else (CORPUS_META_FILE,), what="corpus")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("trace-bench")
    except PackageNotFoundError:
        return "0+unknown"


def generate_corpus(
    kb_dir: str | os.PathLike,
    out_dir: str | os.PathLike,
    n: int = 10000,
    backend: str = "template",
    seed: int = 42,
    llm: LLM | str | None = None,
    workers: int | None = None,
    *,
    max_attempts: int = MAX_ATTEMPTS,
    llm_attempts: int = 3,
    llm_fallback: str = "template",
    llm_batch_size: int = 8,
    llm_json_repairs: int = 1,
    progress: bool | None = None,
    split: str | None = None,
) -> dict[str, Any]:
    """Generate `n` dialogues from the knowledge base in `kb_dir` into the Trace data directory `out_dir`;
    returns the corpus.json report.

    backend "template" is offline and deterministic; "llm" writes turn text with `llm` (a spec for
    trace_llm.load_llm such as "smollm2", or a loaded trace_llm.LLM), validates it, retries up to
    `llm_attempts` times and then falls back to the template text for that dialogue ("template") or fails
    ("error"); fallbacks are counted in the report and marked in each dialogue's metadata.backend.

    `split` puts every dialogue in that split instead of the 70/15/15 stratified ones (a blind test set,
    `trace_dataset.release.blind`); the cells, tiers and archetypes are assigned as always.
    """

    kb_dir, out_dir = _check_arguments(kb_dir, out_dir, n, backend, max_attempts, split)
    t0 = time.perf_counter()
    kb = KnowledgeBase.load(kb_dir)
    if workers is None:
        workers = min(os.cpu_count() or 1, 4)
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    # the llm backend runs in-process (a loaded model must not be forked): index in-process too
    ctx = build_context(kb, n, seed, max_attempts, workers=workers if backend == "template" else 1)
    if split is not None:
        ctx.splits = [split] * n
    t1 = time.perf_counter()
    llm_options = {
        "attempts": llm_attempts,
        "fallback": llm_fallback,
        "batch_size": llm_batch_size,
        "json_repairs": llm_json_repairs,
    }
    tally, llm_info = _generate_and_write(ctx, out_dir, kb_dir, backend, workers, llm, progress, llm_options)
    gen_s = time.perf_counter() - t1
    used = workers if backend == "template" else 1
    log.info(
        "generated and wrote %d dialogues in %.1fs (%.0f/s, %d workers)", n, gen_s, n / max(gen_s, 1e-9), used
    )
    files = tally.files
    corpus_version = hashlib.sha256("".join(f"{k}:{v}\n" for k, v in files.items()).encode()).hexdigest()
    by_llm = backend == "llm"
    params = {
        "n": n,
        "seed": seed,
        "backend": backend,
        "max_attempts": max_attempts,
        "llm": llm_info["describe"] if llm_info else None,
        "llm_attempts": llm_attempts if by_llm else None,
        "llm_json_repairs": llm_json_repairs if by_llm else None,
        "llm_fallback": llm_fallback if by_llm else None,
        **(
            {"split": split} if split is not None else {}
        ),  # only then: an ordinary corpus.json keeps its bytes
    }
    report = _report(ctx, tally, files, corpus_version, backend, llm_info, params)
    write_json(out_dir / CORPUS_META_FILE, report)
    _write_card(out_dir)
    log.info("wrote %s in %.1fs total (corpus %s)", out_dir, time.perf_counter() - t0, corpus_version[:12])
    return report


def _check_arguments(
    kb_dir: str | os.PathLike,
    out_dir: str | os.PathLike,
    n: int,
    backend: str,
    max_attempts: int,
    split: str | None = None,
) -> tuple[Path, Path]:
    """Before any work: the options, the knowledge base folder and the output folder."""
    if split is not None and split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; expected one of {SPLITS}")
    if backend not in GENERATOR_BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; expected one of {GENERATOR_BACKENDS}")
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if max_attempts < 1:
        raise ValueError(f"max_attempts must be >= 1, got {max_attempts}")
    kb_path, out_path = Path(kb_dir), Path(out_dir)
    if not kb_path.is_dir():
        raise TraceDataError(
            "knowledge base folder not found (build one with `trace-bench kb build`)", path=kb_path
        )
    if out_path.resolve() == kb_path.resolve() or (out_path / KB_DIRNAME).resolve() == kb_path.resolve():
        raise TraceDataError("output folder must differ from the knowledge base folder", path=out_path)
    _check_out_dir(out_path)
    return kb_path, out_path


@dataclass
class _Tally:
    """What the report counts, added up result by result as the lines are written (no line is kept)."""

    files: dict[str, str] = field(default_factory=dict)
    dialogues: int = 0
    reasons: Counter = field(default_factory=Counter)
    tiers: Counter = field(default_factory=Counter)
    cells: Counter = field(default_factory=Counter)
    splits: Counter = field(default_factory=Counter)
    tier_changes: Counter = field(default_factory=Counter)
    regenerated: int = 0
    extra: int = 0
    turns: int = 0
    rec_turns: int = 0
    rejections: int = 0

    def add(self, ctx: Context, r: Result) -> None:
        self.dialogues += 1
        self.reasons.update(r.reasons)
        if r.attempts > 1:
            self.regenerated += 1
            self.extra += r.attempts - 1
        a = ctx.assignments[r.index]
        self.cells[f"{a.city} x {a.poi_type}"] += 1
        if r.tier and r.tier != a.tier:
            self.tier_changes[f"{a.tier}->{r.tier}"] += 1
        self.splits[r.split] += 1
        self.tiers[r.tier] += 1
        self.turns += r.turns
        self.rec_turns += r.recommendation_turns
        self.rejections += r.rejections


def _write_data(out_dir: Path, kb_dir: Path, ctx: Context, results: Iterator[Result]) -> _Tally:
    """The split files, streamed: each result's line goes to its split's gzip file as it arrives (index
    order) and only its counts are kept, so memory does not grow with the corpus; then byte copies of the
    knowledge base's files. corpus.json and the card come after, so a folder holding only these is one a
    killed run began (`_check_out_dir`). The bytes equal those of writing each file at once (deflate's
    output does not depend on how its input is cut)."""
    tally = _Tally()
    paths = {split: out_dir / DATA_DIRNAME / f"{split}.jsonl.gz" for split in SPLITS}
    with contextlib.ExitStack() as stack:
        files = {split: stack.enter_context(atomic_open(paths[split], "w")) for split in SPLITS}
        for r in results:
            files[r.split].write(r.line + "\n")
            tally.add(ctx, r)
    for name in KB_FILES:
        src = kb_dir / name
        if src.exists():
            copy_file(src, out_dir / KB_DIRNAME / name)
    tally.files = {f"{DATA_DIRNAME}/{split}.jsonl.gz": sha256_file(paths[split]) for split in SPLITS}
    return tally


def _report(ctx: Context, t: _Tally, files, corpus_version, backend, llm_info, params) -> dict:
    report: dict[str, Any] = {
        "generator": GENERATOR,
        "trace_bench_version": _version(),
        "backend": backend,
        "parameters": params,
        "counts": {
            "dialogues": t.dialogues,
            "splits": {s: t.splits[s] for s in SPLITS},
            "tiers": {tier: t.tiers[tier] for tier in TIERS},
            "cells": dict(sorted(t.cells.items())),
            "turns": t.turns,
            "recommendation_turns": t.rec_turns,
            "reject_and_refine_turns": t.rejections,
        },
        "regeneration": {
            "dialogues_regenerated": t.regenerated,
            "extra_attempts": t.extra,
            "reasons": dict(sorted(t.reasons.items())),
            "tier_fallbacks": dict(sorted(t.tier_changes.items())),
        },
        "versions": {
            "schema_version": SCHEMA_VERSION,
            "kb_version": ctx.kb_version,
            "corpus_version": corpus_version,
        },
        "data_tables": table_hashes(
            PERSONAS_FILE, PHRASES_FILE
        ),  # personas (every backend), phrases (template)
        "files": files,
    }
    if llm_info is not None:
        report["llm"] = llm_info
    return report


def _write_card(out_dir: Path) -> None:
    from trace_dataset.release.card import write_card  # imports `datasets`: only when a corpus is written

    write_card(out_dir)
