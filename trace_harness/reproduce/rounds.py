"""The batch path: rounds of OpenAI batch files, answered by an engine elsewhere, imported into the cache.

    trace-bench reproduce CONFIG --export-batch              # OUT/batch/round-001/*.jsonl (+ .index.json)
    python -m vllm.entrypoints.openai.run_batch -i IN.jsonl -o IN.out.jsonl --model MODEL    # anywhere
    trace-bench reproduce CONFIG --import-batch OUT/batch/round-001/*.out.jsonl
    trace-bench reproduce CONFIG --export-batch              # round 2 (DST's responses, CoRE of new runs, ...)
    ...                                                      # until an export finds nothing left: it finishes

`export_round` first advances the reproduction as far as the cache allows: every job whose requests are all
cached runs now, from the cache (cache-only LLM objects that never send), writing its outputs, so that the jobs
that read them (CoRE, the judge) can ask their own requests in the same round. Then it writes every request the
remaining jobs need next, one model per file, at most `batch.max_requests` (50,000) requests and
`batch.max_bytes` (200 MB) per file, the limits of the OpenAI Batch API. When nothing is left to ask, it
finishes: leaderboard, Space data, manifest, without sending anything.

`import_outputs` checks each output file against the index its requests were exported with: ids it does not
know, ids of an exported file it leaves out, or answers from another model are refused (naming them) and
nothing of that file is imported (a file that is gzip or not UTF-8 too, naming the line). Lines the engine failed,
answers the live parser refuses and answers over the live size cap are reported (file, line, custom_id) and
asked again by the next round.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from trace_dataset.io import TraceDataError, read_json, sha256_file, write_json, write_text
from trace_harness.engine.stage import run_stages
from trace_harness.reproduce import execute
from trace_harness.reproduce.collect import Collector
from trace_harness.reproduce.jobs import Context, build_jobs

log = logging.getLogger(__name__)

BATCH_DIR = "batch"
IMPORTS_FILE = "imports.json"
ROUND_FILE = "round.json"


def batch_dir(ctx: Context) -> Path:
    return ctx.config.out / BATCH_DIR


def _rounds(ctx: Context) -> list[Path]:
    folder = batch_dir(ctx)
    return sorted(p for p in folder.glob("round-*") if p.is_dir()) if folder.is_dir() else []


def run_batch_command(input_path: Path, output_path: Path, model: str) -> str:
    """The vLLM command that answers one batch input file (the OpenAI Batch API reads the same file)."""
    import shlex

    return (
        f"python -m vllm.entrypoints.openai.run_batch -i {shlex.quote(str(input_path))} "
        f"-o {shlex.quote(str(output_path))} --model {shlex.quote(model)}"
    )


def output_name(input_path: Path) -> Path:
    return input_path.with_name(input_path.name.removesuffix(".jsonl") + ".out.jsonl")


def export_round(ctx: Context, source: str) -> dict[str, Any]:
    """Advance from the cache, then write the next round's batch files; finish when nothing is left."""
    from trace_harness.reproduce.run import finish_from_cache
    from trace_llm.batch import shard_requests

    collector = Collector(ctx, "export")
    try:
        waiting, pending_jobs = [], []
        for job in build_jobs(ctx.config):
            if job.kind == "nli":
                continue
            tally = collector.collect(job)
            if tally.status == "waits":
                waiting.append(job.label)
            elif tally.keys:
                pending_jobs.append(job.label)
            elif tally.status != "complete" and job.kind != "judge":  # the judge scores in the leaderboard
                # every answer it needs is cached: it runs now, as a stage, sending nothing
                run_stages([execute.job_stage(ctx, job, collector.llm)], log)
        pending = list(collector.ledger.order)
        if not pending:
            if waiting:  # pragma: no cover - a job waits only on a run that has requests pending
                raise TraceDataError(f"jobs wait for runs that did not complete: {', '.join(waiting)}")
            board = finish_from_cache(ctx, collector.llm, source, batch=batch_record(ctx))
            return {"finished": True, "board": board}
        round_no = len(_rounds(ctx)) + 1
        folder = batch_dir(ctx) / f"round-{round_no:03d}"
        shards = shard_requests(
            pending,
            round_no,
            max_requests=ctx.config.batch_max_requests,
            max_bytes=ctx.config.batch_max_bytes,
        )
        files = []
        for shard in shards:
            path = folder / shard.file_name
            write_text(path, "".join(shard.lines))
            write_json(folder / shard.index_name, shard.index)
            files.append(
                {
                    "input": str(path),
                    "output": str(output_name(path)),
                    "model": shard.model,
                    "requests": len(shard.lines),
                    "bytes": path.stat().st_size,
                }
            )
        parts: dict[str, int] = {}
        for r in pending:
            part = r.label.split(":", 1)[0]
            parts[part] = parts.get(part, 0) + 1
        record = {
            "round": round_no,
            "requests": len(pending),
            "parts": parts,
            "files": files,
            "jobs_with_requests": pending_jobs,
            "jobs_waiting": waiting,
        }
        write_json(folder / ROUND_FILE, record)
        return {"finished": False, **record}
    finally:
        collector.close()


def _indexes(ctx: Context) -> dict[str, dict[str, Any]]:
    out = {}
    for path in sorted(batch_dir(ctx).glob("round-*/*.index.json")) if batch_dir(ctx).is_dir() else []:
        index = read_json(path)
        out[index["shard"]] = index
    return out


def _text_lines(f: IO[bytes], path: Path) -> Iterator[str]:
    """The lines of batch output file `path` as text; TraceDataError naming the line that is not UTF-8 (and
    saying so when the file is gzip: decompress it first)."""
    for lineno, raw in enumerate(f, start=1):
        if lineno == 1 and raw.startswith(b"\x1f\x8b"):
            raise TraceDataError(
                "gzip-compressed; expected the batch output's JSON lines: decompress it first (gunzip)",
                path=path,
            )
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise TraceDataError(
                f"not UTF-8 text (byte {e.start}); expected the batch output's JSON lines",
                path=path,
                line=lineno,
            ) from None


def import_outputs(ctx: Context, files: list[Path]) -> list[dict[str, Any]]:
    """Import batch output files into the response cache (checked; see the module docstring)."""
    from trace_llm.batch import PARSER_URL, import_batch_output, openai_body_parser
    from trace_llm.cache import ResponseCache, default_cache_path
    from trace_llm.openai_backend import OpenAILLM

    indexes = _indexes(ctx)
    if not indexes:
        raise TraceDataError(
            "no exported batch files to import answers for; run --export-batch first", path=batch_dir(ctx)
        )
    missing = [str(f) for f in files if not Path(f).is_file()]
    if missing:
        raise TraceDataError(f"batch output file(s) not found: {', '.join(missing)}")
    reports = []
    with ResponseCache(ctx.config.cache or default_cache_path()) as cache:
        for path in files:
            path = Path(path)
            reader = OpenAILLM(PARSER_URL, "batch", cache_path=False)
            with open(path, "rb") as f:
                report = import_batch_output(
                    _text_lines(f, path),
                    str(path),
                    indexes,
                    cache,
                    openai_body_parser(reader),
                    max_answer_bytes=reader.max_response_bytes,
                )
            entry = {
                "file": str(path),
                "sha256": sha256_file(path),
                "shards": report.shards,
                "imported": report.imported,
                "failed": len(report.failed),
                "models": report.models,
                "system_fingerprints": report.system_fingerprints,
                "prompt_tokens": report.prompt_tokens,
                "completion_tokens": report.completion_tokens,
                "per_label": report.per_label,
                "failed_examples": dict(list(report.failed.items())[:5]),
            }
            _append_import(ctx, entry)
            reports.append(entry)
    return reports


def _append_import(ctx: Context, entry: dict[str, Any]) -> None:
    path = batch_dir(ctx) / IMPORTS_FILE
    imports = read_json(path) if path.exists() else []
    imports.append(entry)
    write_json(path, imports)


def batch_record(ctx: Context) -> dict[str, Any] | None:
    """The rounds exported and the files imported, with requests and tokens per part (for the manifest)."""
    rounds = [read_json(r / ROUND_FILE) for r in _rounds(ctx) if (r / ROUND_FILE).exists()]
    path = batch_dir(ctx) / IMPORTS_FILE
    imports = read_json(path) if path.exists() else []
    if not rounds and not imports:
        return None
    parts: dict[str, dict[str, int]] = {}
    for entry in imports:
        for label, tally in entry.get("per_label", {}).items():
            part = parts.setdefault(
                label.split(":", 1)[0], {"requests": 0, "prompt_tokens": 0, "completion_tokens": 0}
            )
            for k in part:
                part[k] += tally.get(k, 0)
    engines = sorted({m for e in imports for m in e.get("models", [])})
    return {"rounds": rounds, "imports": imports, "parts": parts, "answered_by_models": engines}


def format_export(result: dict[str, Any], source: str) -> str:
    from trace_bench.shell import trace_bench_command

    lines = [
        f"round {result['round']}: {result['requests']:,} requests to answer "
        f"({', '.join(f'{p} {n:,}' for p, n in result['parts'].items())})"
    ]
    for f in result["files"]:
        lines.append(
            f"  {f['input']}  ({f['requests']:,} requests, {f['bytes']:,} bytes, model {f['model']})"
        )
    lines.append(
        "Answer each file with an engine, for example vLLM (or submit it to an OpenAI-compatible Batch API):"
    )
    for f in result["files"]:
        lines.append("  " + run_batch_command(Path(f["input"]), Path(f["output"]), f["model"]))
    outputs = [Path(f["output"]) for f in result["files"]]
    lines.append("then import the answers:")
    lines.append("  " + trace_bench_command("reproduce", source, "--import-batch", *outputs))
    if result["jobs_waiting"]:
        lines.append(
            f"({len(result['jobs_waiting'])} job(s) wait for runs of this round: they come in a later round)"
        )
    return "\n".join(lines)


def format_imports(reports: list[dict[str, Any]], source: str) -> str:
    from trace_bench.shell import trace_bench_command

    lines = []
    for r in reports:
        failed = f"; {r['failed']} failed by the engine (asked again next round)" if r["failed"] else ""
        lines.append(
            f"{r['file']}: {r['imported']:,} answers imported into the response cache "
            f"({r['prompt_tokens']:,} prompt and {r['completion_tokens']:,} output tokens; model "
            f"{', '.join(r['models']) or '-'}){failed}"
        )
    lines.append(
        "next: "
        + trace_bench_command("reproduce", source, "--export-batch")
        + "  (the next round, or the finish when nothing is left)"
    )
    return "\n".join(lines)
