"""The openai backend's error-rate abort and preflight, and the per-request progress bar, against stub servers."""

from __future__ import annotations

import collections
import threading

import pytest

from tests.support.stub_server import StubOpenAI
from trace_llm import LLMConfigError, LLMConnectionError, load_llm
from trace_llm.cache import Completion
from trace_llm.errors import ErrorRateExceeded, LLMRunStopped
from trace_llm.progress import RequestProgress

FAST = {"backoff": 0.0, "max_retries": 4, "timeout": 10.0, "concurrency": 4}


def failing_requests(every: int, attempts: int, status: int = 500):
    """A responder that fails the first `attempts` attempts of every `every`-th request (by the request's own
    index, the i of its "q{i}", never by arrival order: concurrent requests interleave differently on a loaded
    machine) and answers every other attempt."""
    tries: collections.Counter[str] = collections.Counter()
    lock = threading.Lock()

    def reply(body):
        content = body["messages"][-1]["content"]
        with lock:
            tries[content] += 1
            attempt = tries[content]
        if int(content.removeprefix("q")) % every == 0 and attempt <= attempts:
            return (status, {"error": "overloaded"})
        return (200, "ok")

    return reply


def conversations(n: int):
    return [[{"role": "user", "content": f"q{i}"}] for i in range(n)]


def test_a_server_failing_a_third_of_its_requests_stops_the_run(tmp_path):
    with StubOpenAI(failing_requests(3, attempts=3)) as stub:  # half the attempts fail, each request answers
        llm = load_llm(
            stub.spec(), cache_path=tmp_path / "c.sqlite", max_error_rate=0.1, error_window=20, **FAST
        )
        with pytest.raises(ErrorRateExceeded) as caught:
            llm.generate_batch(conversations(60))
    message = str(caught.value)
    assert "of the last 20 attempts failed" in message and "the limit is 10%" in message
    assert f"{stub.url}/chat/completions: " in message and "HTTP 500" in message
    assert isinstance(caught.value, LLMRunStopped)  # not an LLMError: no caller takes it for one failed call
    assert llm.cache is not None and 0 < len(llm.cache) < 60  # what was answered is cached: a rerun resumes


def test_a_server_below_the_limit_finishes(tmp_path):
    with StubOpenAI(failing_requests(20, attempts=1)) as stub:  # 3 of 63 attempts fail, each retried once
        # 20 requests apart, two failures at most share a window of 20 attempts: 10%, not more
        llm = load_llm(stub.spec(), cache_path=False, max_error_rate=0.1, error_window=20, **FAST)
        assert llm.generate_batch(conversations(60)) == ["ok"] * 60


def test_rate_limits_are_flow_control_not_errors(tmp_path):
    with StubOpenAI(failing_requests(1, attempts=1, status=429)) as stub:  # half the attempts answer 429
        llm = load_llm(stub.spec(), cache_path=False, max_error_rate=0.1, error_window=10, **FAST)
        assert llm.generate_batch(conversations(20)) == ["ok"] * 20
    with StubOpenAI(failing_requests(1, attempts=1, status=503)) as stub:  # the same share of 503s stops it
        llm = load_llm(stub.spec(), cache_path=False, max_error_rate=0.1, error_window=10, **FAST)
        with pytest.raises(ErrorRateExceeded):
            llm.generate_batch(conversations(20))


def test_the_abort_can_be_turned_off_and_is_checked():
    with StubOpenAI(failing_requests(3, attempts=2)) as stub:  # 14 of 34 attempts fail, each request answers
        llm = load_llm(stub.spec(), cache_path=False, max_error_rate=1.0, error_window=5, **FAST)
        assert llm.generate_batch(conversations(20)) == ["ok"] * 20
    with StubOpenAI(failing_requests(3, attempts=2)) as stub:  # the same server with the abort on stops it
        llm = load_llm(stub.spec(), cache_path=False, max_error_rate=0.1, error_window=5, **FAST)
        with pytest.raises(ErrorRateExceeded):
            llm.generate_batch(conversations(20))
    for bad in ({"max_error_rate": 1.5}, {"max_error_rate": True}, {"error_window": 0}):
        with pytest.raises(LLMConfigError):
            load_llm("openai:http://127.0.0.1:9/v1#m", cache_path=False, **bad)


def test_preflight_names_the_server_that_does_not_answer():
    with StubOpenAI() as good:
        llm = load_llm(f"openai:{good.url},http://127.0.0.1:9/v1#m", cache_path=False, connect_timeout=2.0)
        with pytest.raises(
            LLMConnectionError,
            match=r"preflight: http://127\.0\.0\.1:9/v1/chat/completions did not "
            r"answer",
        ):
            llm.preflight()
        assert len(good.requests) == 1 and good.requests[0]["max_tokens"] == 1


def test_preflight_reports_what_each_server_says(tmp_path):
    with StubOpenAI() as a, StubOpenAI() as b:
        llm = load_llm(f"openai:{a.url},{b.url}#m", cache_path=False)
        report = llm.preflight()
    assert [r["url"] for r in report] == [a.url, b.url]
    assert all(r["server_header"].startswith("BaseHTTP") for r in report)  # the stub is Python's http.server
    with StubOpenAI(lambda body: (404, {"error": "no such model"})) as c:
        with pytest.raises(LLMConnectionError, match=r"answered HTTP 404 for model 'm'"):
            load_llm(c.spec("m"), cache_path=False).preflight()


def test_the_progress_bar_moves_once_per_request(tmp_path):
    ticks = iter(range(100))
    bar = RequestProgress("table5", total=5, enabled=False, clock=lambda: float(next(ticks)))
    with StubOpenAI() as stub:
        llm = load_llm(stub.spec(), cache_path=tmp_path / "c.sqlite", **FAST)
        llm.progress = bar
        llm.generate_batch(conversations(5))
        llm.generate_batch(conversations(7))  # 5 from the cache, 2 sent
    summary = bar.summary()
    assert summary["requests"] == 7 and summary["cache_hits"] == 5
    assert summary["prompt_tokens"] == 7 * 11 and summary["completion_tokens"] == 7 * 5  # the stub's usage
    assert summary["seconds"] > 0 and summary["completion_tokens_per_s"] == round(35 / summary["seconds"], 1)
    bar.close()


def test_the_progress_bar_counts_tokens_per_second():
    ticks = iter([0.0, 4.0, 6.0, 10.0])  # start, two answers, the summary ten seconds after the start
    bar = RequestProgress("core", total=2, enabled=False, clock=lambda: next(ticks))
    bar.answered(Completion("a", prompt_tokens=100, completion_tokens=30))
    bar.answered(Completion("b", prompt_tokens=100, completion_tokens=20))
    assert bar.summary()["completion_tokens_per_s"] == 5.0  # 50 output tokens in 10 s
