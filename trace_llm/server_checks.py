"""What the openai backend checks about its servers: the error-rate abort over the last attempts, the preflight
request before a run, and what each server says about itself (for the run manifest). `ServerChecks` is a mixin
of OpenAILLM (trace_llm.openai_backend), which supplies the attributes it names."""

from __future__ import annotations

import collections
from collections.abc import Callable
from typing import Any

import httpx

from trace_llm.cache import Completion
from trace_llm.errors import ErrorRateExceeded, LLMConfigError, LLMConnectionError
from trace_llm.settings import DecodingSettings

DEFAULT_MAX_ERROR_RATE = 0.10  # share of failed attempts in the window that stops a run
DEFAULT_ERROR_WINDOW = 100  # attempts the error rate is measured over
PREFLIGHT_TIMEOUT_S = 60.0  # a preflight request waits at most this long (or the request deadline if shorter)
INFO_TIMEOUT_S = 5.0  # each best-effort look at what a server says about itself


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
    _parse: Callable[[httpx.Response], Completion]

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
        that does not answer it. Returns, per server, what it reports about itself (`server_info`)."""
        messages = [{"role": "user", "content": "Reply with the word: ready"}]
        body = self._body(messages, self.settings.replace(max_new_tokens=1))
        timeout = httpx.Timeout(min(self.deadline, PREFLIGHT_TIMEOUT_S), connect=self.timeout.connect)
        report = []
        with httpx.Client(timeout=timeout, headers=self._headers()) as client:
            for base, url in zip(self.base_urls, self.urls, strict=True):
                try:
                    response = client.post(url, json=body)
                except httpx.TransportError as e:
                    raise LLMConnectionError(
                        f"preflight: {url} did not answer ({type(e).__name__}: {e}); is the server running and is "
                        "the URL in 'openai:BASE_URL#MODEL' right?",
                        url=url,
                    ) from None
                if response.status_code != 200:
                    raise LLMConnectionError(
                        f"preflight: {url} answered HTTP {response.status_code} for model {self.model!r}: "
                        f"{response.text[:300]}",
                        url=url,
                    )
                self._parse(response)  # the answer must be a chat completion
                report.append({"url": base, **server_info(client, base, response)})
        return report


def server_info(
    client: httpx.Client, base_url: str, response: httpx.Response | None = None
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
        try:
            answer = client.get(url, timeout=INFO_TIMEOUT_S)
            data = answer.json() if answer.status_code == 200 else None
        except (httpx.HTTPError, ValueError):
            continue
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
