"""Run a baseline over a Trace data directory and write the predictions file, resumably.

`run_baseline` writes one JSON line per system turn of the split(s), in corpus order (dialogue file order,
then turn order), whatever `num_proc` is: dialogues are cut into chunks, workers predict whole chunks and the
parent appends the chunks' lines in chunk order. Lines are appended whole and flushed after every chunk,
so an interrupted run leaves a valid prefix (plus at most one torn line). Rerunning the same command
validates that prefix against the expected rows, drops a torn last line, and continues after it.

Run metadata goes beside the file as `<file>.meta.json`: baseline, parameters, split, pool, the data files'
SHA-256 and the corpus and knowledge-base versions. A rerun with different settings refuses to append to
a file another configuration started (use `overwrite=True` / `--overwrite`).

A pipeline that is not session-isolated (Memory-Aug.) runs in one process, and a resumed run replays it from
the first row (dropping the rows already written), so its cross-dialogue state is the one an uninterrupted
run has. `subset=N` runs on the seeded N-dialogue subset of the split(s) (App. Q's open-set protocol, seed
42), written once as a data directory of its own (`write_subset`) so that `trace-bench evaluate` and the
leaderboard score it like any corpus. At the end the metadata gets `summary`: `rows`, the sum of every
prediction's `meta.counts` (fallbacks, retries, failed checks) over the whole file, and the pipelines'
`summary()` (LLM usage), summed over worker processes, for this invocation (`usage`) and all of them so far
(`usage_all_invocations`), and `fallbacks`: `trace_harness.fallbacks.fallback_report` of the two (per kind of
fallback or failure its count and share, and whether the run is the system's own result).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from baselines import NON_LLM_BASELINES, pipeline
from baselines.base import TracePipeline
from trace_bench.errors import UsageError
from trace_dataset import __version__ as TRACE_VERSION
from trace_dataset.constants import (
    POOLS,
    SEED,
    resolve_splits,
)
from trace_dataset.datadir import (
    check_data_dir,
    corpus_meta,
    corpus_version,
    iter_dialogues,
    kb_dir,
    split_file,
)
from trace_dataset.io import TraceDataError, check_output_file, read_json, sha256_file, write_json
from trace_dataset.kb.store import KnowledgeBase
from trace_dataset.shards import SHARD_KEY, Shard
from trace_harness.fallbacks import add_counts, fallback_report, row_counts
from trace_harness.protocols.base import Protocol, RunConfig
from trace_harness.protocols.subsets import check_one_subset, subset_dirname, write_subset
from trace_harness.protocols.teacher_forced.resume import (
    RowLedger,
    dialogue_chunks,
    read_done,
    system_turn_ids,
    verify_rows,
)
from trace_harness.protocols.teacher_forced.workers import chunk_results
from trace_llm import SECRET_OPTIONS, TRANSPORT_OPTIONS, LLMError

log = logging.getLogger(__name__)

META_SUFFIX = ".meta.json"
DEFAULT_CHUNK_DIALOGUES = 50
# Meta fields that must match for a rerun to append to an existing predictions file.
IDENTITY_KEYS: tuple[str, ...] = (
    "baseline",
    "parameters",
    "split",
    "pool",
    "data_files",
    "kb_version",
    "subset",
    "llm_options",
    SHARD_KEY,
)
# Where an LLM server runs is not part of a run's identity: the same model behind another URL (a restarted
# server, a cluster moved) may finish a run; the LLM layer's cache keys on the model name for the same reason.
ENDPOINT_KEYS: tuple[str, ...] = ("base_url", "base_urls", "spec")
# Nor is how the requests travel (deadlines, retries, requests in flight, batch size, CPU threads, llama.cpp's
# prompt cache and copies of the model): a run resumed with another --llm-timeout or --llm-concurrency asks the same model the same
# prompts. They stay recorded in the metadata (`llm_options`, `parameters.llm`) as the latest invocation gave them.
TRANSPORT_KEYS: tuple[str, ...] = TRANSPORT_OPTIONS  # declared in trace_llm.options (`transport=True`)
SECRET_KEYS: tuple[str, ...] = SECRET_OPTIONS  # never written to the metadata


def dialogue_id(dialogue: Mapping[str, Any]) -> str:
    return str(dialogue["dialogue_id"])


def meta_path(out: str | os.PathLike) -> Path:
    out = Path(out)
    return out.with_name(out.name + META_SUFFIX)


def llm_identity(description: Mapping[str, Any]) -> dict[str, Any]:
    """An LLM's `describe()` without where it runs and how the requests travel: what must match to resume."""
    return {k: v for k, v in description.items() if k not in ENDPOINT_KEYS + TRANSPORT_KEYS}


def run_identity(meta: Mapping[str, Any]) -> dict[str, Any]:
    """The metadata fields that must match for a rerun to append (IDENTITY_KEYS; LLM endpoints and transport
    settings left out)."""
    out = {k: meta.get(k) for k in IDENTITY_KEYS}
    params = out.get("parameters")
    if isinstance(params, dict) and isinstance(params.get("llm"), dict):
        out["parameters"] = {**params, "llm": llm_identity(params["llm"])}
    options = out.get("llm_options")
    if isinstance(options, dict):
        out["llm_options"] = {k: v for k, v in options.items() if k not in TRANSPORT_KEYS} or None
    return out


def recorded_llm_options(params: Mapping[str, Any]) -> dict[str, Any] | None:
    """The backend options a run was given (`llm_options`), secrets left out; None without any."""
    options = params.get("llm_options")
    if not isinstance(options, Mapping):
        return None
    return {str(k): v for k, v in options.items() if k not in SECRET_KEYS and v is not None} or None


# -------------------------------------------------------------------------------------------------------
# Workers
# -------------------------------------------------------------------------------------------------------
# -------------------------------------------------------------------------------------------------------
# The run
# -------------------------------------------------------------------------------------------------------
class TeacherForcedRun(Protocol):
    """One system over every system turn of the split(s), on fixed (teacher-forced) histories: one prediction
    line per turn, in corpus order, resumable (module docstring)."""

    name = "teacher_forced"
    unit = "turn"
    output_kind = "predictions file"

    def __init__(
        self,
        system: str,
        config: RunConfig,
        out: str | os.PathLike,
        *,
        batch_size: int = 64,
        num_proc: int = 1,
        params: Mapping[str, Any] | None = None,
        overwrite: bool = False,
        progress: bool = True,
        chunk_dialogues: int = DEFAULT_CHUNK_DIALOGUES,
        kb: KnowledgeBase | None = None,
        subset_dir: str | os.PathLike | None = None,
    ):
        if config.pool not in POOLS:
            raise ValueError(f"unknown pool {config.pool!r}; expected one of {POOLS}")
        if num_proc < 1:
            raise ValueError(f"num_proc must be >= 1, got {num_proc}")
        if chunk_dialogues < 1:
            raise ValueError(f"chunk_dialogues must be >= 1, got {chunk_dialogues}")
        if config.limit is not None:  # its rows are checked against the split's (resume, evaluate)
            raise ValueError("a teacher-forced run covers its split or a seeded subset of it (subset=N)")
        super().__init__(config, check_output_file(out), overwrite=overwrite, progress=progress)
        self.system, self.batch_size, self.num_proc = system, batch_size, num_proc
        self.params, self.chunk_dialogues = dict(params or {}), chunk_dialogues
        self.kb, self.subset_dir = kb, subset_dir
        self.meta: dict[str, Any] = {}
        self.shard: dict[str, Any] | None = None  # the shard's record (RunConfig.select), when sharded

    def start(self) -> None:
        """The data (the seeded subset written once), the pipeline, the run metadata, and how many rows an
        earlier run left that this one keeps."""
        config, name = self.config, self.system
        root = self._data()
        kb = self.kb = KnowledgeBase.load(kb_dir(root)) if self.kb is None else self.kb
        self.pipe = _build(name, kb, self.batch_size, self.params)
        self.replay = not self.pipe.session_isolated
        if self.replay and self.num_proc > 1:
            log.warning(
                "%s is not session-isolated (it carries state across dialogues): running it in one process, "
                "in corpus order, instead of %d",
                name,
                self.num_proc,
            )
            self.num_proc = 1
        if self.replay and config.shard is not None:
            raise UsageError(
                f"{name} is not session-isolated (it carries state across dialogues): shards would change its "
                "predictions; run it without --shard"
            )
        splits = resolve_splits(config.split)
        self.dialogues, self.shard = config.select(iter_dialogues(root, splits), key=dialogue_id)
        expected = [(d["dialogue_id"], t) for d in self.dialogues for t in system_turn_ids(d)]
        self.meta = meta = self._meta(root, splits, len(expected))
        self.done, self.ledger, self.earlier = self._resume(expected)
        self.total, self.label = len(expected), name
        meta.update(self.ledger.record())
        write_json(meta_path(self.out), meta)

    def _data(self) -> Path:
        """The data directory the run reads: the split's, or its seeded subset (written once, App. Q)."""
        config = self.config
        root = check_data_dir(config.data, resolve_splits(config.split))
        if config.subset is None:
            return root
        if self.subset_dir is None:
            target = self.out.parent / subset_dirname(config.split, config.subset, config.seed)
            check_one_subset(self.out.parent, target)
        else:
            target = Path(self.subset_dir)
        return write_subset(root, target, config.subset, seed=config.seed, split=config.split)

    def _meta(self, root: Path, splits: Sequence[str], rows: int) -> dict[str, Any]:
        config, kb = self.config, self.kb
        assert kb is not None  # start() loaded it
        meta: dict[str, Any] = {
            **self.pipe.describe(),
            "split": config.split,
            "pool": config.pool,
            "data_files": {s: sha256_file(split_file(root, s)) for s in splits},
            "corpus_version": corpus_version(corpus_meta(root)),
            "kb_version": kb.version,
            "n_dialogues": len(self.dialogues),
            "n_rows": rows,
            "trace_bench_version": TRACE_VERSION,
            "complete": False,
        }
        if config.subset is not None:
            meta["subset"] = {"n": config.subset, "seed": config.seed, "data_dir": str(root)}
        options = recorded_llm_options(self.params)
        if options:
            meta["llm_options"] = options
        if self.shard is not None:
            meta[SHARD_KEY] = self.shard
        return meta

    def _resume(self, expected: Sequence[tuple[str, int]]) -> tuple[int, RowLedger, dict[str, Any]]:
        """(rows to keep, the ledger over them, the usage of the earlier invocations) of what `out` holds;
        refused when another configuration started it."""
        out, mpath = self.out, meta_path(self.out)
        old: dict[str, Any] = {}
        if self.overwrite:
            for path in (out, mpath):
                path.unlink(missing_ok=True)
        if out.exists():
            if not mpath.exists():
                raise TraceDataError(
                    f"predictions file exists without its {META_SUFFIX}; delete it or rerun with --overwrite",
                    path=out,
                )
            old = read_json(mpath)
            mine, theirs = run_identity(self.meta), run_identity(old)
            diff = [k for k in IDENTITY_KEYS if theirs[k] != mine[k]]
            if diff:
                raise TraceDataError(
                    f"predictions file was started with other settings (differing: {', '.join(diff)}); "
                    "use another --out or rerun with --overwrite",
                    path=out,
                )
        done = read_done(out, expected)
        done, ledger = verify_rows(
            out, old, done
        )  # the rows the run metadata vouches for (edited rows: refused)
        earlier = (old.get("summary") or {}).get("usage_all_invocations", {}) if done else {}
        if done:
            log.info(
                "%s: resuming after %d of %d rows%s",
                out,
                done,
                len(expected),
                " (replaying the rows before them: this pipeline carries state across dialogues)"
                if self.replay
                else "",
            )
        return done, ledger, earlier

    def steps(self) -> Iterator[int]:
        """The chunks left, in order, appended whole and checkpointed in the metadata after each. A
        session-isolated pipeline skips what is done; one that is not replays it, dropping the lines."""
        counts = [len(system_turn_ids(d)) for d in self.dialogues]
        done = self.done
        tasks = list(
            dialogue_chunks(self.dialogues, counts, 0 if self.replay else done, self.chunk_dialogues)
        )
        drop = done if self.replay else 0
        self.written, self.usage = done, {}
        self.out.parent.mkdir(parents=True, exist_ok=True)
        assert self.kb is not None  # start() loaded it
        shown = [0]  # rows of the current chunk the bar already counts (a replay's dropped rows: none)

        def on_row() -> None:
            shown[0] += 1
            if self.bar is not None:
                self.bar.update(1)

        results = chunk_results(
            self.pipe,
            self.system,
            self.kb,
            self.params,
            self.batch_size,
            tasks,
            self.config.pool,
            self.num_proc,
            None if drop else on_row,
        )
        f = None  # opened with the first finished chunk: an interrupted first chunk leaves no empty file
        try:
            for lines, pid, summary in results:
                self.usage[pid] = summary
                if drop:
                    cut = min(drop, len(lines))
                    lines, drop = lines[cut:], drop - cut
                if lines and f is None:
                    f = open(self.out, "a", encoding="utf-8", newline="\n")
                if f is not None:
                    f.write("".join(lines))
                    f.flush()
                self.ledger.add(lines)
                self.meta.update(self.ledger.record())
                write_json(meta_path(self.out), self.meta)  # a checkpoint: these rows are now vouched for
                self.written += len(lines)
                if self.written < self.total:
                    log.info("%s: %d of %d rows written (a rerun resumes after them)", *self._where())
                yield len(lines) - shown[0]
                shown[0] = 0
        except (KeyboardInterrupt, Exception):
            log.warning("%s: stopped after %d of %d rows (a rerun resumes after them)", *self._where())
            raise
        finally:
            if f is not None:
                f.close()

    def _where(self) -> tuple[Path, int, int]:
        return self.out, self.written, self.total

    def finish(self) -> dict[str, Any]:
        """The metadata marked complete, with the run's summary (rows' counts, LLM usage, fallbacks)."""
        meta = self.meta
        if self.written != self.total:
            raise RuntimeError(f"wrote {self.written} rows, expected {self.total}")  # a bug, not bad input
        meta["complete"] = True
        if not self.out.exists():  # no chunk had rows (an empty shard): the run's file is empty
            self.out.touch()
        this_run: dict[str, Any] = {}
        for summary in self.usage.values():
            add_counts(this_run, summary)
        rows = row_counts(self.out)
        if rows or this_run or self.earlier:
            meta["summary"] = {
                "rows": rows,
                "usage": this_run,
                "usage_all_invocations": add_counts(json.loads(json.dumps(self.earlier)), this_run),
            }
            meta["summary"]["fallbacks"] = fallback_report(meta)  # the one shape every table reads
        write_json(meta_path(self.out), meta)
        log.info("%s: %d predictions in %s", self.system, self.written, self.out)
        return meta


def run_baseline(
    name: str,
    data_dir: str | os.PathLike,
    out: str | os.PathLike,
    *,
    split: str = "test",
    pool: str = "closed",
    batch_size: int = 64,
    num_proc: int = 1,
    params: dict[str, Any] | None = None,
    overwrite: bool = False,
    progress: bool = True,
    chunk_dialogues: int = DEFAULT_CHUNK_DIALOGUES,
    kb: KnowledgeBase | None = None,
    subset: int | None = None,
    subset_seed: int = SEED,
    subset_dir: str | os.PathLike | None = None,
    shard: Shard | None = None,
) -> dict[str, Any]:
    """Write predictions of baseline `name` for `split` under `pool` to `out`; returns the run metadata.

    `subset`: run on the seeded `subset`-dialogue subset, written by `write_subset` to `subset_dir` (default:
    `subset-<split>-n<N>-seed<S>` beside `out`, shared by every run written there); the metadata's
    `subset.data_dir` is the folder to score the run against. `shard`: only that shard's dialogues (their
    positions recorded in the metadata's `shard`, for `trace-bench merge`).
    """
    config = RunConfig(Path(data_dir), split=split, pool=pool, subset=subset, seed=subset_seed, shard=shard)
    run = TeacherForcedRun(
        name,
        config,
        out,
        batch_size=batch_size,
        num_proc=num_proc,
        params=params,
        overwrite=overwrite,
        progress=progress,
        chunk_dialogues=chunk_dialogues,
        kb=kb,
        subset_dir=subset_dir,
    )
    meta: dict[str, Any] = run.run()
    return meta


def _build(name: str, kb: KnowledgeBase, batch_size: int, params: dict[str, Any]) -> TracePipeline:
    """The pipeline; a parameter it rejects (unknown name, wrong type or range) is bad input, named as such."""
    from trace_llm.budget import BudgetTooSmall

    try:
        return pipeline(name, kb=kb, batch_size=batch_size, **params)
    except (TraceDataError, BudgetTooSmall):  # already says what to change
        raise
    except (TypeError, ValueError) as e:
        if not params:
            raise
        raise TraceDataError(f"baseline {name!r} rejects its parameters {params}: {e}") from None


def run_all(
    data_dir: str | os.PathLike,
    out_dir: str | os.PathLike,
    names: Sequence[str] | None = None,
    per_name_params: Mapping[str, dict[str, Any]] | None = None,
    **kwargs: Any,
) -> dict[str, dict[str, Any] | str]:
    """Every non-LLM baseline (or `names`) into out_dir/<name>.jsonl; name -> meta, or the error text.
    `per_name_params` replaces `params` for the baselines it names (the LLM baselines' model settings).

    A baseline that fails (for example, dense without its model package, or an LLM baseline whose server
    stays unreachable) is reported and the rest run.
    """
    names = list(NON_LLM_BASELINES) if names is None else list(names)
    out_dir = Path(out_dir)
    root = check_data_dir(data_dir, resolve_splits(kwargs.get("split", "test")))
    kb = KnowledgeBase.load(kb_dir(root))
    results: dict[str, dict[str, Any] | str] = {}
    for name in names:
        try:
            extra = {"params": per_name_params[name]} if per_name_params and name in per_name_params else {}
            results[name] = run_baseline(name, root, out_dir / f"{name}.jsonl", kb=kb, **{**kwargs, **extra})
        except (ImportError, KeyError, RuntimeError, LLMError) as e:
            log.error("baseline %s failed: %s", name, e)
            results[name] = f"{type(e).__name__}: {e}"
    return results
