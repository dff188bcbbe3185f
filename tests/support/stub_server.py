"""A small scripted OpenAI-compatible HTTP server (a real server on 127.0.0.1, run in a thread).

Each POST to /v1/chat/completions takes the next scripted reply, or asks `responder(body)` when the script is
empty. A reply is (status, payload[, headers]): a str payload becomes a chat completion with that content, a
dict is sent as JSON, bytes are sent raw.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = tuple  # (status, payload) or (status, payload, headers)


def completion(content: str, prompt_tokens: int = 11, completion_tokens: int = 5) -> dict[str, Any]:
    return {
        "id": "stub",
        "object": "chat.completion",
        "model": "stub",
        "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}
        ],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens},
    }


def echo(body: dict[str, Any]) -> Reply:
    return (200, "echo: " + body["messages"][-1]["content"])


class StubOpenAI:
    def __init__(self, responder: Callable[[dict[str, Any]], Reply] = echo, delay: float = 0.0):
        self.responder = responder
        self.script: list[Reply] = []
        self.delay = delay
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                return None

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                with stub._lock:
                    stub.requests.append(body)
                    stub.headers.append(dict(self.headers))
                    stub.in_flight += 1
                    stub.max_in_flight = max(stub.max_in_flight, stub.in_flight)
                    reply = stub.script.pop(0) if stub.script else None
                done = False
                try:
                    if reply is None:
                        reply = stub.responder(body)
                    if stub.delay:
                        time.sleep(stub.delay)
                    status, payload, *rest = reply
                    headers = rest[0] if rest else {}
                    if isinstance(payload, str):
                        payload = completion(payload)
                    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for key, value in headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    # the request stops counting before its last bytes go out: once the client has them it may
                    # send its next request at once, before this thread would get to run again
                    done = True
                    with stub._lock:
                        stub.in_flight -= 1
                    self.wfile.write(data)
                finally:
                    if not done:
                        with stub._lock:
                            stub.in_flight -= 1

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def spec(self, model: str = "stub-model") -> str:
        return f"openai:{self.url}#{model}"

    def __enter__(self) -> StubOpenAI:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
