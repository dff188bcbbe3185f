"""A scripted HTTP server on 127.0.0.1 (raw sockets, in threads) for the faults of an external system: replies
dripped one piece at a time (headers too), replies without a Content-Length, huge replies, and a server that goes away.

`respond(body) -> Reply` decides each answer from the POSTed JSON body. `stop()` closes the listening socket, so
the next connection is refused (what an unreachable system looks like); `start()` listens again on the same port.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any


@dataclass
class Reply:
    status: int = 200
    body: bytes | Iterator[bytes] = b"{}"  # bytes, or pieces streamed as they come (no Content-Length then)
    drip: float = 0.0  # seconds between pieces of `piece` bytes
    piece: int = 1
    length: bool = True  # send a Content-Length header (bytes bodies only)
    stop_server: bool = False  # stop listening before answering: the next request finds nobody
    head_drip: float = (
        0.0  # seconds between the bytes of the headers (and of a 600-byte X-Pad header among them)
    )


def json_reply(payload: Any, **options: Any) -> Reply:
    return Reply(body=json.dumps(payload).encode(), **options)


class ScriptedHTTP:
    def __init__(self, respond: Callable[[dict[str, Any]], Reply]):
        self.respond = respond
        self.bodies: list[dict[str, Any]] = []
        self.port = 0
        self._sock: socket.socket | None = None
        self._closing = threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> ScriptedHTTP:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self.port))
        sock.listen(16)
        sock.settimeout(0.05)
        self.port = sock.getsockname()[1]
        self._sock = sock
        self._closing.clear()
        threading.Thread(target=self._accept, args=(sock,), daemon=True).start()
        return self

    def stop(self) -> None:
        self._closing.set()
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __enter__(self) -> ScriptedHTTP:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _accept(self, sock: socket.socket) -> None:
        while not self._closing.is_set():
            try:
                conn, _ = sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
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
            parsed = json.loads(body or b"{}")
            self.bodies.append(parsed)
            reply = self.respond(parsed)
            if reply.stop_server:
                self.stop()
            try:
                self._send(conn, reply)
            except OSError:  # the client gave up
                return

    def _send(self, conn: socket.socket, reply: Reply) -> None:
        headers = f"HTTP/1.1 {reply.status} X\r\nContent-Type: application/json\r\nConnection: close\r\n"
        if isinstance(reply.body, bytes) and reply.length:
            headers += f"Content-Length: {len(reply.body)}\r\n"
        if reply.head_drip:
            headers += f"X-Pad: {'a' * 600}\r\n"
        head = (headers + "\r\n").encode()
        for i in range(len(head) if reply.head_drip else 0):
            if self._closing.is_set():
                return
            conn.sendall(head[i : i + 1])
            time.sleep(reply.head_drip)
        if not reply.head_drip:
            conn.sendall(head)
        if isinstance(reply.body, bytes):
            pieces: Iterator[bytes] = (
                reply.body[i : i + reply.piece] for i in range(0, len(reply.body), reply.piece)
            )
            if not reply.drip:
                pieces = iter([reply.body])
        else:
            pieces = reply.body
        for piece in pieces:
            if self._closing.is_set() and not reply.stop_server:
                return
            conn.sendall(piece)
            if reply.drip:
                time.sleep(reply.drip)
