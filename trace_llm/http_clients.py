"""The openai backend's HTTP plumbing: running its coroutines from sync code, and a pool of small httpx clients."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
from collections.abc import AsyncIterator, Coroutine
from typing import Any

import httpx

CONNECTIONS_PER_CLIENT = 8  # connections per httpx client (ClientPool)


def run_sync(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine to completion from sync code, also when the caller already runs an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:  # e.g. inside Gradio or Jupyter
        return pool.submit(asyncio.run, coro).result()


class ClientPool:
    """`slots` request slots over httpx clients of at most CONNECTIONS_PER_CLIENT connections each, one slot lent
    per request. httpx's connection pool scans every connection it holds on each request, so one client of 256
    connections spends most of the client's CPU there (6.3 ms per request at 256 connections against 2.5 ms with
    clients of 8, on the same server: benchmarks/reproduce.py throughput); small clients keep that cost flat."""

    def __init__(self, slots: int, timeout: httpx.Timeout, headers: dict[str, str]):
        n = -(-slots // CONNECTIONS_PER_CLIENT)
        per = -(-slots // n)
        limits = httpx.Limits(max_connections=per, max_keepalive_connections=per)
        self.clients = [httpx.AsyncClient(timeout=timeout, limits=limits, headers=headers) for _ in range(n)]
        self._free: asyncio.Queue[httpx.AsyncClient] = asyncio.Queue()
        for i in range(slots):
            self._free.put_nowait(self.clients[i % n])

    async def __aenter__(self) -> ClientPool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.gather(*(c.aclose() for c in self.clients), return_exceptions=True)

    @contextlib.asynccontextmanager
    async def lease(self) -> AsyncIterator[httpx.AsyncClient]:
        client = await self._free.get()
        try:
            yield client
        finally:
            self._free.put_nowait(client)
