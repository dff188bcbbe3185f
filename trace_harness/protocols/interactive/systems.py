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

The interface, the reply check and the limits are in `trace_harness.protocols.interactive.reply`; `HTTPSystem` is in
`trace_harness.protocols.interactive.http_system`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from baselines.base import TracePipeline
from baselines.toolkit.state import phrase_pattern
from trace_dataset.kb.store import KnowledgeBase
from trace_harness.protocols.interactive.http_system import HTTPSystem, candidate_cards
from trace_harness.protocols.interactive.reply import (
    DEFAULT_CONCURRENCY,
    DEFAULT_MAX_REPLY_BYTES,
    DEFAULT_TIMEOUT_S,
    System,
    SystemReply,
    check_reply,
    not_unicode,
)
from trace_llm import LLM
from trace_llm.prompts import Prompt, load_prompt

log = logging.getLogger(__name__)

CHAT_PROMPT_FILE = "chat_system_v1.txt"


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
            scores = recorded.get((p.dialogue_id, p.turn_id)) or None
            reply = SystemReply(
                row["action"],
                list(p.ranked_poi_ids),
                p.response,
                dict(p.citations),
                dict(p.meta or {}),
                scores,
            )
            out.append(check_reply(row, reply))
        return out

    def describe(self) -> dict[str, Any]:
        return {"system": self.name, "kind": "pipeline", **self.pipe.describe()}


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

    def __init__(self, llm: LLM, kb: KnowledgeBase):
        self.llm, self.kb = llm, kb
        self.name = getattr(llm, "spec", "chat")
        self.prompt = load_chat_prompt()

    def messages(self, row: Mapping[str, Any]) -> list[dict[str, str]]:
        s = row["scenario"]
        lines = [
            f"- {c['name']} ({', '.join(c['categories'][:3])}; {c['stars']:g} stars"
            f"{'; ' + '$' * c['price'] if c['price'] else ''})"
            for c in candidate_cards(self.kb, row["candidate_poi_ids"])
        ]
        candidates = "\n".join(lines)
        system = self.prompt.render(
            "system",
            poi_type=s["poi_type"],
            city=s["city"],
            candidates=candidates,
            instruction=ACTION_INSTRUCTIONS[row["action"]],
        )
        msgs = [{"role": "system", "content": system}]
        for t in row["history"]:
            msgs.append(
                {"role": "user" if t["role"] == "user" else "assistant", "content": t["text"] or "..."}
            )
        return msgs

    def _reply(self, row: Mapping[str, Any], text: str | None, error: str | None) -> SystemReply:
        action = row["action"]
        if text is None:
            reason = "timeout" if error and "timed out" in error.lower() else "error"
            return SystemReply.lost_turn(action, reason, error or "no answer")
        if not text.strip():
            return SystemReply.lost_turn(action, "garbage", "empty reply")
        if not_unicode(text):
            return SystemReply.lost_turn(
                action, "garbage", "the reply holds a lone surrogate (not valid Unicode)"
            )
        pool = list(row["candidate_poi_ids"])
        cell = [p.business_id for p in self.kb.pois_in(row["scenario"]["city"], row["scenario"]["poi_type"])]
        named = mentioned(text, {pid: self.kb.pois[pid].name for pid in dict.fromkeys(pool + cell)})
        ranked = [p for p in named if p in set(pool)]
        reply = SystemReply(action, ranked if action != "farewell" else [], text.strip(), {}, {})
        outside = [p for p in named if p not in set(pool)]
        if outside:
            return SystemReply.lost_turn(
                action, "out_of_pool", f"named {len(outside)} POI(s) outside the pool: {outside[:3]}"
            )
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
        return {
            "system": self.name,
            "kind": "openai_chat",
            "llm": self.llm.describe(),
            "prompt": self.prompt.describe(),
        }

    def close(self) -> None:
        self.llm.close()


def load_system(
    spec: str,
    kb: KnowledgeBase,
    *,
    params: Mapping[str, Any] | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    concurrency: int = DEFAULT_CONCURRENCY,
    llm_options: Mapping[str, Any] | None = None,
    tie_scores: bool = True,
    max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
) -> System:
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
        opts = {
            "timeout": timeout,
            "concurrency": concurrency,
            "max_response_bytes": max_reply_bytes,
            **dict(llm_options or {}),
        }
        return ChatSystem(load_llm(spec, **opts), kb)
    from baselines import pipeline

    return PipelineSystem(pipeline(spec, kb=kb, **params), tie_scores=tie_scores)
