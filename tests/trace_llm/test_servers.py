"""Several OpenAI-compatible servers sharing the load of one model (`openai:URL1,URL2#MODEL`): small scripted
HTTP servers on 127.0.0.1 stand in for vLLM / TGI replicas (what is tested is the client, not a model)."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from trace_llm import LLMConfigError, LLMConnectionError, load_llm, parse_spec


class Replica:
    """A chat-completions server that answers after `delay` seconds and records how busy it got."""

    def __init__(self, name: str, delay: float = 0.05):
        self.name, self.delay = name, delay
        self.count = self.in_flight = self.max_in_flight = 0
        self.lock = threading.Lock()
        replica = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                return None

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
                with replica.lock:
                    replica.count += 1
                    replica.in_flight += 1
                    replica.max_in_flight = max(replica.max_in_flight, replica.in_flight)
                time.sleep(replica.delay)
                with replica.lock:
                    replica.in_flight -= 1
                content = f"{replica.name}: {body['messages'][-1]['content']}"
                payload = json.dumps(
                    {
                        "choices": [{"message": {"content": content}, "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 3, "completion_tokens": 2},
                    }
                ).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def replicas():
    made = [Replica("a"), Replica("b")]
    yield made
    for r in made:
        r.close()


def test_spec_with_several_urls():
    spec = parse_spec("openai:http://a:1/v1/, http://b:2/v1#org/model")
    assert spec.target == "http://a:1/v1,http://b:2/v1" and spec.model == "org/model"
    with pytest.raises(LLMConfigError, match="listed twice"):
        parse_spec("openai:http://a/v1,http://a/v1#m")
    with pytest.raises(LLMConfigError, match="must start with http"):
        parse_spec("openai:http://a/v1,b/v1#m")


def test_requests_are_shared_and_each_server_stays_within_the_concurrency(replicas):
    a, b = replicas
    llm = load_llm(f"openai:{a.url},{b.url}#m", cache_path=False, concurrency=3)
    convs = [[{"role": "user", "content": f"q{i}"}] for i in range(24)]
    answers = llm.generate_batch(convs)
    assert [x.split(": ", 1)[1] for x in answers] == [
        f"q{i}" for i in range(24)
    ]  # in order, whoever answered
    assert a.count + b.count == 24 and min(a.count, b.count) >= 8
    assert a.max_in_flight <= 3 and b.max_in_flight <= 3 and a.max_in_flight + b.max_in_flight > 3
    assert llm.describe()["base_urls"] == [a.url, b.url] and llm.describe()["base_url"] == a.url


def test_a_server_that_is_down_leaves_the_work_to_the_others(replicas):
    a, b = replicas
    a.close()  # nothing listens there any more
    llm = load_llm(f"openai:{a.url},{b.url}#m", cache_path=False, concurrency=2, max_retries=2, backoff=0.01)
    answers = llm.generate_batch([[{"role": "user", "content": f"q{i}"}] for i in range(6)])
    assert all(x.startswith("b: ") for x in answers) and b.count == 6


def test_all_servers_down_names_them(replicas):
    a, b = replicas
    a.close()
    b.close()
    llm = load_llm(f"openai:{a.url},{b.url}#m", cache_path=False, max_retries=1, backoff=0.01)
    with pytest.raises(LLMConnectionError) as e:
        llm.generate_batch([[{"role": "user", "content": "q"}]])
    assert a.url in str(e.value) and b.url in str(e.value)
