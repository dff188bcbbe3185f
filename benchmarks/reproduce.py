"""Figures for `trace-bench reproduce` (docs/reproducing.md).

1. dryrun: requests, prompt and output tokens per part of the paper's protocol on a Trace corpus (the built-in
   10,000-dialogue corpus by default), from a fresh, empty response cache, as `--dry-run` counts them; and how
   long the dry run itself takes.
2. throughput: the client's requests/s through the openai backend (the response cache included) against a
   local server that answers at once, at concurrency 64 and 256: what one client process can drive.
3. shards: what `--shard I/N` costs: one teacher-forced run against N shards run one after another plus the
   merge, on the same machine (the built-in corpus by default), and that the merged file is the one run's.
4. ray: what `--engine ray` adds per request: the same requests sent by the plain client (concurrency C) and
   through Ray Data's HTTP request processor (C processor tasks, `ray_engine.answer_file`) to one local server
   that answers each request after a fixed delay (a model's latency); two request counts per path, so that the
   time per request (the slope) is apart from the fixed cost of a round (the processor's start), with repeats.

    .venv/bin/python benchmarks/reproduce.py dryrun --data runs/demo/hydrated --tokenizer none \
        --parts table5,table6,interactive
    .venv/bin/python benchmarks/reproduce.py dryrun --data runs/demo/hydrated --tokenizer none \
        --parts core,judge --closed-split test
    .venv/bin/python benchmarks/reproduce.py dryrun --data runs/demo/hydrated --parts table5 --closed-split test
    .venv/bin/python benchmarks/reproduce.py throughput --requests 4000 --concurrency 64,256
    .venv/bin/python benchmarks/reproduce.py shards --dialogues 400 --counts 1,2,4,8
    .venv/bin/python benchmarks/reproduce.py ray --requests 100,400 --concurrency 1,4 --delay-ms 20 --repeats 3

The dry run uses the paper config (trace_harness/reproduce/configs/paper.yaml, its prices included) with its
models at an address where nothing listens (nothing is sent either way) and, with --tokenizer (default: the
packaged SmolLM2's, a 49k-token BPE vocabulary; other models' tokenizers differ by some 10-20%), counted tokens;
`--tokenizer none` counts 4 characters per token (minutes faster at paper scale: tokenizing every prompt is
most of a dry run's time), and the third command above gives the ratio of the two on the test split.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import socket
import sys
import tempfile
import time
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path[:] = [
    p for p in sys.path if Path(p or ".").resolve() != _HERE
]  # baselines.py would shadow `baselines`


def _load_common():
    """benchmarks/_common.py, loaded by path (this folder stays off sys.path)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_common", _HERE / "_common.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_common = _load_common()
machine, timed = _common.machine, _common.timed

DEAD = "openai:http://127.0.0.1:9/v1#paper-model"


# ---------------------------------------------------------------------------------------------------------
# 1. the dry run at scale
# ---------------------------------------------------------------------------------------------------------
def dryrun(args: argparse.Namespace) -> dict:
    import yaml

    from trace_harness.reproduce.config import example_path, parse_config
    from trace_harness.reproduce.dryrun import format_plan, plan
    from trace_harness.reproduce.jobs import Context

    raw = yaml.safe_load(example_path("paper").read_text(encoding="utf-8"))
    tokenizer = args.tokenizer
    if tokenizer == "smollm2":
        from trace_llm.smollm2 import smollm2_model_dir

        tokenizer = str(smollm2_model_dir())
    with tempfile.TemporaryDirectory(prefix="reproduce-bench-") as tmp:
        raw.update(
            data=str(Path(args.data).resolve()),
            out=str(Path(tmp) / "out"),
            parts=args.parts.split(","),
            cache=str(Path(tmp) / "cache" / "llm.sqlite"),
        )
        for role in ("systems", "simulator", "judge"):
            model = (
                raw["models"][role] if isinstance(raw["models"][role], dict) else {"llm": raw["models"][role]}
            )
            raw["models"][role] = {**model, "llm": DEAD, "tokenizer": tokenizer}
        if args.interactive_n is not None:
            raw["interactive"]["n"] = args.interactive_n
        if args.core_systems:
            raw["core"]["systems"] = args.core_systems.split(",")
        if args.closed_split:
            raw["closed"]["split"] = args.closed_split
        config = parse_config(raw, Path(tmp) / "paper.yaml", Path(tmp))
        ctx = Context(config)
        try:
            result, wall, cpu = timed(lambda: plan(ctx))
        finally:
            ctx.close()
    print(format_plan(result))
    print(f"\ndry run: {wall:.0f} s wall, {cpu:.0f} s CPU; parts {args.parts}; {machine()}")
    return {"plan": result, "wall_s": wall, "cpu_s": cpu}


# ---------------------------------------------------------------------------------------------------------
# 2. client throughput against a server that answers at once
# ---------------------------------------------------------------------------------------------------------
BODY = json.dumps(
    {
        "id": "x",
        "object": "chat.completion",
        "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20},
    }
).encode()
RESPONSE = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (
    len(BODY),
    BODY,
)


def _serve(sock: socket.socket, delay_s: float = 0.0) -> None:
    """An HTTP/1.1 keep-alive server that answers every request with the same completion, after `delay_s`."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line[:15].lower() == b"content-length:":
                        length = int(line[15:])
                await reader.readexactly(length)
                if delay_s:
                    await asyncio.sleep(delay_s)
                writer.write(RESPONSE)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    async def main() -> None:
        server = await asyncio.start_server(handle, sock=sock, backlog=1024)
        async with server:
            await server.serve_forever()

    asyncio.run(main())


def _start_server(delay_s: float = 0.0) -> tuple[multiprocessing.Process, int]:
    """The local server in a process of its own, and its port."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = multiprocessing.get_context("fork").Process(target=_serve, args=(sock, delay_s), daemon=True)
    server.start()
    return server, port


def throughput(args: argparse.Namespace) -> dict:
    from trace_llm import load_llm

    server, port = _start_server()
    figures = {}
    try:
        time.sleep(0.5)
        for concurrency in [int(c) for c in args.concurrency.split(",")]:
            with tempfile.TemporaryDirectory() as tmp:
                llm = load_llm(
                    f"openai:http://127.0.0.1:{port}/v1#m",
                    cache_path=Path(tmp) / "c.sqlite",
                    concurrency=concurrency,
                )
                convs = [
                    [{"role": "user", "content": f"request {concurrency}-{i} " + "x" * args.prompt_chars}]
                    for i in range(args.requests)
                ]
                _, wall, cpu = timed(lambda llm=llm, convs=convs: llm.generate_batch(convs))
                assert llm.usage["requests"] == args.requests
                llm.close()
            figures[concurrency] = {
                "requests_per_s": args.requests / wall,
                "cpu_ms_per_request": 1000 * cpu / args.requests,
            }
            print(
                f"concurrency {concurrency:4d}: {args.requests} requests in {wall:.2f} s = "
                f"{args.requests / wall:,.0f} requests/s; client CPU {1000 * cpu / args.requests:.2f} ms per request"
            )
    finally:
        server.terminate()
        server.join(5)
    print(f"{machine()}")
    return figures


def _conversations(tag: str, n: int, prompt_chars: int) -> list[list[dict]]:
    return [[{"role": "user", "content": f"request {tag}-{i} " + "x" * prompt_chars}] for i in range(n)]


def _by_client(port: int, convs: list, concurrency: int, tmp: Path) -> float:
    """Wall seconds of the plain client (the openai backend, its response cache included) for `convs`."""
    from trace_llm import load_llm

    llm = load_llm(
        f"openai:http://127.0.0.1:{port}/v1#m", cache_path=tmp / "c.sqlite", concurrency=concurrency
    )
    try:
        _, wall, _ = timed(lambda: llm.generate_batch(convs, {"max_new_tokens": 16}))
        assert llm.usage["requests"] == len(convs)
    finally:
        llm.close()
    return wall


def _by_ray(ray, port: int, convs: list, concurrency: int, tmp: Path) -> float:
    """Wall seconds of the same requests as one batch file through `ray_engine.answer_file`, each answer then read
    by the openai backend's parser and put in a response cache (what the import does)."""
    from trace_harness.reproduce.ray_engine import answer_file
    from trace_llm.batch import PARSER_URL, openai_body_parser
    from trace_llm.cache import ResponseCache
    from trace_llm.openai_backend import OpenAILLM

    body = {"model": "m", "max_tokens": 16, "temperature": 0.0, "top_p": 1.0}
    lines = [json.dumps({"custom_id": f"q{i}", "body": {**body, "messages": c}}) for i, c in enumerate(convs)]
    inp, out = tmp / "in.jsonl", tmp / "in.out.jsonl"
    inp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    url = f"http://127.0.0.1:{port}/v1/chat/completions"

    def run() -> None:
        answer_file(ray, inp, out, [url], {}, concurrency=concurrency)
        parse = openai_body_parser(OpenAILLM(PARSER_URL, "batch", cache_path=False))
        with ResponseCache(tmp / "r.sqlite") as cache:
            for line in out.read_text(encoding="utf-8").splitlines():
                record = json.loads(line)
                cache.put(record["custom_id"], "openai", "m", {}, parse(record["response"]["body"]))

    _, wall, _ = timed(run)
    return wall


def _slope(walls: dict[int, float]) -> tuple[float, float]:
    """(seconds per request, fixed seconds) of the line through the two (requests, wall) points."""
    (n1, t1), (n2, t2) = sorted(walls.items())
    per = (t2 - t1) / (n2 - n1)
    return per, t1 - per * n1


def ray_overhead(args: argparse.Namespace) -> dict:
    """The plain client against `--engine ray`'s processor on one local server: time per request and per round."""
    import statistics

    import ray

    sizes = sorted(int(x) for x in args.requests.split(","))
    assert len(sizes) == 2, "--requests takes two counts (the slope between them is the time per request)"
    server, port = _start_server(args.delay_ms / 1000)
    figures: dict = {"delay_ms": args.delay_ms, "requests": sizes, "rows": {}, "load_before": os.getloadavg()}
    ray.init(num_cpus=args.ray_cpus, include_dashboard=False, log_to_driver=False)
    try:
        with tempfile.TemporaryDirectory() as tmp:  # the first round starts Ray's workers: not measured
            warm = _by_ray(ray, port, _conversations("warm-up", 8, args.prompt_chars), 1, Path(tmp))
        figures["first_round_s"] = warm
        print(f"first round (8 requests, Ray's workers starting): {warm:.1f} s")
        for c in [int(x) for x in args.concurrency.split(",")]:
            runs = []
            for rep in range(args.repeats):
                walls: dict[str, dict[int, float]] = {"client": {}, "ray": {}}
                for n in sizes:
                    for path, fn in (("client", _by_client), ("ray", lambda *a: _by_ray(ray, *a))):
                        convs = _conversations(f"{path}-{c}-{rep}-{n}", n, args.prompt_chars)
                        with tempfile.TemporaryDirectory() as tmp:
                            walls[path][n] = fn(port, convs, c, Path(tmp))
                (pc, fc), (pr, fr) = _slope(walls["client"]), _slope(walls["ray"])
                runs.append(
                    {
                        "walls": walls,
                        "client_ms": 1000 * pc,
                        "ray_ms": 1000 * pr,
                        "ray_fixed_s": fr,
                        "client_fixed_s": fc,
                        "ratio": pr / pc,
                    }
                )
                print(
                    f"concurrency {c}, repeat {rep + 1}: per request client {1000 * pc:.2f} ms, ray {1000 * pr:.2f} ms"
                    f" ({pr / pc - 1:+.1%}); fixed per round client {fc:.2f} s, ray {fr:.2f} s; "
                    f"{sizes[1]} requests: client {walls['client'][sizes[1]]:.2f} s, ray {walls['ray'][sizes[1]]:.2f} s"
                )
            ratios = [r["ratio"] for r in runs]
            figures["rows"][c] = {"runs": runs, "median_ratio": statistics.median(ratios)}
            print(
                f"concurrency {c}: ray/client time per request, median {statistics.median(ratios):.3f} "
                f"(range {min(ratios):.3f}-{max(ratios):.3f}) over {len(runs)} repeats"
            )
    finally:
        ray.shutdown()
        server.terminate()
        server.join(5)
    figures["load_after"] = os.getloadavg()
    print(machine())
    return figures


def _built_in_corpus(folder: Path, n: int) -> Path:
    """The built-in pipeline at small scale (the tests' corpus): synthetic bundle -> KB -> `n` dialogues."""
    from trace_dataset.generate import generate_corpus
    from trace_dataset.kb.build import build_kb
    from trace_dataset.yelp.synth import write_synthetic_bundle

    bundle = write_synthetic_bundle(folder / "bundle", seed=42, scale=0.1)
    build_kb(bundle, folder / "kb", per_cell=11)
    generate_corpus(folder / "kb", folder / "corpus", n=n, seed=42, workers=1, progress=False)
    return folder / "corpus"


def shards(args: argparse.Namespace) -> dict:
    """One `run` against N shards run one after another plus the merge, on the same machine: what sharding
    costs (each shard reads the data and the knowledge base and builds the system again) and the merge's time.
    Each repeat times the one run again beside its shards; CPU time (this process's) is the load-proof figure."""
    import statistics

    from trace_dataset.shards import Shard
    from trace_harness.protocols.teacher_forced.runner import run_baseline
    from trace_harness.shards.predictions import merge_predictions

    counts = [int(x) for x in args.counts.split(",")]
    figures: dict = {"system": args.system, "repeats": [], "load_before": os.getloadavg()}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        data = Path(args.data) if args.data else _built_in_corpus(root / "built-in", args.dialogues)
        for rep in range(args.repeats):
            one_out = root / f"r{rep}" / "one.jsonl"
            meta, one, one_cpu = timed(
                lambda o=one_out: run_baseline(args.system, data, o, split=args.split, progress=False)
            )
            figures.update({"dialogues": meta["n_dialogues"], "predictions": meta["n_rows"]})
            row: dict = {"one_s": one, "one_cpu_s": one_cpu, "shards": {}}
            for n in counts:
                outs = [root / f"r{rep}" / f"s{n}" / f"{args.system}.{i}-of-{n}.jsonl" for i in range(n)]
                merged_out = outs[0].with_name("merged.jsonl")

                def run_all(outs=outs, n=n) -> None:
                    for i, out in enumerate(outs):
                        run_baseline(
                            args.system, data, out, split=args.split, progress=False, shard=Shard(i, n)
                        )

                _, ran, ran_cpu = timed(run_all)
                _, merged, merged_cpu = timed(lambda outs=outs, m=merged_out: merge_predictions(outs, m))
                same = merged_out.read_bytes() == one_out.read_bytes()
                cpu_ratio = (ran_cpu + merged_cpu) / one_cpu
                row["shards"][n] = {
                    "shards_s": ran,
                    "merge_s": merged,
                    "cpu_ratio": cpu_ratio,
                    "identical": same,
                }
                print(
                    f"repeat {rep + 1}, N={n}: shards {ran:.1f} s + merge {merged:.2f} s against one run {one:.1f} s "
                    f"(wall {(ran + merged) / one:.2f}x, CPU {cpu_ratio:.2f}x); merged file identical: {same}"
                )
            figures["repeats"].append(row)
    for n in counts:
        ratios = [r["shards"][n]["cpu_ratio"] for r in figures["repeats"]]
        print(
            f"N={n}: N shards + merge against one run, CPU time {statistics.median(ratios):.2f}x "
            f"(range {min(ratios):.2f}-{max(ratios):.2f}, {len(ratios)} repeats)"
        )
    figures["load_after"] = os.getloadavg()
    print(machine())
    return figures


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="what", required=True)
    d = sub.add_parser("dryrun", help="requests and tokens per part of the paper's protocol (dry run)")
    d.add_argument("--data", default="runs/demo/hydrated", help="a hydrated Trace data directory")
    d.add_argument("--parts", default="table5,table6,interactive,core,judge")
    d.add_argument(
        "--tokenizer", default="smollm2", help="smollm2, a tokenizer folder, or none (4 chars/token)"
    )
    d.add_argument(
        "--interactive-n", type=int, default=None, help="travelers per interactive run (paper: 1000)"
    )
    d.add_argument(
        "--core-systems",
        default=None,
        help="comma-separated systems CoRE scores (default: the paper config's)",
    )
    d.add_argument(
        "--closed-split", default=None, help="the closed runs' split (default: the paper config's, all)"
    )
    d.add_argument("--json", default=None, help="also write the figures here")
    t = sub.add_parser("throughput", help="client requests/s against a server that answers at once")
    t.add_argument("--requests", type=int, default=4000)
    t.add_argument("--concurrency", default="64,256")
    t.add_argument(
        "--prompt-chars", type=int, default=2000, help="characters per prompt (a POI-card prompt: ~6,000)"
    )
    t.add_argument("--json", default=None)
    h = sub.add_parser("shards", help="N shards of a run plus their merge against one run (same machine)")
    h.add_argument(
        "--data", default=None, help="a Trace data directory (default: the built-in corpus, built)"
    )
    h.add_argument(
        "--dialogues", type=int, default=400, help="dialogues of the built-in corpus (default 400)"
    )
    h.add_argument("--split", default="all", help="the split to run (default all)")
    h.add_argument("--system", default="tfidf")
    h.add_argument("--counts", default="1,2,4,8", help="shard counts (default 1,2,4,8)")
    h.add_argument("--repeats", type=int, default=1, help="times to run the whole comparison (default 1)")
    h.add_argument("--json", default=None)
    r = sub.add_parser(
        "ray", help="--engine ray's time per request against the plain client (one local server)"
    )
    r.add_argument("--requests", default="100,400", help="two request counts (the slope is per request)")
    r.add_argument("--concurrency", default="1,4", help="client concurrency = Ray processor tasks")
    r.add_argument(
        "--delay-ms", type=float, default=20.0, help="the server's delay per answer (a model's latency)"
    )
    r.add_argument("--prompt-chars", type=int, default=2000)
    r.add_argument("--repeats", type=int, default=3)
    r.add_argument("--ray-cpus", type=int, default=os.cpu_count() or 1, help="ray.init(num_cpus=...)")
    r.add_argument("--json", default=None)
    args = p.parse_args(argv)
    if getattr(args, "tokenizer", None) == "none":
        args.tokenizer = None
    figures = {"dryrun": dryrun, "throughput": throughput, "shards": shards, "ray": ray_overhead}[args.what](
        args
    )
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
