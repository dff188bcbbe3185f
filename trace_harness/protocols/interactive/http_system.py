"""An external system behind the small HTTP contract of docs/interactive.md: POST the turn row plus the
candidates' names as JSON, get a prediction record back (`HTTPSystem`; the rules for a lost turn are in
`trace_harness.protocols.interactive.systems`' docstring)."""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from trace_bench.errors import UsageError
from trace_dataset.constants import SYSTEM_ACTIONS
from trace_dataset.kb.store import KnowledgeBase
from trace_harness.protocols.interactive.reply import (
    DEFAULT_CONCURRENCY,
    DEFAULT_MAX_REPLY_BYTES,
    DEFAULT_TIMEOUT_S,
    System,
    SystemReply,
    SystemUnreachable,
    check_reply,
)
from trace_metrics.lib.predictions import normalize_citations

log = logging.getLogger(__name__)

HTTP_PROTOCOL = "trace-bench-interactive/1"


def check_system_url(url: str) -> str:
    """`url` when httpx can send requests to it; UsageError naming --system otherwise (before any output)."""
    import httpx

    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError, TypeError) as e:
        raise UsageError(f"--system {url!r}: not a valid URL ({e})") from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise UsageError(f"--system {url!r}: expected http(s)://HOST[:PORT]/PATH")
    return url


def candidate_cards(kb: KnowledgeBase, ids: Sequence[str]) -> list[dict[str, Any]]:
    """What an external system is told about each candidate (no review text)."""
    out = []
    for pid in ids:
        p = kb.pois[pid]
        out.append(
            {
                "business_id": pid,
                "name": p.name,
                "address": p.address,
                "categories": list(p.categories),
                "stars": p.stars,
                "price": p.price,
                "latitude": p.latitude,
                "longitude": p.longitude,
            }
        )
    return out


def http_request(row: Mapping[str, Any], kb: KnowledgeBase) -> dict[str, Any]:
    """The JSON body POSTed for one system turn (docs/interactive.md, "The HTTP contract")."""
    return {
        "protocol": HTTP_PROTOCOL,
        "dialogue_id": row["dialogue_id"],
        "turn_id": int(row["turn_id"]),
        "action": row["action"],
        "scenario": {k: row["scenario"][k] for k in ("city", "poi_type")},
        "pool": row.get("pool", "closed"),
        "history": [dict(t) for t in row["history"]],
        "candidate_poi_ids": list(row["candidate_poi_ids"]),
        "rejected_poi_ids": list(row["rejected_poi_ids"]),
        "candidates": candidate_cards(kb, row["candidate_poi_ids"]),
    }


def parse_http_reply(row: Mapping[str, Any], payload: Any) -> SystemReply:
    """A reply body -> SystemReply, or a lost turn ("garbage") naming what was wrong."""
    action = row["action"]
    if not isinstance(payload, dict):
        return SystemReply.lost_turn(
            action, "garbage", f"reply is {type(payload).__name__}, expected a JSON object"
        )
    ranked = payload.get("ranked_poi_ids")
    if not isinstance(ranked, list) or not all(isinstance(p, str) and p for p in ranked):
        return SystemReply.lost_turn(action, "garbage", "ranked_poi_ids is not a list of non-empty strings")
    response = payload.get("response")
    if not isinstance(response, str):
        return SystemReply.lost_turn(action, "garbage", "response is not a string")
    try:
        citations = normalize_citations(payload.get("citations", {}))
    except ValueError as e:
        return SystemReply.lost_turn(action, "garbage", f"citations: {e}")
    own = payload.get("action", action)
    if own not in SYSTEM_ACTIONS:
        return SystemReply.lost_turn(action, "garbage", f"action {own!r} is not one of {SYSTEM_ACTIONS}")
    scores = payload.get("scores")  # optional: {business_id: number}, the ties of the ranking (equal numbers)
    if scores is not None and (
        not isinstance(scores, dict)
        or not all(
            isinstance(k, str)
            and isinstance(v, (int, float))
            and not isinstance(v, bool)
            and math.isfinite(v)
            for k, v in scores.items()
        )
    ):
        return SystemReply.lost_turn(
            action, "garbage", "scores is not an object of finite numbers by business_id"
        )
    return check_reply(
        row,
        SystemReply(
            own, list(ranked), response, dict(citations), {"http_action": own != action}, scores or None
        ),
    )


class _LostTurn(Exception):
    def __init__(self, reason: str, detail: str):
        super().__init__(detail)
        self.reason, self.detail = reason, detail


class HTTPSystem(System):
    """An external system behind the HTTP contract (one POST per system turn, `concurrency` in flight).

    Each reply is read as a stream: it is lost ("timeout") when it is not complete `timeout` seconds after the
    request went out, and ("garbage") as soon as it passes `max_reply_bytes`."""

    def __init__(
        self,
        url: str,
        kb: KnowledgeBase,
        timeout: float = DEFAULT_TIMEOUT_S,
        concurrency: int = DEFAULT_CONCURRENCY,
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
    ):
        import httpx

        if not 0 < timeout < float("inf") or concurrency < 1 or max_reply_bytes < 1:
            raise ValueError(
                f"need 0 < timeout < inf, concurrency >= 1 and max_reply_bytes >= 1, got {timeout}, "
                f"{concurrency}, {max_reply_bytes}"
            )
        self.url = check_system_url(url)
        self.kb, self.timeout, self.concurrency, self.max_reply_bytes = (
            kb,
            timeout,
            concurrency,
            max_reply_bytes,
        )
        self.name = url
        self._client = httpx.Client(timeout=httpx.Timeout(timeout), follow_redirects=False)

    def _one(self, row: Mapping[str, Any]) -> SystemReply:
        import httpx

        action = row["action"]
        try:
            status, body = self._post(http_request(row, self.kb))
        except _LostTurn as e:
            return SystemReply.lost_turn(action, e.reason, e.detail)
        except httpx.ConnectError as e:
            raise SystemUnreachable(
                f"--system {self.url}: cannot connect ({e}); is the system running? The "
                "finished dialogues are kept: rerun the same command to resume"
            ) from None
        except httpx.TimeoutException as e:
            return SystemReply.lost_turn(
                action, "timeout", f"no reply within {self.timeout:g} s ({type(e).__name__})"
            )
        except httpx.HTTPError as e:
            return SystemReply.lost_turn(action, "error", f"{type(e).__name__}: {e}")
        text = body.decode("utf-8", errors="replace")
        if status != 200:
            return SystemReply.lost_turn(action, "error", f"HTTP {status}: {text[:200]}")
        try:
            payload = json.loads(body)
        except RecursionError:
            return SystemReply.lost_turn(action, "garbage", "reply is JSON nested too deeply")
        except (json.JSONDecodeError, UnicodeDecodeError, ValueError):
            return SystemReply.lost_turn(action, "garbage", f"reply is not JSON: {text[:200]!r}")
        try:
            return parse_http_reply(row, payload)
        except RecursionError:
            return SystemReply.lost_turn(action, "garbage", "reply is JSON nested too deeply")

    def _post(self, body: dict[str, Any]) -> tuple[int, bytes]:
        """(status, reply bytes) of one POST, read within the deadline and the size cap (or _LostTurn). The
        request runs in a thread of its own that the turn waits for at most `timeout` seconds, so the deadline
        covers connecting and the headers too (a server dripping its headers byte by byte never trips a read
        timeout); a request given up on ends when the server does or when the system is closed."""
        deadline = time.monotonic() + self.timeout
        late = f"the reply was not complete within {self.timeout:g} s (--timeout bounds the whole reply)"
        outcome: dict[str, Any] = {}

        def send() -> None:
            try:
                outcome["reply"] = self._read(body, deadline, late)
            except BaseException as e:  # handed to the turn's thread, which raises it
                outcome["error"] = e

        worker = threading.Thread(target=send, name="http-system-request", daemon=True)
        worker.start()
        worker.join(self.timeout)
        if worker.is_alive():
            raise _LostTurn("timeout", late)
        if "error" in outcome:
            raise outcome["error"]
        reply: tuple[int, bytes] = outcome["reply"]
        return reply

    def _read(self, body: dict[str, Any], deadline: float, late: str) -> tuple[int, bytes]:
        with self._client.stream("POST", self.url, json=body) as r:
            declared = r.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > self.max_reply_bytes:
                raise _LostTurn(
                    "garbage",
                    f"the reply announces {int(declared):,} bytes; the limit is "
                    f"{self.max_reply_bytes:,} (--max-reply-bytes)",
                )
            chunks, size = [], 0
            for chunk in r.iter_bytes():
                size += len(chunk)
                if size > self.max_reply_bytes:
                    raise _LostTurn(
                        "garbage", f"the reply passed {self.max_reply_bytes:,} bytes (--max-reply-bytes)"
                    )
                if time.monotonic() > deadline:
                    raise _LostTurn("timeout", late)
                chunks.append(chunk)
            if time.monotonic() > deadline:
                raise _LostTurn("timeout", late)
            return r.status_code, b"".join(chunks)

    def respond(self, rows: Sequence[dict[str, Any]]) -> list[SystemReply]:
        if len(rows) <= 1 or self.concurrency == 1:
            return [self._one(r) for r in rows]
        with ThreadPoolExecutor(min(self.concurrency, len(rows))) as pool:
            return list(pool.map(self._one, rows))

    def describe(self) -> dict[str, Any]:
        return {
            "system": self.url,
            "kind": "http",
            "protocol": HTTP_PROTOCOL,
            "timeout_s": self.timeout,
            "concurrency": self.concurrency,
            "max_reply_bytes": self.max_reply_bytes,
        }

    def close(self) -> None:
        self._client.close()
