"""Figures for `trace-bench reproduce` (docs/reproducing.md).

1. dryrun: requests, prompt and output tokens per part of the paper's protocol on a Trace corpus (the built-in
   10,000-dialogue corpus by default), from a fresh, empty response cache, as `--dry-run` counts them; and how
   long the dry run itself takes.
2. throughput: the client's requests/s through the openai backend (the response cache included) against a
   local server that answers at once, at concurrency 64 and 256: what one client process can drive.
3. shards: what `--shard I/N` costs: one teacher-forced run against N shards run one after another plus the
   merge, on the same machine (the built-in corpus by default), and that the merged file is the one run's.

    .venv/bin/python benchmarks/reproduce.py dryrun --data runs/demo/hydrated --tokenizer none \
        --parts table5,table6,interactive
    .venv/bin/python benchmarks/reproduce.py dryrun --data runs/demo/hydrated --tokenizer none \
        --parts core,judge --closed-split test
    .venv/bin/python benchmarks/reproduce.py dryrun --data runs/demo/hydrated --parts table5 --closed-split test
    .venv/bin/python benchmarks/reproduce.py throughput --requests 4000 --concurrency 64,256
    .venv/bin/python benchmarks/reproduce.py shards --dialogues 400 --counts 1,2,4,8

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


def _serve(sock: socket.socket) -> None:
    """An HTTP/1.1 keep-alive server that answers every request with the same completion, at once."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line[:15].lower() == b"content-length:":
                        length = int(line[15:])
                await reader.readexactly(length)
                writer.write(RESPONSE)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    async def main() -> None:
        server = await asyncio.start_server(handle, sock=sock, backlog=1024)
        async with server:
            await server.serve_forever()

    asyncio.run(main())


def throughput(args: argparse.Namespace) -> dict:
    from trace_llm import load_llm

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = multiprocessing.get_context("fork").Process(target=_serve, args=(sock,), daemon=True)
    server.start()
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
    costs (each shard reads the data and the knowledge base and builds the system again) and the merge's time."""
    from trace_dataset.shards import Shard
    from trace_harness.protocols.teacher_forced.runner import run_baseline
    from trace_harness.shards.predictions import merge_predictions

    figures: dict = {"system": args.system, "rows": {}}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        data = Path(args.data) if args.data else _built_in_corpus(root / "built-in", args.dialogues)
        t0 = time.perf_counter()
        meta = run_baseline(args.system, data, root / "one.jsonl", split=args.split, progress=False)
        one = time.perf_counter() - t0
        figures.update({"dialogues": meta["n_dialogues"], "predictions": meta["n_rows"], "one_run_s": one})
        for n in [int(x) for x in args.counts.split(",")]:
            outs = [root / f"s{n}" / f"{args.system}.{i}-of-{n}.jsonl" for i in range(n)]
            t0 = time.perf_counter()
            for i, out in enumerate(outs):
                run_baseline(args.system, data, out, split=args.split, progress=False, shard=Shard(i, n))
            ran = time.perf_counter() - t0
            t0 = time.perf_counter()
            merge_predictions(outs, root / f"s{n}" / "merged.jsonl")
            merged = time.perf_counter() - t0
            same = (root / f"s{n}" / "merged.jsonl").read_bytes() == (root / "one.jsonl").read_bytes()
            figures["rows"][n] = {"shards_s": ran, "merge_s": merged, "overhead": (ran + merged) / one - 1}
            print(
                f"N={n}: shards {ran:.2f} s + merge {merged:.3f} s against one run {one:.2f} s "
                f"({(ran + merged) / one - 1:+.0%}); merged file identical: {same}"
            )
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
    h.add_argument("--json", default=None)
    args = p.parse_args(argv)
    if getattr(args, "tokenizer", None) == "none":
        args.tokenizer = None
    figures = {"dryrun": dryrun, "throughput": throughput, "shards": shards}[args.what](args)
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
