"""Backend `openai`: any OpenAI-compatible chat-completions server (vLLM, TGI, transformers serve, llama.cpp,
a hosted API). At scale this is how LLM work spreads over many GPUs: a cluster behind one URL.

Requests go out concurrently (asyncio + aiohttp; trace_llm/http_clients.py says why aiohttp), at most `concurrency`
in flight per server, counted across every thread of the process (`SERVER_SLOTS`: the schema groups of a batch
run side by side, each in its own event loop), each with a deadline: `timeout` seconds for the whole request, answer included, however the
server trickles its bytes. Requests are retried with exponential backoff on connection errors,
timeouts, missed deadlines, 429 and 5xx answers, so one request takes at most about
(max_retries + 1) x timeout plus the backoff. A server that stays
unreachable gives LLMConnectionError naming the URL after a bounded time (about `backoff * (2**max_retries - 1)`
seconds, 7.5 s with the defaults). Other HTTP errors (400, 401, 404...) fail at once with the server's message.
A `Retry-After` header is honoured up to the request's own deadline (`timeout`), never longer. An answer is
read as a stream and refused once it passes `max_response_bytes` (default 4 MiB, ample for any completion;
LLMOutputError, not retried: the same request would bring the same answer), so a runaway server costs at most
that much memory per request in flight.

API key: `api_key=`, else the environment variable named by `api_key_env=`, else $TRACE_LLM_API_KEY, else
$OPENAI_API_KEY; local servers need none.

Several servers (`openai:URL1,URL2#MODEL`, or a list of base URLs) serve the same model and share the load:
each attempt goes to the server with the fewest requests in flight (ties in turn), at most `concurrency` in
flight per server, and a retry after a failure prefers another server. The response cache keys on the model
name, not the URL, so it does not matter which server answered.

Error-rate abort: the outcome of every attempt (a retried request counts each try; 429 answers are flow control
and are not counted) goes into a window of the last `error_window` (100) attempts; once the window is full and
more than `max_error_rate` (10%) of it failed, the run stops with ErrorRateExceeded, naming each server's
failures, instead of limping on against a server that fails half its requests. Answers already received are in
the response cache, so a rerun resumes. `max_error_rate=1` (or None) turns the check off.

Preflight (`preflight()`): one one-token request to every server, each named in the error when it fails, and
what each server says about itself (`/models`, vLLM's `/version`, the `server` header) for the run manifest.

Structured outputs (`structured=`, trace_llm.structured): a request under a JSON constraint carries the
`response_format` of its dialect. In `auto`, the first constrained request to a server (its base URLs) is sent
alone, in each server dialect in the order of `trace_llm.structured.DIALECTS`, then by prompt, moving on when
the server refuses the field (HTTP 400/422 naming it) or accepts it and answers something the schema refuses
(it ignored the field: a constrained reply that ends before max_tokens always validates); the dialect it
accepted is remembered for the process (`SERVER_DIALECT_MEMORY`). The prompt dialect, the last resort, needs no
probe. A dialect with answers in the response cache was accepted before: a resumed run (a new process) takes it
from there and sends no probe whose answer is cached, so it sends and counts what an uninterrupted run does;
a batch whose every answer is cached needs no server at all.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import httpx

from trace_llm.base import LLM, CachePath, Message
from trace_llm.cache import Completion
from trace_llm.errors import LLMConfigError, LLMConnectionError, LLMError, LLMOutputError
from trace_llm.http_clients import SERVER_SLOTS, Answer, open_session, run_sync
from trace_llm.server_checks import DEFAULT_ERROR_WINDOW, DEFAULT_MAX_ERROR_RATE, ServerChecks
from trace_llm.settings import DecodingSettings
from trace_llm.structured import (
    AUTO,
    DEFAULT_STRUCTURED,
    PROMPT,
    SERVER_DIALECT_MEMORY,
    Constraint,
    dialects_to_try,
    is_refusal,
    response_format,
)

if TYPE_CHECKING:
    import aiohttp

log = logging.getLogger(__name__)

API_KEY_ENVS = ("TRACE_LLM_API_KEY", "OPENAI_API_KEY")
DEFAULT_CONCURRENCY = 64
DEFAULT_TIMEOUT_S = 300.0  # deadline of one request, answer included (long generations on busy servers)
DEFAULT_CONNECT_TIMEOUT_S = 10.0
DEFAULT_MAX_RETRIES = 4
DEFAULT_BACKOFF_S = 0.5
MAX_BACKOFF_S = 30.0
RETRY_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})
MAX_TOKEN_COUNT = 10**12  # a usage figure beyond this is garbage, not tokens
DEFAULT_MAX_RESPONSE_BYTES = 4 * 2**20  # one answer; 1,024 tokens of JSON-escaped text are ~10 KB


class DialectRefused(LLMError):
    """The server refused the request's response_format (HTTP 400/422 naming it)."""


def honoured(completion: Completion, constraint: Constraint) -> bool:
    """Does a reply sent under a response_format look constrained? One cut at max_tokens proves nothing."""
    from trace_llm.jsonout import JSONOutputInvalid, parse_json_output

    if completion.finish_reason == "length":
        return True
    try:
        parse_json_output(completion.text, constraint.schema)
    except JSONOutputInvalid:
        return False
    return True


def _retry_after(response: Answer) -> float | None:
    value = response.headers.get("retry-after")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


class OpenAILLM(ServerChecks, LLM):
    backend = "openai"

    def __init__(
        self,
        base_url: str | list[str] | tuple[str, ...],
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
        structured: str = DEFAULT_STRUCTURED,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        max_error_rate: float | None = DEFAULT_MAX_ERROR_RATE,
        error_window: int = DEFAULT_ERROR_WINDOW,
    ):
        urls = (
            [u.strip() for u in base_url.split(",")]
            if isinstance(base_url, str)
            else [str(u) for u in base_url]
        )
        for url in urls:
            if not url.startswith(("http://", "https://")):
                raise LLMConfigError(f"base URL {url!r}: expected http://... or https://...")
        if not urls or len(set(urls)) != len(urls):
            raise LLMConfigError(f"base URLs {urls!r}: expected one or more distinct URLs")
        if concurrency < 1:
            raise LLMConfigError(f"concurrency={concurrency!r}: expected a positive integer")
        if not isinstance(max_response_bytes, int) or max_response_bytes < 1:
            raise LLMConfigError(f"max_response_bytes={max_response_bytes!r}: expected a positive integer")
        if max_retries < 0 or backoff < 0 or timeout <= 0 or connect_timeout <= 0:
            raise LLMConfigError(
                f"bad retry settings (max_retries={max_retries}, backoff={backoff}, timeout={timeout}, "
                f"connect_timeout={connect_timeout}): expected max_retries >= 0, backoff >= 0, timeouts > 0"
            )
        self.base_urls = [u.rstrip("/") for u in urls]
        self.base_url = self.base_urls[0]
        self.urls = [f"{u}/chat/completions" for u in self.base_urls]
        self.url = self.urls[0]
        self._turn = 0
        self.concurrency = concurrency
        self.timeout = httpx.Timeout(timeout, connect=connect_timeout)  # preflight (httpx); connect
        self.deadline = float(timeout)  # the whole request, answer included (aiohttp total timeout)
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_response_bytes = max_response_bytes
        self.sleep = asyncio.sleep  # the wait between attempts (tests put a recorder here instead)
        self._api_key = api_key
        self._api_key_env = api_key_env
        self._init_error_window(max_error_rate, error_window)
        super().__init__(
            model,
            settings,
            cache_path,
            spec or f"openai:{','.join(self.base_urls)}#{model}",
            structured=structured,
        )

    @property
    def server_key(self) -> str:
        """What the dialect memory remembers a server by: its base URL(s)."""
        return ",".join(self.base_urls)

    def _dialect_for(self, constraint: Constraint | None) -> tuple[str, bool]:
        if constraint is None or constraint.kind != "json":
            return PROMPT, False  # a grammar constraint has no portable server dialect: answered by prompt
        if self.structured != AUTO:
            return self.structured, False
        known = SERVER_DIALECT_MEMORY.get(self.server_key)
        if known is None:
            return "", False
        return known, known == PROMPT

    def _learn_dialect(
        self, conversations: list[list[Message]], settings: DecodingSettings, constraint: Constraint
    ) -> tuple[str, bool, Completion | None]:
        """`auto` on a server not asked before: the first conversation, sent alone in each dialect in turn."""
        candidates = dialects_to_try(AUTO)
        if not conversations:
            return candidates[0], False, None
        cached = self._cached_dialect(conversations, settings, constraint, candidates)
        if cached is not None:
            return cached, cached == PROMPT, None
        answers: list[Completion] = []
        refusals: list[str] = []
        for dialect in candidates:
            if dialect == PROMPT:  # the last resort sends no response_format: no probe, every request counted
                SERVER_DIALECT_MEMORY.set(self.server_key, PROMPT)
                log.warning(
                    "%s accepts no structured-output dialect (%s): prompt + repair, counted as dialect "
                    "fallbacks",
                    self.server_key,
                    "; ".join(refusals),
                )
                return PROMPT, True, None
            try:
                body = self._body(conversations[0], settings, constraint, dialect)
                run_sync(self._run_bodies([body], lambda _i, c: answers.append(c)))
            except DialectRefused as e:
                refusals.append(f"{dialect}: {str(e)[:200]}")
                log.info("%s refused response_format %s; trying the next dialect", self.server_key, dialect)
                continue
            done = answers[-1]
            tokens = {"prompt_tokens": done.prompt_tokens, "completion_tokens": done.completion_tokens}
            if not honoured(done, constraint):
                # accepted and ignored (transformers serve logs "Ignoring unsupported fields"): a constrained
                # reply that ends before max_tokens always parses, so this one was not constrained
                refusals.append(f"{dialect}: accepted, but the reply does not follow the schema")
                log.info("%s ignored response_format %s; trying the next dialect", self.server_key, dialect)
                self._count(requests=1, **tokens)
                continue
            SERVER_DIALECT_MEMORY.set(self.server_key, dialect)
            log.info("%s: structured outputs as %s", self.server_key, dialect)
            self._count(requests=1, constrained=1, **tokens)
            return dialect, False, done
        raise LLMError(f"{self.server_key}: no dialect to try")  # auto's list ends with prompt

    def _cached_dialect(
        self,
        conversations: list[list[Message]],
        settings: DecodingSettings,
        constraint: Constraint,
        candidates: tuple[str, ...],
    ) -> str | None:
        """The dialect an earlier run of this server learned, read from the cache: a resumed run (a new process,
        nothing remembered) sends no probe whose answer is cached, so it sends and counts what an uninterrupted
        run does. A constrained dialect with any answer cached was accepted (an ignored one caches nothing); the
        prompt dialect counts only when every answer is (a prompt key is also that of an unconstrained run)."""
        if self.cache is None:
            return None
        settings_dict = settings.to_dict()
        for dialect in candidates:
            keys = {self._key(c, settings_dict, dialect, constraint) for c in conversations}
            found = len(self.cache.get_many(list(keys)))
            if found == len(keys) or (found and dialect != PROMPT):
                if found < len(keys):
                    SERVER_DIALECT_MEMORY.set(self.server_key, dialect)
                    log.info(
                        "%s: structured outputs as %s (the cache's answers say so)", self.server_key, dialect
                    )
                return dialect
        return None

    def _describe_extra(self) -> dict[str, Any]:
        if len(self.base_urls) > 1:
            return {"base_url": self.base_url, "base_urls": list(self.base_urls)}
        return {"base_url": self.base_url}

    def _candidates(self, avoid: int | None = None) -> tuple[str, ...]:
        """The servers a request may go to, in turn (ties of the least busy go to the first), without `avoid`
        (the one that just failed) if there is another."""
        n, start = len(self.urls), self._turn
        self._turn = (start + 1) % n
        order = [(start + k) % n for k in range(n)]
        return tuple(self.urls[i] for i in ([i for i in order if i != avoid] or order))

    def _headers(self) -> dict[str, str]:
        key = self._api_key
        if key is None:
            names = (self._api_key_env,) if self._api_key_env else API_KEY_ENVS
            key = next((os.environ[n] for n in names if os.environ.get(n)), None)
        return {"Authorization": f"Bearer {key}"} if key else {}

    def _body(
        self,
        messages: list[Message],
        settings: DecodingSettings,
        constraint: Constraint | None = None,
        dialect: str = PROMPT,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "max_tokens": settings.max_new_tokens,
            "temperature": settings.temperature,
            "top_p": settings.top_p,
            "seed": settings.seed,
        }
        if constraint is not None:
            fmt = response_format(dialect, constraint)
            if fmt is not None:
                body["response_format"] = fmt
        return body

    def _complete(
        self,
        conversations: list[list[Message]],
        settings: DecodingSettings,
        on_done: Callable[[int, Completion], None],
    ) -> None:
        run_sync(self._run_bodies([self._body(c, settings) for c in conversations], on_done))

    def _complete_structured(
        self,
        conversations: list[list[Message]],
        settings: DecodingSettings,
        on_done: Callable[[int, Completion], None],
        constraint: Constraint,
        dialect: str,
    ) -> None:
        bodies = [self._body(c, settings, constraint, dialect) for c in conversations]
        try:
            run_sync(self._run_bodies(bodies, on_done))
        except DialectRefused as e:
            raise LLMError(
                f"{e}; the server refused response_format {dialect} (pass --structured auto or prompt)"
            ) from e

    async def _run_bodies(
        self, bodies: list[dict[str, Any]], on_done: Callable[[int, Completion], None]
    ) -> None:
        slots = self.concurrency * len(
            self.urls
        )  # connections; SERVER_SLOTS keeps each server at concurrency
        timeout = self.timeout.connect or DEFAULT_CONNECT_TIMEOUT_S
        async with open_session(slots, timeout, self.deadline, self._headers()) as session:

            async def one(index: int, body: dict[str, Any]) -> None:
                on_done(
                    index, await self._request(session, json.dumps(body).encode(), "response_format" in body)
                )

            tasks = [asyncio.ensure_future(one(i, body)) for i, body in enumerate(bodies)]
            try:
                for finished in asyncio.as_completed(tasks):
                    await finished  # the first failure propagates; finished answers are already cached
            finally:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)

    async def _attempt(
        self, session: aiohttp.ClientSession, url: str, payload: bytes
    ) -> tuple[Answer | None, str]:
        """One POST: (the answer, "") or (None, what went wrong: a connection error, a timeout, the deadline)."""
        import aiohttp

        try:
            return await self._post(session, url, payload), ""
        except asyncio.TimeoutError as e:
            if isinstance(e, aiohttp.ServerTimeoutError):  # connecting (or a read) timed out
                return None, f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
            # the server answers, but too slowly to finish within the deadline
            return None, f"no complete answer within the {self.deadline:g} s deadline (--llm-timeout)"
        except aiohttp.ClientError as e:  # connect errors, dropped connections, a broken answer
            return None, f"{type(e).__name__}: {e}" if str(e) else type(e).__name__

    async def _request(self, session: aiohttp.ClientSession, payload: bytes, formatted: bool) -> Completion:
        return self._parse(await self.answer(session, payload, formatted))

    async def answer(self, session: aiohttp.ClientSession, payload: bytes, formatted: bool = False) -> Answer:
        """POST one request body to the least busy server, retried and bounded as the module docstring says;
        the server's 200 answer, read whole (LLMError or LLMConnectionError otherwise)."""
        started = time.monotonic()
        last_error = ""
        failed: int | None = None
        for attempt in range(self.max_retries + 1):
            wait: float | None = None
            status = 0
            # a slot on the server with the fewest requests in flight (every thread's), waiting while all are full
            url = await SERVER_SLOTS.acquire(self._candidates(avoid=failed), self.concurrency)
            server = self.urls.index(url)
            try:
                response, last_error = await self._attempt(session, url, payload)
            finally:
                SERVER_SLOTS.release(url)
            if response is not None:
                if response.status_code == 200:
                    self._note_attempt(server, None)
                    return response
                status = response.status_code
                excerpt = response.text[:500]
                if formatted and is_refusal(response.status_code, response.text):
                    raise DialectRefused(f"{url} answered HTTP {response.status_code}: {excerpt}")
                if response.status_code not in RETRY_STATUS and response.status_code < 500:
                    raise LLMError(
                        f"{url} answered HTTP {response.status_code} for model {self.model!r}: {excerpt}"
                    )
                last_error = f"HTTP {response.status_code}: {excerpt[:200]}"
                wait = _retry_after(response)
            failed = server
            self._note_attempt(server, last_error, counted=status != 429)
            if len(self.urls) > 1:
                last_error = f"{url}: {last_error}"
            if attempt < self.max_retries:
                delay = min(MAX_BACKOFF_S, self.backoff * 2**attempt) * (1.0 + 0.1 * random.random())
                if wait is not None:  # the server's Retry-After, within the request's own deadline
                    delay = max(delay, min(wait, MAX_BACKOFF_S, self.deadline))
                log.debug(
                    "%s: %s; retry %d/%d in %.2fs", url, last_error, attempt + 1, self.max_retries, delay
                )
                await self.sleep(delay)
        where = ", ".join(self.urls)
        raise LLMConnectionError(
            f"{where}: no answer after {self.max_retries + 1} attempts over {time.monotonic() - started:.1f}s "
            f"(last error: {last_error}); is the server running and is the URL in 'openai:BASE_URL#MODEL' right?",
            url=where,
        )

    async def _post(self, session: aiohttp.ClientSession, url: str, payload: bytes) -> Answer:
        """POST `payload`; the answer read whole, at most `max_response_bytes` of it (LLMOutputError beyond; a
        compressed answer counts unpacked)."""
        async with session.post(url, data=payload) as response:
            declared = response.headers.get("content-length", "")
            if not (declared.isdigit() and int(declared) > self.max_response_bytes):
                if declared.isdigit() and "content-encoding" not in response.headers:
                    return Answer(response.status, response.headers, await response.read())
                chunks, size = [], 0
                async for chunk in response.content.iter_any():
                    size += len(chunk)
                    if size > self.max_response_bytes:
                        break
                    chunks.append(chunk)
                else:
                    return Answer(response.status, response.headers, b"".join(chunks))
        raise LLMOutputError(
            f"{url}: the answer passed {self.max_response_bytes:,} bytes (model {self.model!r}); refused unread "
            "(raise the limit with --llm-max-response-bytes if such answers are expected)",
            raw="",
            error=f"answer over {self.max_response_bytes} bytes",
            attempts=1,
        )

    def _parse(self, response: Answer | httpx.Response) -> Completion:
        try:
            data = response.json()
            choice = data["choices"][0]
            content = choice["message"].get("content")
            usage = data.get("usage") or {}
            if not isinstance(usage, dict):
                raise TypeError(f"usage is {type(usage).__name__}, expected an object")
        except (ValueError, KeyError, IndexError, TypeError, AttributeError, RecursionError) as e:
            raise LLMError(
                f"{self.url}: the answer is not an OpenAI chat completion ({type(e).__name__}: {str(e)[:200]}): "
                f"{response.text[:300]}"
            ) from None
        if content is not None and not isinstance(content, str):
            raw = response.text[:2000]
            raise LLMOutputError(
                f"{self.url}: the completion's message.content is {type(content).__name__}, expected a string "
                f"(model {self.model!r}): {raw[:300]}",
                raw=raw,
                error=f"message.content is {type(content).__name__}, not a string",
                attempts=1,
            )
        finish = choice.get("finish_reason")
        return Completion(
            text=content or "",
            prompt_tokens=self._token_count(usage, "prompt_tokens"),
            completion_tokens=self._token_count(usage, "completion_tokens"),
            finish_reason=finish if isinstance(finish, str) else None,
        )

    def _token_count(self, usage: dict[str, Any], key: str) -> int:
        """A usage figure as a non-negative integer (0 when the server leaves it out); LLMError otherwise."""
        value = usage.get(key)
        if value is None:
            return 0
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < MAX_TOKEN_COUNT:
            raise LLMError(
                f"{self.url}: usage.{key} is {str(value)[:40]!r}; expected a non-negative integer token count "
                f"below {MAX_TOKEN_COUNT:,} (model {self.model!r})"
            )
        return value
