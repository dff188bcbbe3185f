"""A reproduction in shards: `reproduce CONFIG --shard I/N` runs shard I of every job that can run in shards, and
`trace-bench merge OUT/shards/*-of-N --out OUT` joins them in OUT, where `reproduce CONFIG` then finishes.

    OUT/shards/I-of-N/          shard I's jobs, in OUT's layout (runs/, interactive/, core/), and shard.json

A shard runs its share of the dialogues of the teacher-forced and interactive runs, and of CoRE once the closed
runs it scores are merged in OUT (CoRE reads the whole run): so a sharded reproduction is two rounds of N shards
and a merge where the config asks for CoRE, one otherwise. The LLM judge, NLI and the leaderboard read the merged
runs: the last, unsharded `reproduce CONFIG` finds every job complete and does only them, so the leaderboard is
the one an unsharded run writes. shard.json records the config's SHA-256, the shard and the jobs it ran; a merge
refuses shards of other configs and merges each job once every shard has finished it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from trace_bench.shell import trace_bench_command
from trace_dataset.io import read_json, write_json
from trace_harness.engine.stage import run_stages
from trace_harness.protocols.interactive.output import METRICS_FILE
from trace_harness.reproduce import execute
from trace_harness.reproduce.config import ReproduceConfig
from trace_harness.reproduce.jobs import Context, Job, build_jobs, run_complete
from trace_harness.shards.check import MergeError

log = logging.getLogger(__name__)

SHARD_FILE = "shard.json"
SHARDED_KINDS: tuple[str, ...] = ("run", "interactive", "core")


def is_reproduce(path: Path) -> bool:
    return (Path(path) / SHARD_FILE).is_file()


def shard_jobs(ctx: Context) -> tuple[list[Job], list[Job]]:
    """(the jobs this shard runs now, the CoRE jobs that wait for their closed run to be merged in OUT)."""
    jobs = [j for j in build_jobs(ctx.config) if j.kind in SHARDED_KINDS]
    waiting = [j for j in jobs if j.kind == "core" and not run_complete(ctx.merged_run(j.system))]
    return [j for j in jobs if j not in waiting], waiting


def run_shard(ctx: Context) -> dict[str, Any]:
    """Run this shard's jobs (resumable, as every job is); returns shard.json's content."""
    assert ctx.shard is not None  # the CLI builds a shard's context
    config, shard = ctx.config, ctx.shard
    jobs, waiting = shard_jobs(ctx)
    record: dict[str, Any] = {
        "config": str(config.path),
        "config_sha256": config.sha256,
        "index": shard.index,
        "count": shard.count,
        "jobs": [{"kind": j.kind, "out": str(j.out.relative_to(config.out))} for j in jobs],
        "waiting": [str(j.out.relative_to(config.out)) for j in waiting],
    }
    config.out.mkdir(parents=True, exist_ok=True)
    write_json(config.out / SHARD_FILE, {**record, "complete": False})
    run_stages(execute.job_stages(ctx, jobs, ctx.llm), log)
    record["complete"] = True
    write_json(config.out / SHARD_FILE, record)
    return record


def _done(kind: str, path: Path) -> bool:
    from trace_metrics.core.runner import SUMMARY_FILE

    if kind == "run":
        return run_complete(path)
    return (path / (METRICS_FILE if kind == "interactive" else SUMMARY_FILE)).is_file()


def _read_shards(paths: Sequence[Path]) -> list[dict[str, Any]]:
    records = [read_json(p / SHARD_FILE) for p in paths]
    first = records[0]
    for path, record in zip(paths, records, strict=True):
        if record.get("config_sha256") != first.get("config_sha256"):
            raise MergeError(
                f"shard {record.get('index')}/{record.get('count')} ran another config than {paths[0]} "
                "(its SHA-256 differs)",
                path=path,
            )
    indices = sorted(r["index"] for r in records)
    if indices != list(range(first["count"])) or any(r["count"] != first["count"] for r in records):
        wanted = first["count"]
        raise MergeError(
            f"shards {', '.join(f'{i}/{wanted}' for i in indices)} given: a merge needs each of the {wanted} "
            "shards once",
            path=paths[0],
        )
    return records


def merge_shards(config: ReproduceConfig, count: int) -> dict[str, Any]:
    """`reproduce CONFIG --merge-shards N`: the N shards of OUT/shards/ merged into OUT (`merge_reproduce`);
    "finished": whether every job of the shards is merged (nothing waits), so that the run can finish."""
    folder = config.out / "shards"
    paths = [folder / f"{i}-of-{count}" for i in range(count)]
    missing = [str(p) for p in paths if not is_reproduce(p)]
    if missing:
        raise MergeError(
            f"no shard in {', '.join(missing)}: run reproduce CONFIG --shard I/{count} there first"
        )
    line, finished = merge_reproduce(paths, config.out, finish=False)
    return {"line": line, "finished": finished}


def merge_reproduce(
    shards: Sequence[str | os.PathLike], out: str | os.PathLike, *, finish: bool = True
) -> tuple[str, bool]:
    """Merge into OUT every job that all shards finished and OUT does not hold yet; (a line saying what was
    merged, what was already, what is still running or waiting, and what comes next; whether all is merged)."""
    from trace_harness.shards.core import merge_core
    from trace_harness.shards.interactive import merge_interactive
    from trace_harness.shards.predictions import merge_predictions

    merges = {"run": merge_predictions, "interactive": merge_interactive, "core": merge_core}
    paths, out = [Path(p) for p in shards], Path(out)
    records = _read_shards(paths)
    merged, already, pending = [], [], []
    for job in records[0]["jobs"]:
        kind, rel = job["kind"], job["out"]
        if _done(kind, out / rel):
            already.append(rel)
        elif all(_done(kind, p / rel) for p in paths):
            merges[kind]([p / rel for p in paths], out / rel)
            merged.append(rel)
        else:
            pending.append(rel)
    waiting = sorted(set().union(*(r.get("waiting", []) for r in records)))
    line = f"{len(merged)} jobs merged in {out}, {len(already)} merged before"
    if pending:
        line += f"; not finished in every shard yet: {', '.join(pending)}"
    if waiting:
        line += f"; CoRE waits for the merged runs: run the shards again ({', '.join(waiting)})"
    elif not pending and finish:
        line += f"; finish with: {trace_bench_command('reproduce', records[0]['config'])}"
    return line, not pending and not waiting
