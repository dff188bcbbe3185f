"""The `openai` backend against small real HTTP servers started in the test (scripted answers)."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.support.stub_server import StubOpenAI
from trace_llm import (
    DecodingSettings,
    LLMConnectionError,
    LLMError,
    LLMOutputError,
    load_llm,
)
from trace_llm.local_server import free_port

USER = [{"role": "user", "content": "Name one quiet cafe."}]
SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def test_request_carries_model_settings_and_key(stub, tmp_path, monkeypatch):
    monkeypatch.setenv("TRACE_LLM_API_KEY", "sk-test-123")
    settings = DecodingSettings(temperature=0.7, top_p=0.9, max_new_tokens=33, seed=7)
    llm = load_llm(stub.spec("my-model"), settings, cache_path=tmp_path / "c.sqlite")
    assert llm.generate(USER) == "echo: Name one quiet cafe."
    body = stub.requests[0]
    assert body["model"] == "my-model"
    assert body["messages"] == USER
    assert (body["temperature"], body["top_p"], body["max_tokens"], body["seed"]) == (0.7, 0.9, 33, 7)
    assert stub.headers[0]["Authorization"] == "Bearer sk-test-123"
    assert llm.usage == {
        "requests": 1,
        "cache_hits": 0,
        "prompt_tokens": 11,
        "completion_tokens": 5,
        "json_repairs": 0,
        "json_failures": 0,
        "constrained": 0,
        "dialect_fallbacks": 0,
        "constraint_violations": 0,
    }
    assert llm.describe()["base_url"] == stub.url
    assert "sk-test" not in json.dumps(llm.describe())


def test_no_key_no_authorization_header(stub, monkeypatch):
    monkeypatch.delenv("TRACE_LLM_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    load_llm(stub.spec(), cache_path=False).generate(USER)
    assert "Authorization" not in stub.headers[0]


def recorded_sleeps(llm) -> list[float]:
    """Replace the backend's wait between attempts by a recorder: the test sees the waits, and spends none."""
    slept: list[float] = []

    async def sleep(delay: float) -> None:
        slept.append(delay)

    llm.sleep = sleep
    return slept


def test_server_down_clear_error_in_bounded_time():
    port = free_port()  # nothing listens there
    llm = load_llm(f"openai:http://127.0.0.1:{port}/v1#m", cache_path=False, max_retries=2, backoff=0.05)
    slept = recorded_sleeps(llm)
    with pytest.raises(LLMConnectionError) as info:
        llm.generate(USER)
    assert (
        len(slept) == 2 and 0.05 <= slept[0] <= 0.055 and 0.1 <= slept[1] <= 0.11
    )  # backoff x 2**k, 10% jitter
    assert f"http://127.0.0.1:{port}/v1/chat/completions" in str(info.value)
    assert "3 attempts" in str(info.value)
    assert info.value.url.endswith("/chat/completions")


def test_server_down_default_retries_stay_bounded():
    port = free_port()
    llm = load_llm(f"openai:http://127.0.0.1:{port}/v1#m", cache_path=False)
    slept = recorded_sleeps(llm)
    with pytest.raises(LLMConnectionError, match=f"127.0.0.1:{port}"):
        llm.generate_batch([USER, [{"role": "user", "content": "another"}]])
    # each request waits 0.5 + 1 + 2 + 4 s (plus at most 10% jitter) over its four retries, then gives up
    assert len(slept) <= 2 * 4 and sum(slept) <= 2 * 7.5 * 1.1


def test_500_then_recovers(stub, tmp_path):
    stub.script = [(500, {"error": "boom"}), (503, {"error": "busy"}), (200, "recovered")]
    llm = load_llm(stub.spec(), cache_path=tmp_path / "c.sqlite", backoff=0.01)
    assert llm.generate(USER) == "recovered"
    assert len(stub.requests) == 3
    assert llm.usage["requests"] == 1


def test_429_waits_for_retry_after(stub):
    stub.script = [(429, {"error": "slow down"}, {"Retry-After": "0.4"}), (200, "ok")]
    llm = load_llm(stub.spec(), cache_path=False, backoff=0.01)
    slept = recorded_sleeps(llm)
    assert llm.generate(USER) == "ok"
    assert slept and slept[0] == 0.4  # the server's Retry-After, longer than the backoff


def test_500_forever_gives_up_naming_the_url(stub):
    stub.responder = lambda body: (500, {"error": "model crashed"})
    llm = load_llm(stub.spec(), cache_path=False, max_retries=1, backoff=0.01)
    with pytest.raises(LLMConnectionError) as info:
        llm.generate(USER)
    assert stub.url in str(info.value) and "HTTP 500" in str(info.value)
    assert len(stub.requests) == 2


def test_client_error_fails_at_once_with_server_message(stub):
    stub.script = [(400, {"error": "Server is pinned to '/x'; requested 'stub-model'"})]
    llm = load_llm(stub.spec(), cache_path=False, backoff=0.01)
    with pytest.raises(LLMError) as info:
        llm.generate(USER)
    assert not isinstance(info.value, LLMConnectionError)
    assert "HTTP 400" in str(info.value) and "pinned" in str(info.value) and stub.url in str(info.value)
    assert len(stub.requests) == 1


def test_not_a_chat_completion_is_an_error(stub):
    stub.script = [(200, {"unexpected": True})]
    with pytest.raises(LLMError, match="not an OpenAI chat completion"):
        load_llm(stub.spec(), cache_path=False).generate(USER)


def test_concurrency_is_bounded(stub):
    stub.delay = 0.15
    llm = load_llm(stub.spec(), cache_path=False, concurrency=3)
    convs = [[{"role": "user", "content": f"q{i}"}] for i in range(9)]
    assert llm.generate_batch(convs) == [f"echo: q{i}" for i in range(9)]
    assert stub.max_in_flight == 3


def test_works_inside_a_running_event_loop(stub):
    llm = load_llm(stub.spec(), cache_path=False)

    async def caller() -> str:
        return llm.generate(USER)

    assert asyncio.run(caller()) == "echo: Name one quiet cafe."


# ---- JSON output ---------------------------------------------------------------------------------------
def test_malformed_json_is_repaired(stub):
    stub.script = [(200, "Sure: {name: Cafe"), (200, 'Here:\n```json\n{"name": "Cafe Luna"}\n```')]
    llm = load_llm(stub.spec(), cache_path=False, structured="prompt")  # the repair path (no response_format)
    assert llm.generate_json(USER, SCHEMA) == {"name": "Cafe Luna"}
    assert llm.usage["json_repairs"] == 1 and llm.usage["json_failures"] == 0
    first, second = stub.requests
    assert "JSON Schema" in first["messages"][-1]["content"]
    # the repair round sends the bad output back with what was wrong
    assert second["messages"][-2] == {"role": "assistant", "content": "Sure: {name: Cafe"}
    assert "no parseable JSON" in second["messages"][-1]["content"]


def test_malformed_json_forever_raises_with_raw_output(stub):
    stub.responder = lambda body: (200, '{"title": "not the right key"}')
    llm = load_llm(stub.spec(), cache_path=False, structured="prompt")
    with pytest.raises(LLMOutputError) as info:
        llm.generate_json(USER, SCHEMA, max_repairs=2)
    assert info.value.raw == '{"title": "not the right key"}'
    assert info.value.attempts == 3 and "missing required property 'name'" in info.value.error
    assert len(stub.requests) == 3
    assert llm.usage["json_failures"] == 1


def test_json_batch_returns_errors_in_place(stub):
    def responder(body):
        asked = body["messages"][0]["content"]
        return (200, '{"name": "ok"}' if asked.startswith("good") else "never json")

    stub.responder = responder
    llm = load_llm(stub.spec(), cache_path=False)
    out = llm.generate_json_batch(
        [[{"role": "user", "content": "good one"}], [{"role": "user", "content": "bad one"}]],
        SCHEMA,
        max_repairs=1,
    )
    assert out[0] == {"name": "ok"}
    assert isinstance(out[1], LLMOutputError) and out[1].raw == "never json"
    assert len(stub.requests) == 3  # 2 first tries + 1 repair of the bad one


def test_zero_repairs_means_one_attempt(stub):
    stub.responder = lambda body: (200, "nope")
    with pytest.raises(LLMOutputError):
        load_llm(stub.spec(), cache_path=False, structured="prompt").generate_json(
            USER, SCHEMA, max_repairs=0
        )
    assert len(stub.requests) == 1


# ---- cache ---------------------------------------------------------------------------------------------
def test_cache_hit_miss_and_rerun_costs_nothing(stub, tmp_path):
    path = tmp_path / "c.sqlite"
    llm = load_llm(stub.spec(), cache_path=path)
    first = llm.generate(USER)
    assert llm.generate(USER) == first
    assert len(stub.requests) == 1 and llm.usage["cache_hits"] == 1
    llm.generate(USER, DecodingSettings(max_new_tokens=12))  # different settings: a miss
    assert len(stub.requests) == 2
    again = load_llm(stub.spec(), cache_path=path)  # a new process-like client on the same file
    assert again.generate(USER) == first and again.usage["requests"] == 0
    assert len(stub.requests) == 2
    other_model = load_llm(stub.spec("other-model"), cache_path=path)
    other_model.generate(USER)
    assert len(stub.requests) == 3


def test_duplicates_in_a_batch_are_sent_once(stub):
    llm = load_llm(stub.spec(), cache_path=False)
    assert llm.generate_batch([USER, USER, USER]) == ["echo: Name one quiet cafe."] * 3
    assert len(stub.requests) == 1 and llm.usage["cache_hits"] == 2


def test_interrupted_batch_resumes(stub, tmp_path):
    failed = []

    def responder(body):
        text = body["messages"][-1]["content"]
        if text == "q3" and not failed:
            failed.append(text)
            return (400, {"error": "simulated crash"})
        return (200, "answer to " + text)

    stub.responder = responder
    convs = [[{"role": "user", "content": f"q{i}"}] for i in range(6)]
    path = tmp_path / "c.sqlite"
    with pytest.raises(LLMError, match="simulated crash"):
        load_llm(stub.spec(), cache_path=path, concurrency=1).generate_batch(convs)
    assert [r["messages"][-1]["content"] for r in stub.requests] == ["q0", "q1", "q2", "q3"]
    llm = load_llm(stub.spec(), cache_path=path, concurrency=1)
    assert llm.generate_batch(convs) == [f"answer to q{i}" for i in range(6)]
    assert [r["messages"][-1]["content"] for r in stub.requests[4:]] == ["q3", "q4", "q5"]
    assert llm.usage["requests"] == 3 and llm.usage["cache_hits"] == 3


def test_bad_messages_name_the_field(stub):
    llm = load_llm(stub.spec(), cache_path=False)
    with pytest.raises(ValueError, match=r"conversations\[0\]\[1\]\.role: 'bot'"):
        llm.generate([{"role": "user", "content": "a"}, {"role": "bot", "content": "b"}])
    with pytest.raises(ValueError, match=r"content: expected a string"):
        llm.generate([{"role": "user", "content": None}])
    assert stub.requests == []


def test_stub_server_is_real_http():
    with StubOpenAI() as server:
        import httpx

        r = httpx.post(
            server.url + "/chat/completions", json={"messages": [{"role": "user", "content": "x"}]}
        )
        assert r.json()["choices"][0]["message"]["content"] == "echo: x"
