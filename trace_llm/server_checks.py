"""What the openai backend checks about its servers: the error-rate abort over the last attempts, the preflight
request before a run, and what each server says about itself (for the run manifest). `ServerChecks` is a mixin
of OpenAILLM (trace_llm.openai_backend), which supplies the attributes it names."""

from __future__ import annotations

import asyncio
import collections
import json
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

import httpx

from trace_llm.cache import Completion
from trace_llm.errors import ErrorRateExceeded, LLMConfigError, LLMConnectionError
from trace_llm.http_clients import Answer, open_session, run_sync
from trace_llm.settings import DecodingSettings

if TYPE_CHECKING:
    import aiohttp

DEFAULT_MAX_ERROR_RATE = 0.10  # share of failed attempts in the window that stops a run
DEFAULT_ERROR_WINDOW = 100  # attempts the error rate is measured over
PREFLIGHT_TIMEOUT_S = 60.0  # a preflight request waits at most this long (or the request deadline if shorter)
INFO_TIMEOUT_S = 5.0  # each best-effort look at what a server says about itself, all of it
INFO_MAX_BYTES = 2**20  # of such a look's answer


class ServerChecks:
    """The error-rate abort and the preflight of a backend with servers at `urls` (see the module docstring)."""

    urls: list[str]
    base_urls: list[str]
    model: str
    settings: DecodingSettings
    deadline: float
    timeout: httpx.Timeout
    _body: Callable[..., dict[str, Any]]
    _headers: Callable[[], dict[str, str]]
    _parse: Callable[[Answer], Completion]
    _post: Callable[[aiohttp.ClientSession, str, bytes], Coroutine[Any, Any, Answer]]

    # ---- the error-rate abort ---------------------------------------------------------------------------
    def _init_error_window(self, max_error_rate: float | None, error_window: int) -> None:
        if max_error_rate is not None and (
            isinstance(max_error_rate, bool)
            or not isinstance(max_error_rate, (int, float))
            or not 0.0 <= max_error_rate <= 1.0
        ):
            raise LLMConfigError(
                f"max_error_rate={max_error_rate!r}: expected a share in [0, 1] (1 or None: no abort)"
            )
        if isinstance(error_window, bool) or not isinstance(error_window, int) or error_window < 1:
            raise LLMConfigError(f"error_window={error_window!r}: expected a positive number of attempts")
        self.max_error_rate = None if max_error_rate is None else float(max_error_rate)
        self.error_window = error_window
        self._attempts: collections.deque[tuple[int, str | None]] = collections.deque(maxlen=error_window)

    def _note_attempt(self, server: int, error: str | None, counted: bool = True) -> None:
        """Record one attempt's outcome (error None: answered); raise ErrorRateExceeded past the limit."""
        if not counted or self.max_error_rate is None:
            return
        self._attempts.append((server, error))
        if len(self._attempts) < self.error_window:
            return
        failures = [(i, e) for i, e in self._attempts if e is not None]
        if len(failures) <= self.max_error_rate * self.error_window:
            return
        per_server = collections.Counter(i for i, _ in failures)
        where = "; ".join(f"{self.urls[i]}: {n} failed" for i, n in sorted(per_server.items()))
        raise ErrorRateExceeded(
            f"stopping: {len(failures)} of the last {self.error_window} attempts failed "
            f"({len(failures) / self.error_window:.0%}, the limit is {self.max_error_rate:.0%}) for model "
            f"{self.model!r} ({where}; last error: {failures[-1][1]}). Answers received so far are cached: fix or "
            "replace the server and rerun the same command to resume"
        )

    # ---- preflight and what the servers say about themselves --------------------------------------------
    def preflight(self) -> list[dict[str, Any]]:
        """Send one one-token request to every server before a run; LLMConnectionError names the first server
        that does not answer it. Returns, per server, what it reports about itself (`server_info`). Each request
        has a deadline for the whole of it (connecting, headers, answer), so a server that drips even its
        headers is named, not waited on."""
        return run_sync(self._preflight())  # type: ignore[no-any-return]

    async def _preflight(self) -> list[dict[str, Any]]:
        import aiohttp

        messages = [{"role": "user", "content": "Reply with the word: ready"}]
        payload = json.dumps(self._body(messages, self.settings.replace(max_new_tokens=1))).encode()
        deadline = min(self.deadline, PREFLIGHT_TIMEOUT_S)
        report = []
        async with open_session(1, self.timeout.connect or deadline, deadline, self._headers()) as session:
            for base, url in zip(self.base_urls, self.urls, strict=True):
                try:
                    response = await self._post(session, url, payload)
                except (asyncio.TimeoutError, aiohttp.ClientError) as e:
                    why = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
                    if isinstance(e, asyncio.TimeoutError) and not isinstance(e, aiohttp.ServerTimeoutError):
                        why = f"no complete answer within {deadline:g} s"
                    raise LLMConnectionError(
                        f"preflight: {url} did not answer ({why}); is the server running and is the URL in "
                        "'openai:BASE_URL#MODEL' right?",
                        url=url,
                    ) from None
                if response.status_code != 200:
                    raise LLMConnectionError(
                        f"preflight: {url} answered HTTP {response.status_code} for model {self.model!r}: "
                        f"{response.text[:300]}",
                        url=url,
                    )
                self._parse(response)  # the answer must be a chat completion
                report.append({"url": base, **await server_info(session, base, response)})
        return report


async def _get_json(session: aiohttp.ClientSession, url: str) -> Any:
    """GET `url` within INFO_TIMEOUT_S in all, at most INFO_MAX_BYTES read; its JSON, or None."""
    import aiohttp

    try:
        async with session.get(url, timeout=aiohttp.ClientTimeout(total=INFO_TIMEOUT_S)) as answer:
            if answer.status != 200:
                return None
            data = await answer.content.read(INFO_MAX_BYTES + 1)
            return None if len(data) > INFO_MAX_BYTES else json.loads(data)
    except (asyncio.TimeoutError, aiohttp.ClientError, ValueError, RecursionError):
        return None


async def server_info(
    session: aiohttp.ClientSession, base_url: str, response: Answer | None = None
) -> dict[str, Any]:
    """What an OpenAI-compatible server says about itself, best effort (nothing here ever fails a run): the
    models it serves and their `owned_by` (`GET /models`; "vllm" on vLLM), its version (vLLM's `GET /version`),
    its `server` header and the `system_fingerprint` of a completion."""
    info: dict[str, Any] = {}
    if response is not None:
        if response.headers.get("server"):
            info["server_header"] = response.headers["server"]
        try:
            fingerprint = response.json().get("system_fingerprint")
        except (ValueError, AttributeError):
            fingerprint = None
        if isinstance(fingerprint, str):
            info["system_fingerprint"] = fingerprint
    root = base_url.removesuffix("/v1")
    for key, url in (("models", f"{base_url}/models"), ("version", f"{root}/version")):
        data = await _get_json(session, url)
        if key == "models" and isinstance(data, dict) and isinstance(data.get("data"), list):
            entries = [m for m in data["data"] if isinstance(m, dict)]
            info["models"] = [str(m.get("id")) for m in entries][:20]
            owners = sorted({str(m["owned_by"]) for m in entries if m.get("owned_by")})
            if owners:
                info["owned_by"] = owners
        elif key == "version" and isinstance(data, dict) and isinstance(data.get("version"), str):
            info["version"] = data["version"]
    engine = next(
        (o for o in info.get("owned_by", ()) if o.lower() in ("vllm", "sglang", "tgi", "llamacpp")), None
    )
    if engine is None and "version" in info:
        engine = "vllm"  # GET /version answering {"version": ...} is vLLM's
    if engine is not None:
        info["engine"] = engine
    return info
