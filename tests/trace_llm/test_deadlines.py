"""The OpenAI-compatible client: a server that trickles its answer cannot hold a request past its deadline; the
CLI exposes that deadline (--llm-timeout); a non-string completion is an output error; bad usage numbers are
one-line errors, not tracebacks."""

from __future__ import annotations

import argparse

import pytest

from tests.support.cli import run_cli
from tests.support.stub_server import StubOpenAI, completion
from tests.support.trickle_server import TrickleServer
from trace_llm import (
    LLMConnectionError,
    LLMError,
    LLMOutputError,
    add_llm_argument,
    llm_from_args,
    load_llm,
)

USER = [{"role": "user", "content": "Name one quiet cafe."}]


def test_trickling_server_hits_the_deadline():
    with TrickleServer(interval=0.2) as server:  # 0.2 s per byte: the whole answer would take over a minute
        llm = load_llm(server.spec(), cache_path=False, timeout=1.0, max_retries=1, backoff=0.05)
        with pytest.raises(LLMConnectionError, match="deadline") as info:
            llm.generate(USER)
    # each attempt gave up at its deadline: a whole answer (over a minute) would have been text, not this error
    assert "no complete answer within the 1 s deadline" in str(info.value)
    assert "2 attempts" in str(info.value) and server.requests == 2


def test_cli_timeout_reaches_the_backend():
    parser = argparse.ArgumentParser()
    add_llm_argument(parser)
    args = parser.parse_args(
        ["--llm", "openai:http://127.0.0.1:9/v1#m", "--llm-timeout", "2.5", "--no-llm-cache"]
    )
    llm = llm_from_args(args)
    assert llm.deadline == 2.5
    for bad in ("0", "-3", "nan", "soon"):
        with pytest.raises(SystemExit):
            parser.parse_args(["--llm-timeout", bad])


@pytest.mark.parametrize("content", [["a", "list"], {"an": "object"}, 42, True])
def test_non_string_content_is_an_output_error(content, capsys):
    with StubOpenAI() as stub:
        stub.script.append((200, completion(content)))  # type: ignore[arg-type]
        llm = load_llm(stub.spec(), cache_path=False)
        with pytest.raises(LLMOutputError, match="message.content is") as info:
            llm.generate(USER)
        assert info.value.raw and info.value.attempts == 1
        stub.script.append((200, completion(content)))  # type: ignore[arg-type]
        rc, text = run_cli(capsys, "llm", "chat", "--llm", stub.spec(), "--no-llm-cache", "hi")
    assert rc == 2 and "message.content is" in text and "expected a string" in text


@pytest.mark.parametrize(
    "usage",
    [
        {"prompt_tokens": -3, "completion_tokens": 1},
        {"prompt_tokens": "eleven", "completion_tokens": 1},
        {"prompt_tokens": 1.5, "completion_tokens": 1},
        {"prompt_tokens": 10**30, "completion_tokens": 1},
        {"prompt_tokens": 1, "completion_tokens": float("nan")},
        {"prompt_tokens": 1, "completion_tokens": float("inf")},
        ["not", "an", "object"],
    ],
)
def test_bad_usage_numbers_are_one_line(usage, capsys):
    with StubOpenAI() as stub:
        body = {**completion("fine"), "usage": usage}
        stub.script.append((200, body))
        with pytest.raises(LLMError, match="usage"):
            load_llm(stub.spec(), cache_path=False).generate(USER)
        stub.script.append((200, body))
        rc, text = run_cli(capsys, "llm", "chat", "--llm", stub.spec(), "--no-llm-cache", "hi")
    assert rc == 2 and "usage" in text and len(text.strip().splitlines()) == 1, text


def test_missing_usage_and_whole_number_floats_are_fine():
    with StubOpenAI() as stub:
        stub.script.append((200, {**completion("a"), "usage": None}))
        stub.script.append(
            (200, {**completion("b"), "usage": {"prompt_tokens": 7.0, "completion_tokens": 2}})
        )
        llm = load_llm(stub.spec(), cache_path=False)
        assert llm.generate_batch([USER, [{"role": "user", "content": "again"}]]) in (["a", "b"], ["b", "a"])
        assert llm.usage["prompt_tokens"] == 7 and llm.usage["completion_tokens"] == 2
