"""The LLM baselines' client side: how much time a turn costs us without the model, and turns/s against servers.

    python benchmarks/llm_baselines.py --build /tmp/trace_builtin --n 2000      # build (or reuse) a corpus
    python benchmarks/llm_baselines.py --data DIR overhead [--dialogues 300]    # ms of client work per turn
    python benchmarks/llm_baselines.py --data DIR instant [--turns 2000]        # through HTTP, instant server
    python benchmarks/llm_baselines.py --data DIR server [--turns 16]           # transformers serve + SmolLM2

- overhead: every LLM baseline over the system turns of `--dialogues` dialogues with a model that answers
  at once (valid JSON of the right shape, no network): prompt building, retrieval and scoring, JSON parsing
  and validation, citations, ranking completion, the response cache (off, then a fresh SQLite file). The
  goal is < 5 ms per turn, so that a GPU server is never waiting for us. RAG-Citation's instant answers never
  pass its quote check, so its figure includes two retries per ranked turn (its worst case). Memory-Aug.'s
  includes the all-MiniLM-L6-v2 encoder on this CPU (a model, but ours, not the LLM's).
- instant: Zero-Shot through the real openai backend against a local HTTP server that answers at once
  (threads, 127.0.0.1): what one client process can push through HTTP, JSON and the cache at concurrency 64.
- server: Zero-Shot against a real `transformers serve` process with the packaged SmolLM2 (CPU, one thread),
  at concurrency 1, 4 and 16, `--max-new-tokens` (32) per answer and no JSON repairs, on a fresh cache each
  time. `transformers serve` answers one request at a time, so concurrency cannot speed it up here; vLLM or
  TGI batch concurrent requests, which is what the concurrency is for.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import tempfile
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
sys.path[:] = [
    p for p in sys.path if Path(p or ".").resolve() != _HERE
]  # baselines.py would shadow `baselines`


def _load(name: str, file: str) -> Any:
    """A module of this folder, loaded by path (the folder itself stays off sys.path)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, _HERE / file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_common = _load("bench_common", "_common.py")
machine, timed = _common.machine, _common.timed


def instant_reply(conv: list[dict[str, str]]) -> str:
    """A valid answer of the requested shape, at once."""
    last = conv[-1]["content"]
    if '"ranked_ids"' in last:
        return json.dumps({"ranked_ids": ["P1"], "response": 'I recommend P1: "a short quote" [R1].'})
    if '"price_max"' in last:
        return json.dumps({"price_max": 2, "cuisine_likes": ["thai"]})
    if '"response"' in last:
        return json.dumps({"response": "Enjoy your stay!"})
    return "It is well liked [R1]."


def instant_llm(cache: Any = False):
    from trace_llm.base import LLM
    from trace_llm.cache import Completion

    class Instant(LLM):
        backend = "instant"

        def _complete(self, conversations, settings, on_done) -> None:
            for i, conv in enumerate(conversations):
                on_done(i, Completion(instant_reply(conv), 100, 10, "stop"))

    return Instant("instant", cache_path=cache)


def load_rows(data: Path, split: str, pool: str, dialogues: int) -> list[dict[str, Any]]:
    from trace_dataset.datadir import iter_dialogues
    from trace_dataset.views import turn_rows

    out = []
    for i, d in enumerate(iter_dialogues(data, split)):
        if i >= dialogues:
            break
        out.extend(turn_rows(d, pool))
    return out


def overhead(args: argparse.Namespace) -> None:
    from baselines import LLM_BASELINES, pipeline
    from trace_dataset.datadir import kb_dir
    from trace_dataset.kb.store import KnowledgeBase

    kb = KnowledgeBase.load(kb_dir(args.data))
    rows = load_rows(args.data, args.split, args.pool, args.dialogues)
    names = args.baselines.split(",") if args.baselines else list(LLM_BASELINES)
    print(
        f"{len(rows)} system turns of {args.dialogues} dialogues ({args.split}, pool {args.pool}); {machine()}"
    )
    print(
        "first pass: indices built on first use (TF-IDF per city x type, review sentences, consensus, graph) "
        "included; then the steady state, what a 10,000-dialogue run pays per turn"
    )
    print(
        f"{'baseline':24s} {'first pass ms/turn':>19s} {'ms/turn':>8s} {'CPU ms/turn':>12s} "
        f"{'with SQLite cache':>18s} {'requests/turn':>14s}"
    )
    for name in names:
        pipe = pipeline(name, kb=kb, llm=instant_llm(), batch_size=args.batch_size)
        _, first, _ = timed(lambda pipe=pipe: list(pipe(rows)))
        pipe.llm.reset_usage()
        _, wall, cpu = timed(lambda pipe=pipe: list(pipe(rows)))
        requests = pipe.llm.usage["requests"]
        with tempfile.TemporaryDirectory() as tmp:
            cached = pipeline(
                name, kb=kb, llm=instant_llm(Path(tmp) / "llm.sqlite"), batch_size=args.batch_size
            )
            cached.tfidf, cached._popularity = pipe.tfidf, pipe._popularity  # the warm indices
            for attr in ("evidence", "_counts", "_categories", "_graphs"):
                if attr in pipe.__dict__:
                    setattr(cached, attr, getattr(pipe, attr))
            _, wall_c, _ = timed(lambda cached=cached: list(cached(rows)))  # every answer written to SQLite
        n = len(rows)
        print(
            f"{name:24s} {1000 * first / n:19.2f} {1000 * wall / n:8.2f} {1000 * cpu / n:12.2f} "
            f"{1000 * wall_c / n:18.2f} {requests / n:14.2f}"
        )


def serve_instant(port_out: Any) -> None:
    """An OpenAI-compatible chat-completions server on 127.0.0.1 that answers at once (threads), run in its own
    process so that its CPU is not counted as the client's; sends its port through `port_out` (a Queue)."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a: object) -> None:
            return None

        def do_POST(self) -> None:  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
            content = instant_reply(body["messages"])
            payload = json.dumps(
                {
                    "choices": [{"message": {"content": content}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 100, "completion_tokens": 10},
                }
            ).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    port_out.put(server.server_address[1])
    server.serve_forever()


def instant(args: argparse.Namespace) -> None:
    import multiprocessing

    from baselines import pipeline
    from trace_dataset.datadir import kb_dir
    from trace_dataset.kb.store import KnowledgeBase

    kb = KnowledgeBase.load(kb_dir(args.data))
    rows = load_rows(args.data, args.split, args.pool, 10**9)[: args.turns]
    ctx = multiprocessing.get_context("spawn")
    ports = ctx.Queue()
    proc = ctx.Process(target=serve_instant, args=(ports,), daemon=True)
    proc.start()
    spec = f"openai:http://127.0.0.1:{ports.get(timeout=60)}/v1#instant"
    try:
        with tempfile.TemporaryDirectory() as tmp:
            pipe = pipeline(
                "llm_zero_shot",
                kb=kb,
                llm=spec,
                llm_cache=str(Path(tmp) / "llm.sqlite"),
                llm_options={"concurrency": 64},
                batch_size=256,
                json_repairs=0,
            )
            list(pipe(rows))  # warm-up (indices), then the figures on the same turns with a fresh cache
            from trace_llm import ResponseCache

            pipe.llm.cache = ResponseCache(Path(tmp) / "fresh.sqlite")
            _, wall, cpu = timed(lambda: list(pipe(rows)))
    finally:
        proc.terminate()
    print(
        f"llm_zero_shot via HTTP to an instant local server (its own process), concurrency 64, batch 256: "
        f"{len(rows)} turns in {wall:.1f} s = {len(rows) / wall:.0f} turns/s; the client's CPU (fresh SQLite cache included): "
        f"{1000 * cpu / len(rows):.2f} ms per turn; {machine()}"
    )


def server(args: argparse.Namespace) -> None:
    from baselines import pipeline
    from trace_dataset.datadir import kb_dir
    from trace_dataset.kb.store import KnowledgeBase
    from trace_llm.local_server import transformers_serve
    from trace_llm.smollm2 import smollm2_model_dir

    kb = KnowledgeBase.load(kb_dir(args.data))
    rows = [
        r
        for r in load_rows(args.data, args.split, args.pool, 10**9)
        if r["action"] in ("recommend", "compare")
    ]
    rows = rows[: args.turns]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the started server on `kill`, too
    t0 = time.perf_counter()
    with transformers_serve(smollm2_model_dir(), threads=args.threads) as srv:
        print(
            f"transformers serve (SmolLM2-135M-Instruct, CPU, {args.threads} thread) up in "
            f"{time.perf_counter() - t0:.0f} s; {len(rows)} recommend/compare turns of llm_zero_shot, "
            f"{args.max_new_tokens} new tokens, no JSON repairs; {machine()}"
        )
        warm = pipeline(
            "llm_zero_shot",
            kb=kb,
            llm=srv.spec,
            llm_cache=False,
            max_new_tokens=args.max_new_tokens,
            json_repairs=0,
        )
        list(warm(rows[:1]))
        for c in args.concurrency:
            pipe = pipeline(
                "llm_zero_shot",
                kb=kb,
                llm=srv.spec,
                llm_cache=False,
                max_new_tokens=args.max_new_tokens,
                json_repairs=0,
                llm_options={"concurrency": c},
                batch_size=len(rows),
            )
            _, wall, _ = timed(lambda pipe=pipe: list(pipe(rows)))
            usage = pipe.llm.usage
            print(
                f"  concurrency {c:2d}: {len(rows)} turns in {wall:6.1f} s = {len(rows) / wall:.3f} turns/s "
                f"({usage['prompt_tokens'] / len(rows):.0f} prompt + {usage['completion_tokens'] / len(rows):.0f} "
                f"completion tokens per turn)"
            )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--data", type=Path, help="an existing Trace data directory")
    src.add_argument(
        "--build", type=Path, metavar="DIR", help="build (or reuse) the built-in corpus under DIR"
    )
    ap.add_argument("--n", type=int, default=2000, help="dialogues for --build (default 2000)")
    ap.add_argument("--split", default="test")
    ap.add_argument("--pool", default="closed")
    sub = ap.add_subparsers(dest="what")
    o = sub.add_parser("overhead", help="client ms per turn without the model")
    o.add_argument("--dialogues", type=int, default=300)
    o.add_argument("--batch-size", type=int, default=64)
    o.add_argument("--baselines", default=None, help="comma-separated (default: all six)")
    i = sub.add_parser("instant", help="turns/s through HTTP against an instant local server")
    i.add_argument("--turns", type=int, default=2000)
    s = sub.add_parser("server", help="turns/s against transformers serve with SmolLM2")
    s.add_argument("--turns", type=int, default=16)
    s.add_argument("--concurrency", type=lambda t: [int(x) for x in t.split(",")], default=[1, 4, 16])
    s.add_argument("--max-new-tokens", type=int, default=32)
    s.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    if args.build:
        args.data = build_builtin(args.build, args.n)
    if args.what is None:
        print(f"corpus ready: {args.data}")
        return 0
    {"overhead": overhead, "instant": instant, "server": server}[args.what](args)
    return 0


def build_builtin(root: Path, n: int) -> Path:
    """benchmarks/baselines.py's built-in corpus (synthetic bundle -> KB -> n dialogues), reused when present."""
    return _load("bench_baselines", "baselines.py").build_builtin(root, n, workers=1)


if __name__ == "__main__":
    sys.exit(main())
