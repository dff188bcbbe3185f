"""`reproduce CONFIG --engine ray`: the batch path's rounds, each answered by Ray Data's LLM processors.

Each round is the batch path's (rounds.py): `export_round` advances the run from the response cache and writes the
round's batch input files; here every file goes through `ray.data.llm`'s HTTP request processor against the
OpenAI-compatible servers of its model (the config's `openai:URL1,URL2#MODEL`: the requests split over the
servers, one processor each, Ray's concurrency, batching and retries), the answers are written as the OpenAI batch
output file `run_batch` would write, and `import_outputs` takes them into the cache through the same checks as
`--import-batch`. Rounds go on until an export finds nothing left to ask and finishes the run from the cache, so a
Ray run, a batch-file run and a live run of one config end with the same outputs.

Ray is optional (`pip install 'trace-bench[ray]'`); `ray.init()` joins the cluster of RAY_ADDRESS where it is set,
else starts a local one on this machine's CPUs. On a GPU cluster, Ray Data's vLLM engine processor
(`vLLMEngineProcessorConfig`) runs the model itself; that path needs `ray[llm]` and GPUs and is not taken here.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from trace_bench.errors import UsageError
from trace_dataset.io import write_text
from trace_harness.reproduce.config import role_model
from trace_harness.reproduce.jobs import Context
from trace_llm.spec import parse_spec

log = logging.getLogger(__name__)

DEFAULT_BATCH_SIZE = 64  # requests per Ray Data block sent by one processor task
MAX_ROUNDS = 1000  # a config needs a handful (DST, retries, CoRE, the judge): more means answers never land


def require_ray() -> Any:
    """The `ray` module with Ray Data's LLM processors; UsageError saying how to install them where missing."""
    try:
        import ray
        import ray.data.llm  # noqa: F401
    except ImportError:
        from trace_bench.shell import pip_install_command

        raise UsageError(
            "--engine ray needs Ray Data's LLM processors (ray.data.llm), which are not installed: "
            + pip_install_command("trace-bench[ray]")
        ) from None
    return ray


def endpoints(ctx: Context, model: str) -> tuple[list[str], dict[str, str]]:
    """The chat-completions URLs and request headers of the OpenAI-compatible model named `model`."""
    for role in ctx.config.models:
        spec = parse_spec(role_model(ctx.config, role).llm)
        if spec.backend == "openai" and spec.model == model:
            llm = ctx.llm(role)
            headers = dict(llm._headers())  # type: ignore[attr-defined]  # the key the live backend sends
            return [f"{u}/chat/completions" for u in spec.target.split(",")], headers
    raise UsageError(f"--engine ray: no openai:URL#MODEL in the config's models serves {model!r}")


def answer_file(
    ray: Any,
    input_path: Path,
    output_path: Path,
    urls: list[str],
    headers: dict[str, str],
    *,
    concurrency: int,
) -> int:
    """Answer one batch input file through Ray Data's HTTP request processor; writes the OpenAI batch output file
    (lines in the input's order) and returns how many lines it holds."""
    from ray.data.llm import HttpRequestProcessorConfig, build_processor

    lines = [json.loads(line) for line in input_path.read_text(encoding="utf-8").splitlines() if line.strip()]
    parts = []
    for k, url in enumerate(urls):
        rows = [{"custom_id": r["custom_id"], "payload": r["body"]} for r in lines[k :: len(urls)]]
        if not rows:
            continue
        config = HttpRequestProcessorConfig(
            url=url,
            headers=headers or None,
            batch_size=DEFAULT_BATCH_SIZE,
            concurrency=concurrency,
            max_retries=3,
        )
        processor = build_processor(config, postprocess=_keep_answer)
        parts.append(processor(ray.data.from_items(rows)))
    joined = parts[0].union(*parts[1:]) if len(parts) > 1 else parts[0] if parts else None
    answered = joined.take_all() if joined is not None else []
    by_id = {row["custom_id"]: row["body"] for row in answered}
    out = [_output_line(r["custom_id"], by_id.get(r["custom_id"])) for r in lines]
    write_text(output_path, "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in out))
    return len(out)


def _keep_answer(row: dict[str, Any]) -> dict[str, Any]:
    return {"custom_id": row["custom_id"], "body": row["http_response"]}


def _output_line(custom_id: str, body: Any) -> dict[str, Any]:
    """One line of the OpenAI batch output format; an answer without choices is the engine's failure."""
    if isinstance(body, dict) and body.get("choices"):
        return {
            "id": f"ray-{custom_id}",
            "custom_id": custom_id,
            "response": {"status_code": 200, "body": body},
            "error": None,
        }
    error = {"code": "no_answer", "message": json.dumps(body)[:500] if body is not None else "no answer"}
    return {"id": f"ray-{custom_id}", "custom_id": custom_id, "response": None, "error": error}


def run_ray(
    ctx: Context, source: str, *, concurrency: int = 1, init: Callable[[Any], None] | None = None
) -> dict[str, Any]:
    """Every round of the config through Ray until the run finishes from the cache; the leaderboard result."""
    from trace_harness.reproduce.rounds import export_round, import_outputs

    ray = require_ray()
    if not ray.is_initialized():
        (init or (lambda r: r.init()))(ray)
    for _ in range(MAX_ROUNDS):
        result = export_round(ctx, source)
        if result["finished"]:
            return dict(result["board"])
        log.info("round %d: %d requests through Ray Data", result["round"], result["requests"])
        outputs = []
        for f in result["files"]:
            urls, headers = endpoints(ctx, f["model"])
            answer_file(ray, Path(f["input"]), Path(f["output"]), urls, headers, concurrency=concurrency)
            outputs.append(Path(f["output"]))
        import_outputs(ctx, outputs)
    raise UsageError(f"--engine ray: the run did not finish in {MAX_ROUNDS} rounds (answers keep failing?)")
