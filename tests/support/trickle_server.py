"""An HTTP server that answers every POST with a valid chat completion, but one byte every `interval` seconds:
the kind of server that held a request forever before requests had an overall deadline."""

from __future__ import annotations

import json
import socket
import threading
import time

BODY = json.dumps(
    {
        "id": "trickle",
        "object": "chat.completion",
        "model": "m",
        "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "x" * 200}}
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1},
    }
).encode()


class TrickleServer:
    def __init__(self, interval: float = 0.2):
        self.interval = interval
        self.requests = 0
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}/v1"

    def spec(self, model: str = "m") -> str:
        return f"openai:{self.url}#{model}"

    def _serve(self) -> None:
        self._sock.settimeout(0.1)
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except (TimeoutError, OSError):
                continue
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                data += chunk
            head, _, body = data.partition(b"\r\n\r\n")
            length = next(
                (
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                ),
                0,
            )
            while len(body) < length:
                body += conn.recv(65536)
            self.requests += 1
            try:
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    + f"Content-Length: {len(BODY)}\r\n\r\n".encode()
                )
                for i in range(len(BODY)):
                    if self._stop.is_set():
                        return
                    conn.sendall(BODY[i : i + 1])
                    time.sleep(self.interval)
            except OSError:  # the client gave up
                return

    def __enter__(self) -> TrickleServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._sock.close()
