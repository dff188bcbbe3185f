"""`reproduce CONFIG --engine ray`: the batch path's rounds, each answered by Ray Data's LLM processors.

Each round is the batch path's (rounds.py): `export_round` advances the run from the response cache and writes the
round's batch input files; here every file goes through `ray.data.llm`'s HTTP request processor against the
OpenAI-compatible servers of its model (the config's `openai:URL1,URL2#MODEL`: the requests split over the
servers, one processor each, Ray's concurrency, batching and retries), the answers are written as the OpenAI batch
output file `run_batch` would write, and `import_outputs` takes them into the cache through the same checks as
`--import-batch`. Rounds go on until an export finds nothing left to ask and finishes the run from the cache, so a
Ray run, a batch-file run and a live run of one config end with the same outputs.

Which processor answers (`--ray-processor`, PROCESSORS): `http` (the default) sends each request as it is to the
model's servers; `vllm` runs the model itself in Ray Data's vLLM engine processor (`vLLMEngineProcessorConfig`,
`--ray-concurrency` engine replicas, one GPU each): the model is the batch file's (the config's MODEL, a Hugging
Face id or a local path, as `run_batch --model` takes it), each request's decoding settings become its vLLM
sampling parameters and its `response_format` JSON Schema vLLM's structured outputs (`vllm_row`), and each
answer is written as the chat completion `vllm serve` would return (`vllm_answer`). It needs vllm (`ray[llm]`) and
GPUs; without vllm the switch says how to install it.

Ray is optional (`pip install 'trace-bench[ray]'`); `ray.init()` joins the cluster of RAY_ADDRESS where it is set,
else starts a local one on this machine's CPUs.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trace_bench.errors import UsageError
from trace_dataset.io import write_text

if TYPE_CHECKING:  # the CLI reads PROCESSORS when it builds its parser: no heavy imports here
    from trace_harness.reproduce.jobs import Context

log = logging.getLogger(__name__)

DEFAULT_BATCH_SIZE = 64  # requests per Ray Data block sent by one processor task
MAX_ROUNDS = 1000  # a config needs a handful (DST, retries, CoRE, the judge): more means answers never land
PROCESSORS: tuple[str, ...] = (
    "http",
    "vllm",
)  # --ray-processor: who answers a round's requests (module docstring)


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


def require_vllm() -> None:
    """UsageError saying how to install vLLM for Ray Data's vLLM engine processor where it is missing."""
    try:
        import vllm  # type: ignore[import-not-found]  # noqa: F401
    except ImportError:
        from trace_bench.shell import pip_install_command

        raise UsageError(
            "--ray-processor vllm runs the model in Ray Data's vLLM engine processor, which needs vllm (and GPUs); "
            "vllm is not installed: " + pip_install_command("ray[data,llm]")
        ) from None


def endpoints(ctx: Context, model: str) -> tuple[list[str], dict[str, str]]:
    """The chat-completions URLs and request headers of the OpenAI-compatible model named `model`."""
    from trace_harness.reproduce.config import role_model
    from trace_llm.spec import parse_spec

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

    lines = _read_lines(input_path)
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
        parts.append(processor(_dataset(ray, rows)))
    joined = parts[0].union(*parts[1:]) if len(parts) > 1 else parts[0] if parts else None
    answered = joined.take_all() if joined is not None else []
    return _write_outputs(output_path, lines, {row["custom_id"]: row["body"] for row in answered})


def answer_file_vllm(ray: Any, input_path: Path, output_path: Path, model: str, *, concurrency: int) -> int:
    """Answer one batch input file with Ray Data's vLLM engine processor running `model` (`concurrency` engine
    replicas); writes the OpenAI batch output file and returns how many lines it holds. Needs vllm and GPUs."""
    import functools

    from ray.data.llm import build_processor, vLLMEngineProcessorConfig

    lines = _read_lines(input_path)
    config = vLLMEngineProcessorConfig(**vllm_processor_config(model, concurrency=concurrency))
    processor = build_processor(
        config, preprocess=_vllm_request, postprocess=functools.partial(_vllm_keep, model=model)
    )
    rows = [{"custom_id": r["custom_id"], "request": json.dumps(vllm_row(r["body"]))} for r in lines]
    answered = processor(_dataset(ray, rows)).take_all()
    return _write_outputs(output_path, lines, {row["custom_id"]: row["body"] for row in answered})


def _read_lines(input_path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in input_path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _dataset(ray: Any, rows: list[dict[str, Any]]) -> Any:
    blocks = -(-len(rows) // DEFAULT_BATCH_SIZE)  # a block per batch: Ray's cost is per block, not per row
    return ray.data.from_items(rows, override_num_blocks=max(1, blocks))


def _write_outputs(output_path: Path, lines: list[dict[str, Any]], by_id: dict[str, Any]) -> int:
    out = [_output_line(r["custom_id"], by_id.get(r["custom_id"])) for r in lines]
    write_text(output_path, "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in out))
    return len(out)


def vllm_processor_config(
    model: str, *, concurrency: int, batch_size: int = DEFAULT_BATCH_SIZE
) -> dict[str, Any]:
    """`vLLMEngineProcessorConfig`'s arguments for a batch file's model: `concurrency` engine replicas, the model's
    own chat template and tokenizer applied (as `vllm serve` does for a chat request), the text detokenized."""
    return {
        "model_source": model,
        "concurrency": concurrency,
        "batch_size": batch_size,
        "engine_kwargs": {},
        "chat_template_stage": True,
        "tokenize_stage": True,
        "detokenize_stage": True,
    }


# the request body's keys (trace_llm's openai backend `_body`) and the vLLM sampling parameter each one becomes
SAMPLING_KEYS: dict[str, str] = {
    "temperature": "temperature",
    "top_p": "top_p",
    "max_tokens": "max_tokens",
    "seed": "seed",
}
BODY_KEYS = frozenset({"model", "messages", "response_format", *SAMPLING_KEYS})


def vllm_row(body: dict[str, Any]) -> dict[str, Any]:
    """A chat-completions request body as the vLLM engine processor's row: the messages, and the decoding settings
    and `response_format` as vLLM sampling parameters (a JSON Schema as `structured_outputs.json`). A key it does
    not map is refused (an answer to a request other than the one sent would land in the cache)."""
    unknown = sorted(set(body) - BODY_KEYS)
    if unknown:
        raise UsageError(
            f"--ray-processor vllm: request key(s) {', '.join(unknown)} have no vLLM sampling parameter"
        )
    params = {v: body[k] for k, v in SAMPLING_KEYS.items() if body.get(k) is not None}
    fmt = body.get("response_format")
    if fmt is not None:
        params["structured_outputs"] = _structured_outputs(fmt)
    return {"messages": body["messages"], "sampling_params": params}


def _structured_outputs(fmt: dict[str, Any]) -> dict[str, Any]:
    """vLLM's structured outputs for a `response_format` (both dialects trace_llm sends: json_schema's schema, the
    json_object dialect's `schema`; a bare json_object as vLLM's json_object)."""
    if fmt.get("type") == "json_schema" and isinstance(fmt.get("json_schema"), dict):
        return {"json": fmt["json_schema"]["schema"]}
    if fmt.get("type") == "json_object":
        return {"json": fmt["schema"]} if isinstance(fmt.get("schema"), dict) else {"json_object": True}
    raise UsageError(
        f"--ray-processor vllm: no vLLM structured output for response_format {json.dumps(fmt)[:200]}"
    )


def _vllm_request(row: dict[str, Any]) -> dict[str, Any]:
    request = json.loads(row["request"])
    return {
        "custom_id": row["custom_id"],
        "max_tokens": request["sampling_params"].get("max_tokens"),
        **request,
    }


def _vllm_keep(row: dict[str, Any], *, model: str) -> dict[str, Any]:
    return {"custom_id": row["custom_id"], "body": vllm_answer(row, model)}


def vllm_answer(row: dict[str, Any], model: str) -> dict[str, Any]:
    """The chat completion `vllm serve` returns, from the vLLM engine processor's output row (its text and token
    counts; the processor gives no finish reason: `length` where the answer used all of max_tokens)."""
    prompt, completion = int(row.get("num_input_tokens") or 0), int(row.get("num_generated_tokens") or 0)
    limit = row.get("max_tokens")
    finish = "length" if limit is not None and completion >= int(limit) else "stop"
    message = {"role": "assistant", "content": row.get("generated_text") or ""}
    return {
        "id": f"ray-vllm-{row['custom_id']}",
        "object": "chat.completion",
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


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
    ctx: Context,
    source: str,
    *,
    concurrency: int = 1,
    processor: str = "http",
    init: Callable[[Any], None] | None = None,
) -> dict[str, Any]:
    """Every round of the config through Ray until the run finishes from the cache; the leaderboard result."""
    from trace_harness.reproduce.rounds import export_round, import_outputs

    if processor not in PROCESSORS:
        raise UsageError(f"--ray-processor {processor!r}: expected one of {', '.join(PROCESSORS)}")
    ray = require_ray()
    if processor == "vllm":
        require_vllm()
    if not ray.is_initialized():
        (init or (lambda r: r.init()))(ray)
    for _ in range(MAX_ROUNDS):
        result = export_round(ctx, source)
        if result["finished"]:
            return dict(result["board"])
        log.info(
            "round %d: %d requests through Ray Data (%s)", result["round"], result["requests"], processor
        )
        outputs = []
        for f in result["files"]:
            inp, out = Path(f["input"]), Path(f["output"])
            if processor == "vllm":
                answer_file_vllm(ray, inp, out, f["model"], concurrency=concurrency)
            else:
                urls, headers = endpoints(ctx, f["model"])
                answer_file(ray, inp, out, urls, headers, concurrency=concurrency)
            outputs.append(out)
        import_outputs(ctx, outputs)
    raise UsageError(f"--engine ray: the run did not finish in {MAX_ROUNDS} rounds (answers keep failing?)")
