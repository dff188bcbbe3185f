"""Backend `openai`: any OpenAI-compatible chat-completions server (vLLM, TGI, transformers serve, llama.cpp,
a hosted API). At scale this is how LLM work spreads over many GPUs: a cluster behind one URL.

Requests go out concurrently (asyncio + httpx, at most `concurrency` in flight), each with a timeout, and are
retried with exponential backoff on connection errors, timeouts, 429 and 5xx answers. A server that stays
unreachable gives LLMConnectionError naming the URL after a bounded time (about `backoff * (2**max_retries - 1)`
seconds, 7.5 s with the defaults). Other HTTP errors (400, 401, 404...) fail at once with the server's message.

API key: `api_key=`, else the environment variable named by `api_key_env=`, else $TRACE_LLM_API_KEY, else
$OPENAI_API_KEY; local servers need none.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import os
import random
import time
from collections.abc import Callable, Coroutine
from typing import Any

import httpx

from trace_dataset.llm.base import LLM, CachePath, Message
from trace_dataset.llm.cache import Completion
from trace_dataset.llm.errors import LLMConfigError, LLMConnectionError, LLMError
from trace_dataset.llm.settings import DecodingSettings

log = logging.getLogger(__name__)

API_KEY_ENVS = ("TRACE_LLM_API_KEY", "OPENAI_API_KEY")
DEFAULT_CONCURRENCY = 64
DEFAULT_TIMEOUT_S = 300.0  # one request, reading the answer (long generations on busy servers)
DEFAULT_CONNECT_TIMEOUT_S = 10.0
DEFAULT_MAX_RETRIES = 4
DEFAULT_BACKOFF_S = 0.5
MAX_BACKOFF_S = 30.0
RETRY_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})


def run_sync(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine to completion from sync code, also when the caller already runs an event loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:  # e.g. inside Gradio or Jupyter
        return pool.submit(asyncio.run, coro).result()


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


class OpenAILLM(LLM):
    backend = "openai"

    def __init__(
        self,
        base_url: str,
        model: str,
        settings: DecodingSettings | None = None,
        cache_path: CachePath = None,
        spec: str | None = None,
        *,
        api_key: str | None = None,
        api_key_env: str | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
        timeout: float = DEFAULT_TIMEOUT_S,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT_S,
        max_retries: int = DEFAULT_MAX_RETRIES,
        backoff: float = DEFAULT_BACKOFF_S,
    ):
        if not base_url.startswith(("http://", "https://")):
            raise LLMConfigError(f"base URL {base_url!r}: expected http://... or https://...")
        if concurrency < 1:
            raise LLMConfigError(f"concurrency={concurrency!r}: expected a positive integer")
        if max_retries < 0 or backoff < 0 or timeout <= 0 or connect_timeout <= 0:
            raise LLMConfigError(
                f"bad retry settings (max_retries={max_retries}, backoff={backoff}, timeout={timeout}, "
                f"connect_timeout={connect_timeout}): expected max_retries >= 0, backoff >= 0, timeouts > 0"
            )
        self.base_url = base_url.rstrip("/")
        self.url = f"{self.base_url}/chat/completions"
        self.concurrency = concurrency
        self.timeout = httpx.Timeout(timeout, connect=connect_timeout)
        self.max_retries = max_retries
        self.backoff = backoff
        self._api_key = api_key
        self._api_key_env = api_key_env
        super().__init__(model, settings, cache_path, spec or f"openai:{self.base_url}#{model}")

    def _describe_extra(self) -> dict[str, Any]:
        return {"base_url": self.base_url}

    def _headers(self) -> dict[str, str]:
        key = self._api_key
        if key is None:
            names = (self._api_key_env,) if self._api_key_env else API_KEY_ENVS
            key = next((os.environ[n] for n in names if os.environ.get(n)), None)
        return {"Authorization": f"Bearer {key}"} if key else {}

    def _body(self, messages: list[Message], settings: DecodingSettings) -> dict[str, Any]:
        return {
            "model": self.model,
            "messages": messages,
            "max_tokens": settings.max_new_tokens,
            "temperature": settings.temperature,
            "top_p": settings.top_p,
            "seed": settings.seed,
        }

    def _complete(
        self,
        conversations: list[list[Message]],
        settings: DecodingSettings,
        on_done: Callable[[int, Completion], None],
    ) -> None:
        run_sync(self._run(conversations, settings, on_done))

    async def _run(
        self,
        conversations: list[list[Message]],
        settings: DecodingSettings,
        on_done: Callable[[int, Completion], None],
    ) -> None:
        gate = asyncio.Semaphore(self.concurrency)
        limits = httpx.Limits(max_connections=self.concurrency, max_keepalive_connections=self.concurrency)
        async with httpx.AsyncClient(timeout=self.timeout, limits=limits, headers=self._headers()) as client:

            async def one(index: int, messages: list[Message]) -> None:
                async with gate:
                    completion = await self._request(client, self._body(messages, settings))
                on_done(index, completion)

            tasks = [asyncio.ensure_future(one(i, conv)) for i, conv in enumerate(conversations)]
            try:
                for finished in asyncio.as_completed(tasks):
                    await finished  # the first failure propagates; finished answers are already cached
            finally:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)

    async def _request(self, client: httpx.AsyncClient, body: dict[str, Any]) -> Completion:
        started = time.monotonic()
        last_error = ""
        for attempt in range(self.max_retries + 1):
            wait: float | None = None
            try:
                response = await client.post(self.url, json=body)
            except httpx.TransportError as e:  # connect errors, timeouts, dropped connections
                last_error = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
            else:
                if response.status_code == 200:
                    return self._parse(response)
                excerpt = response.text[:500]
                if response.status_code not in RETRY_STATUS and response.status_code < 500:
                    raise LLMError(
                        f"{self.url} answered HTTP {response.status_code} for model {self.model!r}: {excerpt}"
                    )
                last_error = f"HTTP {response.status_code}: {excerpt[:200]}"
                wait = _retry_after(response)
            if attempt < self.max_retries:
                delay = min(MAX_BACKOFF_S, self.backoff * 2**attempt) * (1.0 + 0.1 * random.random())
                if wait is not None:
                    delay = max(delay, min(wait, MAX_BACKOFF_S))
                log.debug("%s: %s; retry %d/%d in %.2fs", self.url, last_error, attempt + 1, self.max_retries, delay)
                await asyncio.sleep(delay)
        raise LLMConnectionError(
            f"{self.url}: no answer after {self.max_retries + 1} attempts over {time.monotonic() - started:.1f}s "
            f"(last error: {last_error}); is the server running and is the URL in 'openai:BASE_URL#MODEL' right?",
            url=self.url,
        )

    def _parse(self, response: httpx.Response) -> Completion:
        try:
            data = response.json()
            choice = data["choices"][0]
            text = choice["message"].get("content") or ""
            usage = data.get("usage") or {}
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as e:
            raise LLMError(
                f"{self.url}: the answer is not an OpenAI chat completion ({type(e).__name__}: {e}): "
                f"{response.text[:300]}"
            ) from e
        return Completion(
            text=text,
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            finish_reason=choice.get("finish_reason"),
        )
