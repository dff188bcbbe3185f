"""The LLM client's request rate against a local server that answers at once: the openai backend (the product's
path: `load_llm("openai:...")`, its response cache included, every retry, deadline and size check on) against
plain aiohttp (the peer: one session, `concurrency` requests in flight, each answer parsed) and plain httpx (one
`AsyncClient` with as many pooled connections), in the same run, one after another at each concurrency.

    .venv/bin/python benchmarks/llm_client.py                          # 4,000 requests at concurrency 64 and 256
    .venv/bin/python benchmarks/llm_client.py --requests 8000 --concurrency 256 --rounds 3

The server (benchmarks/reproduce.py's: HTTP/1.1 keep-alive, the same small chat completion for every request) runs
in its own process. Prints requests/s and the client's CPU milliseconds per request for each client, and the
product's rate as a share of plain aiohttp's. The goal: at least 2,000 requests/s at concurrency 256,
so that the client is never what a serving cluster waits on.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
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


def _load(name: str):
    """A module of benchmarks/, loaded by path (this folder stays off sys.path)."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", _HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_common = _load("_common")
_reproduce = _load("reproduce")  # its server: one definition


def bodies(n: int, tag: str, prompt_chars: int) -> list[bytes]:
    return [
        json.dumps(
            {
                "model": "m",
                "messages": [{"role": "user", "content": f"request {tag}-{i} " + "x" * prompt_chars}],
            }
        ).encode()
        for i in range(n)
    ]


async def plain_aiohttp(url: str, payloads: list[bytes], concurrency: int) -> None:
    import aiohttp

    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:
        gate = asyncio.Semaphore(concurrency)

        async def one(body: bytes) -> None:
            async with gate, session.post(url, data=body, headers={"content-type": "application/json"}) as r:
                json.loads(await r.read())["choices"][0]["message"]["content"]

        await asyncio.gather(*(one(b) for b in payloads))


async def plain_httpx(url: str, payloads: list[bytes], concurrency: int) -> None:
    import httpx

    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(limits=limits, timeout=60) as client:
        gate = asyncio.Semaphore(concurrency)

        async def one(body: bytes) -> None:
            async with gate:
                r = await client.post(url, content=body, headers={"content-type": "application/json"})
                r.json()["choices"][0]["message"]["content"]

        await asyncio.gather(*(one(b) for b in payloads))


def product(base: str, requests: int, concurrency: int, prompt_chars: int, tag: str) -> None:
    from trace_llm import load_llm

    with tempfile.TemporaryDirectory() as tmp:
        llm = load_llm(f"openai:{base}#m", cache_path=Path(tmp) / "c.sqlite", concurrency=concurrency)
        convs = [
            [{"role": "user", "content": f"request {tag}-{i} " + "x" * prompt_chars}] for i in range(requests)
        ]
        llm.generate_batch(convs)
        assert llm.usage["requests"] == requests, llm.usage
        llm.close()


CLIENTS = ("product", "aiohttp", "httpx")


def run_client(name: str, args: argparse.Namespace, base: str, concurrency: int, tag: str) -> None:
    if name == "product":
        product(base, args.requests, concurrency, args.prompt_chars, tag)
        return
    plain = plain_aiohttp if name == "aiohttp" else plain_httpx
    asyncio.run(plain(f"{base}/chat/completions", bodies(args.requests, tag, args.prompt_chars), concurrency))


def measure(args: argparse.Namespace, base: str) -> list[dict]:
    rows = []
    for concurrency in [int(c) for c in args.concurrency.split(",")]:
        for r in range(args.rounds):
            row: dict = {"concurrency": concurrency, "round": r}
            for name in CLIENTS:
                tag = f"{concurrency}-{r}-{name}"
                _, wall, cpu = _common.timed(
                    lambda n=name, t=tag, c=concurrency: run_client(n, args, base, c, t)
                )
                row[name] = {
                    "requests_per_s": round(args.requests / wall),
                    "cpu_ms": round(1000 * cpu / args.requests, 3),
                }
            row["product_to_aiohttp"] = round(
                row["product"]["requests_per_s"] / row["aiohttp"]["requests_per_s"], 2
            )
            print(
                f"concurrency {concurrency:4d} round {r}: "
                + ", ".join(
                    f"{n} {row[n]['requests_per_s']:,} req/s ({row[n]['cpu_ms']} ms CPU)" for n in CLIENTS
                )
                + f"; product/aiohttp {row['product_to_aiohttp']}",
                flush=True,
            )
            rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--requests", type=int, default=4000)
    p.add_argument("--concurrency", default="64,256")
    p.add_argument("--rounds", type=int, default=2, help="repeats of the three clients at each concurrency")
    p.add_argument(
        "--prompt-chars", type=int, default=2000, help="characters per prompt (a POI-card prompt: ~6,000)"
    )
    p.add_argument("--json", default=None, help="also write the figures here")
    args = p.parse_args(argv)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    base = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    server = multiprocessing.get_context("fork").Process(target=_reproduce._serve, args=(sock,), daemon=True)
    server.start()
    try:
        time.sleep(0.5)
        rows = measure(args, base)
    finally:
        server.terminate()
        server.join(5)
    print(_common.machine())
    if args.json:
        Path(args.json).write_text(
            json.dumps({"machine": _common.machine(), "rows": rows}, indent=1), encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
