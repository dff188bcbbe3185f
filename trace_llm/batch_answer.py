"""OpenAI batch input files answered through a live OpenAI-compatible server: the local way to finish the batch
path (trace_llm.batch) without a Batch API or vLLM's `run_batch`, e.g. with llama-cpp-python's server on the
packaged model (docs/reproducing.md, "Answering a batch file locally").

    trace-bench llm answer-batch OUT/batch/round-001/r001s001-MODEL.jsonl --llm openai:http://127.0.0.1:8000/v1#MODEL

Each line's `body` goes out as it is (its model, messages, decoding settings and `response_format`: export
in the dialect the server takes, the model's `structured` option), through the openai backend's own request
path (its concurrency per server, deadline, retries and answer-size cap). The output file
(`<input>.out.jsonl` beside it unless named) has one line per input line, in the input's order, in the OpenAI
batch output format: `{"id", "custom_id", "response": {"status_code": 200, "request_id", "body"}, "error":
null}`, or `"response": null` and `"error": {"code", "message"}` for a request the server did not answer
(refused, failed after its retries): `--import-batch` counts those as engine failures and asks them again.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trace_llm.batch import BatchFileError
from trace_llm.errors import LLMError
from trace_llm.http_clients import open_session, run_sync

if TYPE_CHECKING:
    import aiohttp

    from trace_llm.openai_backend import OpenAILLM


def output_path(source: Path) -> Path:
    """Where the answers of `source` go by default: `r001s001-m.jsonl` -> `r001s001-m.out.jsonl`."""
    return source.with_name(source.name.removesuffix(".jsonl") + ".out.jsonl")


def read_requests(source: Path) -> list[dict[str, Any]]:
    """The input file's lines; BatchFileError naming the file and line of one that is not a batch request."""
    try:
        text = source.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise BatchFileError(f"{source}: not a readable UTF-8 batch input file ({e})") from None
    records = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            record = None
        if (
            not isinstance(record, dict)
            or not isinstance(record.get("custom_id"), str)
            or not isinstance(record.get("body"), dict)
        ):
            raise BatchFileError(
                f"{source}, line {lineno}: expected a batch request (a JSON object with custom_id and body)"
            )
        records.append(record)
    return records


def answer_batch_file(llm: OpenAILLM, source: Path, out: Path | None = None) -> tuple[Path, int, int]:
    """Answer every request of `source` through `llm`'s servers into `out` (module docstring), written whole
    or not at all. Returns (the output file, requests answered, requests failed)."""
    records = read_requests(source)
    lines = run_sync(_answer_all(llm, records))
    out = output_path(source) if out is None else out
    partial = out.with_name(f".{out.name}.{os.getpid()}.partial")
    partial.write_text(
        "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8"
    )
    os.replace(partial, out)
    failed = sum(line["error"] is not None for line in lines)
    return out, len(lines) - failed, failed


async def _answer_all(llm: OpenAILLM, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    connect = llm.timeout.connect or llm.deadline
    async with open_session(
        llm.concurrency * len(llm.urls), connect, llm.deadline, llm._headers()
    ) as session:
        return list(await asyncio.gather(*(_answer_one(llm, session, n, r) for n, r in enumerate(records))))


async def _answer_one(
    llm: OpenAILLM, session: aiohttp.ClientSession, n: int, record: dict[str, Any]
) -> dict[str, Any]:
    line: dict[str, Any] = {"id": f"batch_req_{n:06d}", "custom_id": record["custom_id"]}
    body = record["body"]
    try:
        answer = await llm.answer(session, json.dumps(body).encode(), "response_format" in body)
        data = answer.json()
    except (LLMError, ValueError, RecursionError) as e:
        message = str(e) if isinstance(e, LLMError) else f"the answer is not JSON ({type(e).__name__})"
        return {**line, "response": None, "error": {"code": "request_failed", "message": message[:1000]}}
    return {
        **line,
        "response": {"status_code": 200, "request_id": f"req_{n:06d}", "body": data},
        "error": None,
    }
