"""External systems: a local HTTP server speaking the documented contract, and an OpenAI-compatible chat stub.
A turn that times out, answers garbage or ranks POIs outside the pool is lost (counted, shown), never the run.
(The servers are scripted: they stand in for a researcher's system, not for an LLM.)"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from trace_dataset.datadir import kb_dir
from trace_dataset.io import read_jsonl
from trace_dataset.kb.store import KnowledgeBase
from trace_harness.protocols.interactive.http_system import HTTP_PROTOCOL
from trace_harness.protocols.interactive.run import run_interactive
from trace_harness.protocols.interactive.systems import load_system, mentioned


class Server:
    """A real HTTP server on 127.0.0.1 in a thread; `respond(path, body)` -> (status, bytes, delay seconds)."""

    def __init__(self, respond: Callable[[str, dict[str, Any]], tuple[int, bytes, float]]):
        self.requests: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                return None

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                server.requests.append(body)
                status, payload, delay = respond(self.path, body)
                if delay:
                    time.sleep(delay)
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> Server:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def contract(path: str, body: dict[str, Any]) -> tuple[int, bytes, float]:
    """A CRS that misbehaves on purpose at some turns (by turn id), otherwise ranks the pool in order."""
    tid = body["turn_id"]
    cands = body["candidate_poi_ids"]
    reply: Any = {
        "ranked_poi_ids": cands,
        "response": f"How about {body['candidates'][0]['name']}?",
        "citations": {},
    }
    if tid == 3:
        return 200, json.dumps(reply).encode(), 2.0  # too slow: the client gives up after 0.5 s
    if tid == 5:
        return 200, b"this is not json", 0.0
    if tid == 7:
        reply["ranked_poi_ids"] = ["not-a-candidate", *cands]
    if tid == 9:
        reply = {"ranked_poi_ids": "p1", "response": 3}
    if tid == 11:
        return 500, b'{"error": "boom"}', 0.0
    return 200, json.dumps(reply).encode(), 0.0


def test_http_system_loses_bad_turns_but_never_the_run(small_corpus, tmp_path):
    kb = KnowledgeBase.load(kb_dir(small_corpus))
    with Server(contract) as server:
        m = run_interactive(
            server.url + "/turn",
            small_corpus,
            tmp_path / "out",
            n=3,
            turns=6,
            timeout=0.5,
            progress=False,
            n_boot=100,
            kb=kb,
        )
        body = server.requests[0]
    assert body["protocol"] == HTTP_PROTOCOL and body["action"] == "ask_preference"
    assert {"gold_poi_ids", "acceptable_alternative_poi_ids", "reference_text"}.isdisjoint(body)
    assert [c["business_id"] for c in body["candidates"]] == body["candidate_poi_ids"]
    assert body["history"][0]["role"] == "user" and body["history"][0]["action"] == "greet_and_seek"
    lost = m["lost_turns"]
    assert lost["by_reason"].get("timeout", 0) >= 1 and lost["by_reason"].get("garbage", 0) >= 1
    assert lost["total"] == sum(lost["by_reason"].values()) and lost["dialogues_with_lost_turns"] >= 1
    preds = list(read_jsonl(tmp_path / "out" / "predictions.jsonl"))
    by_turn = {(p["dialogue_id"], p["turn_id"]): p for p in preds}
    did = preds[0]["dialogue_id"]
    assert by_turn[(did, 3)]["meta"]["lost"] == "timeout" and by_turn[(did, 3)]["ranked_poi_ids"] == []
    assert by_turn[(did, 5)]["meta"]["lost"] == "garbage"
    reasons = {p["meta"].get("lost") for p in preds}
    assert {"timeout", "garbage"} <= reasons
    if (did, 7) in by_turn:
        assert by_turn[(did, 7)]["meta"]["lost"] == "out_of_pool"
    assert m["n_dialogues"] == 3  # every dialogue finished


def test_http_reply_may_choose_its_own_action(small_corpus, tmp_path):
    def asker(path, body):
        reply = {
            "ranked_poi_ids": body["candidate_poi_ids"][:2],
            "response": "What is your budget?",
            "citations": [],
            "action": "ask_preference",
        }
        return 200, json.dumps(reply).encode(), 0.0

    with Server(asker) as server:
        m = run_interactive(
            server.url, small_corpus, tmp_path / "out", n=1, turns=3, progress=False, n_boot=50
        )
    records = list(read_jsonl(tmp_path / "out" / "data" / "interactive.jsonl.gz"))
    assert [t["action"] for t in records[0]["turns"] if t["role"] == "system"] == ["ask_preference"] * 3
    assert m["lost_turns"]["total"] == 0


def test_chat_system_reads_the_ranking_from_names(small_corpus, tmp_path):
    from trace_dataset.datadir import iter_dialogues

    kb = KnowledgeBase.load(kb_dir(small_corpus))
    first = next(iter(iter_dialogues(small_corpus, "test")))
    s = first["scenario"]
    outside = [
        p.name
        for p in kb.pois_in(s["city"], s["poi_type"])
        if p.business_id not in first["candidate_poi_ids"]
    ]
    calls = {"n": 0}

    def chat(path, body):
        calls["n"] += 1
        system = body["messages"][0]["content"]
        listed = [line[2:].split(" (")[0] for line in system.splitlines() if line.startswith("- ")]
        if calls["n"] == 2:
            content = ""  # garbage: an empty answer
        elif calls["n"] == 3:
            content = f"Try {outside[0]}!"  # a POI of the city that is not in the pool
        else:
            content = f"I suggest {listed[1]}, or else {listed[0]}."
        payload = {
            "id": "x",
            "object": "chat.completion",
            "model": "stub",
            "choices": [
                {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}
            ],
            "usage": {"prompt_tokens": 5, "completion_tokens": 5},
        }
        return 200, json.dumps(payload).encode(), 0.0

    with Server(chat) as server:
        system = load_system(
            f"openai:{server.url}/v1#stub", kb, llm_options={"cache_path": False, "max_retries": 0}
        )
        m = run_interactive(
            system, small_corpus, tmp_path / "out", n=1, turns=4, progress=False, n_boot=50, kb=kb
        )
    preds = list(read_jsonl(tmp_path / "out" / "predictions.jsonl"))
    assert "lost" not in preds[0]["meta"]
    assert preds[1]["meta"]["lost"] == "garbage" and preds[2]["meta"]["lost"] == "out_of_pool"
    ranked = preds[3]["ranked_poi_ids"]
    assert len(ranked) == 2 and all(p in first["candidate_poi_ids"] for p in ranked)
    assert m["lost_turns"]["by_reason"] == {"garbage": 1, "out_of_pool": 1}


def test_names_are_matched_as_whole_phrases():
    names = {"a": "The Oak", "b": "Oak Street Grill", "c": "Blue"}
    assert mentioned("Try Oak Street Grill, then The Oak.", names) == ["b", "a"]
    assert mentioned("Bluebird is lovely", names) == []


@pytest.mark.parametrize("spec", ["http://example.invalid", "openai:http://example.invalid/v1#m"])
def test_params_do_not_apply_to_external_systems(small_corpus, spec):
    kb = KnowledgeBase.load(kb_dir(small_corpus))
    with pytest.raises(ValueError, match="--param does not apply"):
        load_system(spec, kb, params={"k": 1})


def test_every_package_system_reports_its_ties_to_the_protocol(tmp_path):
    """The scores behind a ranking reach the turn metrics for any pipeline that reports them (`baselines.base`
    "Ties"): SnipRec's never-retrieved venues tie at 0, so a never-retrieved target lands anywhere among them
    (before this, SnipRec reported nothing and such a target always sat where business_id order put it)."""
    from baselines import pipeline
    from tests.support.kb import turn, turn_row
    from tests.support.sniprec import WordEncoder, write_kb
    from trace_harness.protocols.interactive.systems import PipelineSystem
    from trace_metrics.lib.interactive import target_position, turn_rng

    kb = KnowledgeBase.load(write_kb(tmp_path / "kb"))
    cands = tuple(sorted(kb.pois))
    row = turn_row(
        [turn(0, "user", "provide_preference", "Fresh seafood and oysters, please.")],
        "ask_preference",
        cands,
        did="sniprec_00001",
    )
    snip = PipelineSystem(
        pipeline("sniprec", kb=kb, encoder_model=WordEncoder(), k=1, cache_dir=str(tmp_path / "c"))
    ).respond([row])[0]
    assert snip.scores is not None and set(snip.scores) == set(cands)
    never = [p for p in snip.ranked_poi_ids if snip.scores[p] == 0]
    assert len(never) >= 2 and snip.ranked_poi_ids[-len(never) :] == sorted(never)  # the pipeline's order
    first = len(cands) - len(never) + 1
    seen = {
        target_position(snip.ranked_poi_ids, [never[-1]], cands, turn_rng(s, "sniprec_00001", 0), snip.scores)
        for s in range(200)
    }
    assert seen == set(range(first, len(cands) + 1))
    tfidf = PipelineSystem(pipeline("tfidf", kb=kb)).respond([row])[0]
    assert set(tfidf.scores) == set(cands)  # a non-LLM baseline's own scores, as before
    assert PipelineSystem(pipeline("tfidf", kb=kb), tie_scores=False).respond([row])[0].scores is None


def test_http_reply_may_send_the_scores_of_its_ranking():
    from tests.support.kb import turn, turn_row
    from trace_harness.protocols.interactive.http_system import parse_http_reply

    row = turn_row([turn(0, "user", "greet_and_seek", "Hi")], "recommend", ("a", "b", "c"))
    body = {"ranked_poi_ids": ["a", "b", "c"], "response": "Try a.", "scores": {"a": 2, "b": 1.0, "c": 1.0}}
    assert parse_http_reply(row, body).scores == {"a": 2, "b": 1.0, "c": 1.0}
    assert parse_http_reply(row, {**body, "scores": None}).scores is None
    for bad in ({"a": "high"}, ["a"], {"a": float("nan")}, {"a": True}):
        reply = parse_http_reply(row, {**body, "scores": bad})
        assert reply.lost == "garbage" and "scores" in reply.meta["detail"]


def test_a_variant_is_in_the_interactive_row_label(tmp_path):
    """A pipeline that names a reading other than the paper's (Popularity dropping rejected POIs) says so in
    the interactive run's label, as the leaderboard's row label does; the paper's reading is the name alone."""
    from baselines import pipeline
    from tests.support.sniprec import write_kb
    from trace_harness.protocols.interactive.session import system_label
    from trace_harness.protocols.interactive.systems import PipelineSystem

    kb = KnowledgeBase.load(write_kb(tmp_path / "kb"))
    dropping = PipelineSystem(pipeline("popularity", kb=kb, drop_rejected=True)).describe()
    assert system_label(dropping) == "popularity [drops rejected]"
    assert system_label(PipelineSystem(pipeline("popularity", kb=kb)).describe()) == "popularity"
    assert system_label({"system": "x", "llm": {"model": "m"}, "variant": "bf16"}) == "x (m) [bf16]"
