"""The openai backend's HTTP plumbing: running its coroutines from sync code, one aiohttp session per batch, an
answer read whole (`Answer`), and the count of requests in flight per server that every thread shares
(`SERVER_SLOTS`).

Why aiohttp: against a server that answers at once, httpx's async client spent 2.4-6.3 ms of CPU per request in
its own connection-pool bookkeeping, so a client process topped out below what one GPU server answers. aiohttp's
connector keeps its idle connections in a queue per host: the backend spends 0.5-0.9 ms of CPU a request, every
retry, deadline and size check included (benchmarks/llm_client.py; docs/llm.md, "The client's request rate").
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import json
import threading
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


@dataclass(eq=False)
class _Waiter:
    """A request waiting for a slot on one of `urls` (its backend's limit: `limit` in flight per server)."""

    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[str]
    urls: tuple[str, ...]
    limit: int
    granted: str | None = None


def _resolve(future: asyncio.Future[str], url: str) -> None:
    if not future.done():
        future.set_result(url)


class ServerSlots:
    """The requests in flight per server URL, counted across every thread and event loop of the process (the
    schema groups of a batch each run their own loop in a thread; several backends may name one server), so that
    one server never has more than a backend's `concurrency` requests of this process in flight.

    `acquire(urls, limit)` takes a slot on the least busy of `urls` (the first of the tied ones) whose count is
    below `limit`, waiting in turn (first come, first served) while none is; `release(url)` gives it back and
    hands it to the first waiter that can use it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._busy: collections.Counter[str] = collections.Counter()
        self._waiting: collections.deque[_Waiter] = collections.deque()

    def in_flight(self, url: str) -> int:
        with self._lock:
            return self._busy[url]

    def _free(self, urls: tuple[str, ...], limit: int) -> str | None:
        best = min(urls, key=self._busy.__getitem__)
        return best if self._busy[best] < limit else None

    async def acquire(self, urls: tuple[str, ...], limit: int) -> str:
        loop = asyncio.get_running_loop()
        with self._lock:
            url = self._free(urls, limit)
            if url is not None:
                self._busy[url] += 1
                return url
            waiter = _Waiter(loop, loop.create_future(), urls, limit)
            self._waiting.append(waiter)
        try:
            return await waiter.future
        except BaseException:  # cancelled while waiting: give back a slot handed over meanwhile
            with self._lock:
                granted = waiter.granted
                if granted is None:
                    self._waiting.remove(waiter)
            if granted is not None:
                self.release(granted)
            raise

    def release(self, url: str) -> None:
        with self._lock:
            self._busy[url] -= 1
            for waiter in self._waiting:
                if url in waiter.urls and self._busy[url] < waiter.limit:
                    self._waiting.remove(waiter)
                    self._busy[url] += 1
                    waiter.granted = url
                    break
            else:
                return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if waiter.loop is running:
            _resolve(waiter.future, url)
        else:
            try:
                waiter.loop.call_soon_threadsafe(_resolve, waiter.future, url)
            except RuntimeError:  # its loop has closed: nobody will use the slot
                self.release(url)


SERVER_SLOTS = ServerSlots()  # the process's one count per server
