"""Systems a simulated traveler can talk to, behind one interface: turn rows in, replies out (batched).

- `PipelineSystem`: any registered pipeline, unchanged (`baselines.pipeline(name, kb=...)`), fed the same turn
  rows `trace_dataset.views.turn_rows` builds from the live conversation.
- `HTTPSystem`: an external system behind the small HTTP contract of docs/interactive.md (POST the turn row
  plus the candidates' names as JSON, get a prediction record back).
- `ChatSystem`: an external system behind an OpenAI-compatible chat endpoint (`openai:BASE_URL#MODEL`,
  through the LLM layer): the conversation goes out as chat messages, the ranking is read from the reply
  (pool POIs in order of first mention by name).

An external reply that times out, is not a well-formed answer ("garbage"), or ranks POIs outside the turn's
candidate pool loses that turn: it is logged with an empty ranking, an empty response and the reason in the
prediction's meta, counted in `lost`, and the conversation goes on. The same check applies to pipelines.
"garbage" includes a reply over `max_reply_bytes` (read as a stream and dropped once it passes the cap), text
that is not valid Unicode (a lone surrogate such as "\ud800", which no next request could carry), JSON nested
too deeply, and a turn whose prediction row would pass the one-line limit of `trace-bench submit`. An HTTP
reply must be complete within `timeout` seconds (the whole reply, not each byte; a server that drips its
answer is cut off at the first read past the deadline). A system that cannot be reached at all (connection
refused, unknown host; for a chat endpoint: still failing after the LLM layer's bounded retries) stops the run
with SystemUnreachable: the finished dialogues are kept and the same command resumes.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from baselines.base import TracePipeline
from baselines.toolkit.state import phrase_pattern
from trace_bench.errors import TraceBenchError, UsageError
from trace_dataset.constants import MAX_PREDICTION_LINE_BYTES, SYSTEM_ACTIONS
from trace_dataset.io import dumps
from trace_dataset.kb.store import KnowledgeBase
from trace_llm.prompts import Prompt, load_prompt
from trace_metrics.lib.predictions import normalize_citations

log = logging.getLogger(__name__)

HTTP_PROTOCOL = "trace-bench-interactive/1"
DEFAULT_TIMEOUT_S = 30.0
DEFAULT_CONCURRENCY = 8
DEFAULT_MAX_REPLY_BYTES = MAX_PREDICTION_LINE_BYTES  # a reply longer than the row it becomes could not be submitted
LOST_REASONS: tuple[str, ...] = ("timeout", "error", "garbage", "out_of_pool")
CHAT_PROMPT_FILE = "chat_system_v1.txt"


class SystemUnreachable(TraceBenchError):
    """The system under test cannot be reached: the run stops (resumable) instead of losing every turn."""


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


def not_unicode(*texts: str) -> bool:
    """Whether a text holds a lone surrogate (valid in a Python str and in JSON escapes, not in UTF-8)."""
    try:
        for text in texts:
            text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


@dataclass
class SystemReply:
    """One system turn as the loop records it."""

    action: str
    ranked_poi_ids: list[str]
    response: str
    citations: dict[str, str]
    meta: dict[str, Any] = field(default_factory=dict)
    scores: Mapping[str, Any] | None = None  # the system's scores, when known (tie groups of the turn metrics)
    lost: str | None = None  # why the turn was lost (LOST_REASONS), None when it counts

    @classmethod
    def lost_turn(cls, action: str, reason: str, detail: str) -> SystemReply:
        if reason not in LOST_REASONS:
            raise ValueError(f"unknown lost-turn reason {reason!r}; expected one of {LOST_REASONS}")
        return cls(action, [], "", {}, {"lost": reason, "detail": detail[:300]}, None, reason)


def check_reply(row: Mapping[str, Any], reply: SystemReply) -> SystemReply:
    """The reply, or a lost turn when it ranks POIs outside the row's candidates (or ranks one twice), holds
    text that is not valid Unicode, or would make a prediction row over the submission limit."""
    ranked = reply.ranked_poi_ids
    if not_unicode(reply.response, *ranked, *reply.citations, *reply.citations.values()):
        return SystemReply.lost_turn(reply.action, "garbage", "the reply holds a lone surrogate (not valid Unicode)")
    size = len(dumps({"ranked_poi_ids": ranked, "response": reply.response, "citations": reply.citations}).encode())
    if size > MAX_PREDICTION_LINE_BYTES:
        return SystemReply.lost_turn(reply.action, "garbage", f"the reply makes a prediction row of {size:,} bytes; "
                                     f"the limit is {MAX_PREDICTION_LINE_BYTES:,} (what trace-bench submit accepts)")
    pool = set(row["candidate_poi_ids"])
    outside = [p for p in ranked if p not in pool]
    if outside:
        return SystemReply.lost_turn(reply.action, "out_of_pool", f"ranked {len(outside)} POI(s) outside the pool: {outside[:3]}")
    if len(set(ranked)) != len(ranked):
        return SystemReply.lost_turn(reply.action, "garbage", "ranked_poi_ids lists a POI more than once")
    return reply


class System:
    """Interface: `respond(rows) -> replies` (one per row, in order) and `describe()`."""

    name: str = ""
    # False for a system that carries state across dialogues: the loop then runs its dialogues one at a time,
    # in corpus order, instead of in lockstep (a registered pipeline says so itself; see PipelineSystem).
    session_isolated: bool = True

    def respond(self, rows: Sequence[dict[str, Any]]) -> list[SystemReply]:
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        return {"system": self.name}

    def close(self) -> None:
        return None


class PipelineSystem(System):
    """A registered pipeline, called through its contract (`pipe(rows)`).

    With `tie_scores`, the scores behind each ranking that the pipeline reports (its outputs' `scores`,
    `baselines.base` "Ties": every non-LLM baseline, SnipRec and its comparison systems, the LLM baselines'
    completed rankings) give the tie groups of the turn metrics; a pipeline that reports none is taken as a
    strict order (its unranked candidates still tie at the end).
    """

    def __init__(self, pipe: TracePipeline, tie_scores: bool = True):
        self.pipe = pipe
        self.name = pipe.name
        self.session_isolated = bool(pipe.session_isolated)
        self.tie_scores = tie_scores

    def respond(self, rows: Sequence[dict[str, Any]]) -> list[SystemReply]:
        recorded: dict[tuple[str, int], Any] = {}
        self.pipe.record_scores = recorded if self.tie_scores else None
        try:
            preds = list(self.pipe(rows))
        finally:
            self.pipe.record_scores = None
        out = []
        for row, p in zip(rows, preds, strict=True):
            scores = recorded.get((p["dialogue_id"], p["turn_id"])) or None
            reply = SystemReply(row["action"], list(p["ranked_poi_ids"]), p["response"], dict(p["citations"]),
                                dict(p.get("meta") or {}), scores)
            out.append(check_reply(row, reply))
        return out

    def describe(self) -> dict[str, Any]:
        return {"system": self.name, "kind": "pipeline", **self.pipe.describe()}


def candidate_cards(kb: KnowledgeBase, ids: Sequence[str]) -> list[dict[str, Any]]:
    """What an external system is told about each candidate (no review text)."""
    out = []
    for pid in ids:
        p = kb.pois[pid]
        out.append({"business_id": pid, "name": p.name, "address": p.address, "categories": list(p.categories),
                    "stars": p.stars, "price": p.price, "latitude": p.latitude, "longitude": p.longitude})
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
        return SystemReply.lost_turn(action, "garbage", f"reply is {type(payload).__name__}, expected a JSON object")
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
    if scores is not None and (not isinstance(scores, dict) or not all(
            isinstance(k, str) and isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
            for k, v in scores.items())):
        return SystemReply.lost_turn(action, "garbage", "scores is not an object of finite numbers by business_id")
    return check_reply(row, SystemReply(own, list(ranked), response, dict(citations), {"http_action": own != action},
                                        scores or None))


class _LostTurn(Exception):
    def __init__(self, reason: str, detail: str):
        super().__init__(detail)
        self.reason, self.detail = reason, detail


class HTTPSystem(System):
    """An external system behind the HTTP contract (one POST per system turn, `concurrency` in flight).

    Each reply is read as a stream: it is lost ("timeout") when it is not complete `timeout` seconds after the
    request went out, and ("garbage") as soon as it passes `max_reply_bytes`."""

    def __init__(self, url: str, kb: KnowledgeBase, timeout: float = DEFAULT_TIMEOUT_S,
                 concurrency: int = DEFAULT_CONCURRENCY, max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES):
        import httpx

        if not 0 < timeout < float("inf") or concurrency < 1 or max_reply_bytes < 1:
            raise ValueError(f"need 0 < timeout < inf, concurrency >= 1 and max_reply_bytes >= 1, got {timeout}, "
                             f"{concurrency}, {max_reply_bytes}")
        self.url = check_system_url(url)
        self.kb, self.timeout, self.concurrency, self.max_reply_bytes = kb, timeout, concurrency, max_reply_bytes
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
            raise SystemUnreachable(f"--system {self.url}: cannot connect ({e}); is the system running? The "
                                    "finished dialogues are kept: rerun the same command to resume") from None
        except httpx.TimeoutException as e:
            return SystemReply.lost_turn(action, "timeout", f"no reply within {self.timeout:g} s ({type(e).__name__})")
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
        """(status, reply bytes) of one POST, read within the deadline and the size cap (or _LostTurn)."""
        deadline = time.monotonic() + self.timeout
        late = f"the reply was not complete within {self.timeout:g} s (--timeout bounds the whole reply)"
        with self._client.stream("POST", self.url, json=body) as r:
            declared = r.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > self.max_reply_bytes:
                raise _LostTurn("garbage", f"the reply announces {int(declared):,} bytes; the limit is "
                                f"{self.max_reply_bytes:,} (--max-reply-bytes)")
            chunks, size = [], 0
            for chunk in r.iter_bytes():
                size += len(chunk)
                if size > self.max_reply_bytes:
                    raise _LostTurn("garbage", f"the reply passed {self.max_reply_bytes:,} bytes (--max-reply-bytes)")
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
        return {"system": self.url, "kind": "http", "protocol": HTTP_PROTOCOL, "timeout_s": self.timeout,
                "concurrency": self.concurrency, "max_reply_bytes": self.max_reply_bytes}

    def close(self) -> None:
        self._client.close()


def load_chat_prompt() -> Prompt:
    """The system message sent to an external chat system (`prompts/chat_system_v1.txt`, one section)."""
    return load_prompt(Path(__file__).with_name("prompts") / CHAT_PROMPT_FILE)


ACTION_INSTRUCTIONS: dict[str, str] = {
    "ask_preference": "Ask the traveler one short question about what they want.",
    "recommend": "Recommend the one place from the list that fits best, by its exact name, and say why.",
    "compare": "Compare the two best places from the list, by their exact names.",
    "farewell": "Say goodbye briefly.",
}


def mentioned(text: str, names: Mapping[str, str]) -> list[str]:
    """Ids whose name the text mentions (whole phrase, case-insensitive), in order of first mention."""
    hits = []
    for pid, name in names.items():
        if name and name.lower() in text.lower():
            m = phrase_pattern(name).search(text)
            if m:
                hits.append((m.start(), pid))
    return [pid for _, pid in sorted(hits)]


class ChatSystem(System):
    """An external system behind an OpenAI-compatible chat endpoint (an LLM spec `openai:BASE_URL#MODEL`)."""

    def __init__(self, llm: Any, kb: KnowledgeBase):
        self.llm, self.kb = llm, kb
        self.name = getattr(llm, "spec", "chat")
        self.prompt = load_chat_prompt()

    def messages(self, row: Mapping[str, Any]) -> list[dict[str, str]]:
        s = row["scenario"]
        lines = [f"- {c['name']} ({', '.join(c['categories'][:3])}; {c['stars']:g} stars"
                 f"{'; ' + '$' * c['price'] if c['price'] else ''})" for c in candidate_cards(self.kb, row["candidate_poi_ids"])]
        candidates = "\n".join(lines)
        system = self.prompt.render("system", poi_type=s["poi_type"], city=s["city"], candidates=candidates,
                                    instruction=ACTION_INSTRUCTIONS[row["action"]])
        msgs = [{"role": "system", "content": system}]
        for t in row["history"]:
            msgs.append({"role": "user" if t["role"] == "user" else "assistant", "content": t["text"] or "..."})
        return msgs

    def _reply(self, row: Mapping[str, Any], text: str | None, error: str | None) -> SystemReply:
        action = row["action"]
        if text is None:
            reason = "timeout" if error and "timed out" in error.lower() else "error"
            return SystemReply.lost_turn(action, reason, error or "no answer")
        if not text.strip():
            return SystemReply.lost_turn(action, "garbage", "empty reply")
        if not_unicode(text):
            return SystemReply.lost_turn(action, "garbage", "the reply holds a lone surrogate (not valid Unicode)")
        pool = list(row["candidate_poi_ids"])
        cell = [p.business_id for p in self.kb.pois_in(row["scenario"]["city"], row["scenario"]["poi_type"])]
        named = mentioned(text, {pid: self.kb.pois[pid].name for pid in dict.fromkeys(pool + cell)})
        ranked = [p for p in named if p in set(pool)]
        reply = SystemReply(action, ranked if action != "farewell" else [], text.strip(), {}, {})
        outside = [p for p in named if p not in set(pool)]
        if outside:
            return SystemReply.lost_turn(action, "out_of_pool", f"named {len(outside)} POI(s) outside the pool: {outside[:3]}")
        return reply

    def respond(self, rows: Sequence[dict[str, Any]]) -> list[SystemReply]:
        """One reply per row; a failed batch is retried one conversation at a time, so a request the server
        refuses costs one turn. A server that cannot be reached (LLMConnectionError, after the LLM layer's
        bounded retries) stops the run instead: retrying it for every conversation would take hours."""
        from trace_llm.errors import LLMConnectionError, LLMError

        convs = [self.messages(r) for r in rows]
        try:
            texts: list[str | None] = list(self.llm.generate_batch(convs))
            errors: list[str | None] = [None] * len(rows)
        except LLMConnectionError:
            raise
        except LLMError:
            texts, errors = [], []
            for conv in convs:
                try:
                    texts.append(self.llm.generate_batch([conv])[0])
                    errors.append(None)
                except LLMConnectionError:
                    raise
                except LLMError as e:
                    texts.append(None)
                    errors.append(str(e))
        return [self._reply(r, t, e) for r, t, e in zip(rows, texts, errors, strict=True)]

    def describe(self) -> dict[str, Any]:
        return {"system": self.name, "kind": "openai_chat", "llm": self.llm.describe(),
                "prompt": self.prompt.describe()}

    def close(self) -> None:
        self.llm.close()


def load_system(spec: str, kb: KnowledgeBase, *, params: Mapping[str, Any] | None = None,
                timeout: float = DEFAULT_TIMEOUT_S, concurrency: int = DEFAULT_CONCURRENCY,
                llm_options: Mapping[str, Any] | None = None, tie_scores: bool = True,
                max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES) -> System:
    """NAME (a registered pipeline), http(s)://... (the HTTP contract) or openai:BASE_URL#MODEL (chat)."""
    params = dict(params or {})
    if spec.startswith(("http://", "https://")):
        if params:
            raise ValueError(f"--param does not apply to an HTTP system; got {sorted(params)}")
        return HTTPSystem(spec, kb, timeout=timeout, concurrency=concurrency, max_reply_bytes=max_reply_bytes)
    if spec.startswith("openai:"):
        from trace_llm import load_llm

        if params:
            raise ValueError(f"--param does not apply to a chat system; got {sorted(params)}")
        opts = {"timeout": timeout, "concurrency": concurrency, "max_response_bytes": max_reply_bytes,
                **dict(llm_options or {})}
        return ChatSystem(load_llm(spec, **opts), kb)
    from baselines import pipeline

    return PipelineSystem(pipeline(spec, kb=kb, **params), tie_scores=tie_scores)
