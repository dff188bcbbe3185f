"""The openai backend's bounds per server: one concurrency limit per server shared by every thread and every
backend of the process, and a deadline over the whole request (headers included) for live requests and the
preflight alike; loopback stub servers."""

from __future__ import annotations

import asyncio
import json
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.support.scripted_http import Reply, ScriptedHTTP
from tests.support.stub_server import StubOpenAI, completion
from trace_llm import LLMConnectionError, load_llm
from trace_llm.http_clients import ServerSlots


def _batches(n: int, tag: str) -> list[list[dict[str, str]]]:
    return [[{"role": "user", "content": f"{tag}-{i}"}] for i in range(n)]


def test_concurrency_is_per_server_across_threads_and_backends():
    with StubOpenAI(delay=0.05) as stub:
        one = load_llm(stub.spec(), cache_path=False, concurrency=2)
        other = load_llm(stub.spec(), cache_path=False, concurrency=2)  # the same server, another backend
        jobs = [
            (one, "a"),
            (one, "b"),
            (other, "c"),
            (other, "d"),
        ]  # four batches side by side (schema groups)
        with ThreadPoolExecutor(len(jobs)) as pool:
            answers = list(pool.map(lambda job: job[0].generate_batch(_batches(6, job[1])), jobs))
    assert [a[0] for a in answers] == ["echo: a-0", "echo: b-0", "echo: c-0", "echo: d-0"]
    assert len(stub.requests) == 24 and 1 <= stub.max_in_flight <= 2


def test_server_slots_hand_a_freed_slot_to_a_waiter_of_another_loop():
    slots = ServerSlots()

    assert asyncio.run(slots.acquire(("u",), 1)) == "u" and slots.in_flight("u") == 1  # held, the loop gone

    def wait_in_another_loop() -> str:
        return asyncio.run(slots.acquire(("u",), 1))

    with ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(wait_in_another_loop)
        while not slots._waiting:  # the other loop's request is queued
            time.sleep(0.01)
        slots.release("u")
        assert waiting.result(timeout=30) == "u"
    assert slots.in_flight("u") == 1


def _drip_headers(_body: dict) -> Reply:
    return Reply(body=json.dumps(completion("late")).encode(), head_drip=0.05)  # the headers alone: over 30 s


def test_dripped_headers_hit_the_request_deadline():
    with ScriptedHTTP(_drip_headers) as server:
        llm = load_llm(f"openai:{server.url}/v1#m", cache_path=False, timeout=1.0, max_retries=0)
        with pytest.raises(LLMConnectionError, match="within the 1 s deadline"):
            llm.generate([{"role": "user", "content": "hi"}])


def test_dripped_headers_hit_the_preflight_deadline():
    with ScriptedHTTP(_drip_headers) as server:
        llm = load_llm(f"openai:{server.url}/v1#m", cache_path=False, timeout=1.0)
        with pytest.raises(
            LLMConnectionError, match=r"preflight: .* did not answer \(no complete answer within 1 s"
        ):
            llm.preflight()
