"""The OpenAI-compatible client's bounds: an answer larger than `max_response_bytes`
fails its request unread and is not retried; a `Retry-After` header never holds a request longer than its own
deadline (--llm-timeout); the CLI option reaches the backend. The sleeps are recorded, never waited for."""

from __future__ import annotations

import argparse

import pytest

from tests.support.scripted_http import Reply, ScriptedHTTP
from tests.support.stub_server import StubOpenAI, completion
from trace_llm import LLMOutputError, add_llm_argument, llm_from_args, load_llm

USER = [{"role": "user", "content": "Name one quiet cafe."}]


@pytest.fixture
def sleeps(monkeypatch):
    """The backoff and Retry-After waits of the openai backend, recorded instead of slept."""
    import trace_llm.openai_backend as backend

    waited: list[float] = []

    async def record(seconds: float) -> None:
        waited.append(seconds)

    monkeypatch.setattr(backend.asyncio, "sleep", record)
    return waited


def test_retry_after_is_bounded_by_the_request_deadline(sleeps):
    with StubOpenAI() as stub:
        stub.script = [
            (429, {"error": "slow down"}, {"Retry-After": "999999"}),
            (503, {"error": "busy"}, {"Retry-After": "999999"}),
            (200, "ok"),
        ]
        llm = load_llm(stub.spec(), cache_path=False, timeout=1.5, backoff=0.01)
        assert llm.generate(USER) == "ok"
    assert len(sleeps) == 2 and all(0 < s <= 1.5 for s in sleeps), sleeps  # not 30 s each (nor 999999)
    with StubOpenAI() as stub:  # a short Retry-After is still honoured
        stub.script = [(429, {"error": "slow down"}, {"Retry-After": "0.4"}), (200, "ok")]
        assert load_llm(stub.spec(), cache_path=False, timeout=5, backoff=0.01).generate(USER) == "ok"
    assert sleeps[-1] >= 0.4


def test_an_answer_over_the_cap_fails_unread_and_is_not_retried():
    with StubOpenAI() as stub:  # declared Content-Length: refused before reading
        stub.script = [(200, completion("w" * 300_000))]
        llm = load_llm(stub.spec(), cache_path=False, max_response_bytes=64 * 1024, backoff=0.01)
        with pytest.raises(LLMOutputError, match="passed 65,536 bytes"):
            llm.generate(USER)
        assert len(stub.requests) == 1
        stub.script = [(200, completion("fine"))]
        assert llm.generate(USER) == "fine"  # the same client goes on


def test_a_streamed_answer_without_length_is_cut_at_the_cap():
    sent = {"pieces": 0}

    def endless(body):
        def pieces():
            yield b'{"choices": [{"message": {"content": "'
            for _ in range(2000):  # 2000 x 64 KiB = 125 MiB if it were all read
                sent["pieces"] += 1
                yield b"v" * 65536
            yield b'"}}]}'

        return Reply(body=pieces())

    with ScriptedHTTP(endless) as server:
        llm = load_llm(
            f"openai:{server.url}/v1#m", cache_path=False, max_response_bytes=1 << 20, backoff=0.01
        )
        with pytest.raises(LLMOutputError, match="passed 1,048,576 bytes"):
            llm.generate(USER)
    assert len(server.bodies) == 1 and sent["pieces"] < 2000


def test_the_cli_option_reaches_the_backend_and_bad_sizes_are_refused():
    parser = argparse.ArgumentParser()
    add_llm_argument(parser)
    args = parser.parse_args(
        ["--llm", "openai:http://127.0.0.1:9/v1#m", "--llm-max-response-bytes", "2M", "--no-llm-cache"]
    )
    assert llm_from_args(args).max_response_bytes == 2 * 2**20
    assert (
        llm_from_args(parser.parse_args(["--llm", "openai:http://127.0.0.1:9/v1#m"])).max_response_bytes
        == 4 * 2**20
    )
    for bad in ("0", "-1", "nan", "lots"):
        with pytest.raises(SystemExit):
            parser.parse_args(["--llm-max-response-bytes", bad])
