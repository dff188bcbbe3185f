"""The openai backend's HTTP plumbing: running its coroutines from sync code, one aiohttp session per batch, and an
answer read whole (`Answer`).

Why aiohttp: against a server that answers at once, httpx's async client spent 2.4-6.3 ms of CPU per request in
its own connection-pool bookkeeping, so a client process topped out below what one GPU server answers. aiohttp's
connector keeps its idle connections in a queue per host: the backend spends 0.5-0.9 ms of CPU a request, every
retry, deadline and size check included (benchmarks/llm_client.py; docs/llm.md, "The client's request rate").
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import aiohttp


def run_sync(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine to completion from sync code, also when the caller already runs an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:  # e.g. inside Gradio or Jupyter
        return pool.submit(asyncio.run, coro).result()


@dataclass(frozen=True)
class Answer:
    """An HTTP answer read whole: its status, headers (names in any case) and body."""

    status_code: int
    headers: Mapping[str, str]
    content: bytes

    @property
    def text(self) -> str:
        return self.content.decode("utf-8", errors="replace")

    def json(self) -> Any:
        return json.loads(self.content)


def open_session(
    slots: int, connect_timeout: float, deadline: float, headers: dict[str, str]
) -> aiohttp.ClientSession:
    """An aiohttp session of up to `slots` pooled connections (kept alive between requests); each request has
    `deadline` seconds in all (connecting, sending and reading the whole answer) and `connect_timeout` to
    connect. Use it as `async with`."""
    import aiohttp

    connector = aiohttp.TCPConnector(limit=slots, limit_per_host=0, ttl_dns_cache=300)
    return aiohttp.ClientSession(
        connector=connector,
        timeout=aiohttp.ClientTimeout(total=deadline, sock_connect=connect_timeout),
        headers={"content-type": "application/json", **headers},
        raise_for_status=False,
    )
