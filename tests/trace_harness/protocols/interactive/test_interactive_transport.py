"""External systems that misbehave at the transport level: a reply dripped past
the deadline, a reply larger than the cap, text that is not valid Unicode, JSON nested too deeply, a malformed
URL, and a system that cannot be reached. A bad reply loses its turn; an unreachable system stops the run, which
the same call resumes. Scripted loopback servers (tests/support/scripted_http.py) play the systems."""

from __future__ import annotations

import json

import pytest

from tests.support.cli import run_cli
from tests.support.scripted_http import Reply, ScriptedHTTP, json_reply
from trace_dataset.datadir import kb_dir
from trace_dataset.io import read_json, read_jsonl
from trace_dataset.kb.store import KnowledgeBase
from trace_harness.protocols.interactive.http_system import HTTPSystem
from trace_harness.protocols.interactive.reply import SystemUnreachable
from trace_harness.protocols.interactive.run import run_interactive


@pytest.fixture(scope="module")
def kb(small_corpus):
    return KnowledgeBase.load(kb_dir(small_corpus))


def ranking(body, response="How about the first one?"):
    return {"ranked_poi_ids": body["candidate_poi_ids"], "response": response, "citations": {}}


def by_turn(out):
    return {p["turn_id"]: p for p in read_jsonl(out / "predictions.jsonl")}


def run(url, small_corpus, out, kb, **options):
    return run_interactive(url, small_corpus, out, n=1, turns=3, progress=False, n_boot=20, kb=kb, **options)


def test_a_dripped_reply_is_cut_at_the_whole_reply_deadline(small_corpus, kb, tmp_path):
    """Every byte came within --timeout 1 s, so a reply dripped over minutes was kept; now the whole reply must
    arrive within the deadline (a late one is lost, never kept)."""

    def respond(body):
        if body["turn_id"] == 1:  # the first system turn: 4 KB at 100 bytes per 0.05 s, 2 s in all
            return json_reply(ranking(body, "x" * 4000), drip=0.05, piece=100)
        return json_reply(ranking(body))

    with ScriptedHTTP(respond) as server:
        run(server.url, small_corpus, tmp_path / "out", kb, timeout=0.5)
    first = by_turn(tmp_path / "out")[1]
    assert first["meta"]["lost"] == "timeout" and "whole reply" in first["meta"]["detail"]
    assert first["response"] == "" and first["ranked_poi_ids"] == []


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "streamed"])
def test_a_reply_over_the_cap_loses_the_turn_unread(small_corpus, kb, tmp_path, declared):
    sent = {"pieces": 0}

    def huge(body):
        def pieces():
            yield b'{"ranked_poi_ids": [], "response": "'
            for _ in range(400):  # 400 x 64 KiB = 25 MiB, far past the 256 KiB cap
                sent["pieces"] += 1
                yield b"y" * 65536
            yield b'"}'

        if body["turn_id"] == 1:
            return Reply(body=b"".join(pieces())) if declared else Reply(body=pieces())
        return json_reply(ranking(body))

    with ScriptedHTTP(huge) as server:
        m = run(server.url, small_corpus, tmp_path / "out", kb, max_reply_bytes=256 * 1024)
    first = by_turn(tmp_path / "out")[1]
    assert first["meta"]["lost"] == "garbage" and "--max-reply-bytes" in first["meta"]["detail"]
    assert m["lost_turns"]["by_reason"] == {"garbage": 1}
    if not declared:
        assert sent["pieces"] < 400  # the client stopped reading and hung up


def test_a_lone_surrogate_and_deep_json_are_lost_turns_and_the_next_request_goes_out(
    small_corpus, kb, tmp_path
):
    def respond(body):
        if body["turn_id"] == 1:
            return Reply(body=b'{"ranked_poi_ids": [], "response": "bad \\ud800 text", "citations": {}}')
        if body["turn_id"] == 3:
            return Reply(body=b"[" * 100_000 + b"]" * 100_000)
        return json_reply(ranking(body))

    with ScriptedHTTP(respond) as server:
        m = run(server.url, small_corpus, tmp_path / "out", kb)
        turns = [b["turn_id"] for b in server.bodies]
    got = by_turn(tmp_path / "out")
    assert got[1]["meta"]["lost"] == "garbage" and "lone surrogate" in got[1]["meta"]["detail"]
    assert got[3]["meta"]["lost"] == "garbage" and "nested too deeply" in got[3]["meta"]["detail"]
    assert turns == [1, 3, 5] and m["n_dialogues"] == 1  # the request after the surrogate went out, valid


def test_a_malformed_url_is_refused_before_any_output(small_corpus, tmp_path, capsys):
    out = tmp_path / "out"
    rc, text = run_cli(
        capsys, "interact", "--system", "http://[::1", "--data", small_corpus, "--out", out, "--no-progress"
    )
    assert rc == 2 and text.count("\n") == 1 and "--system 'http://[::1': not a valid URL" in text
    assert not out.exists()
    with pytest.raises(Exception, match="not a valid URL"):
        HTTPSystem("http://[::1", kb=None)


def test_an_unreachable_system_stops_the_run_and_the_same_call_resumes(small_corpus, kb, tmp_path):
    """A connection refused lost every turn of every dialogue and exited 0; now it stops the run, keeps the
    finished dialogues, and the same call resumes once the system is back."""
    calls = {"n": 0}

    def respond(body):
        calls["n"] += 1
        # the first dialogue's three turns are answered; the server goes away while answering the last one
        return json_reply(ranking(body), stop_server=calls["n"] == 3)

    server = ScriptedHTTP(respond).start()
    out = tmp_path / "out"
    options = dict(n=2, turns=3, progress=False, n_boot=20, kb=kb, batch_dialogues=1)
    with pytest.raises(SystemUnreachable, match="cannot connect.*rerun the same command to resume"):
        run_interactive(server.url, small_corpus, out, **options)
    first = [item["record"]["dialogue_id"] for item in read_jsonl(out / "progress.jsonl")]
    assert len(first) == 1 and read_json(out / "predictions.jsonl.meta.json")["complete"] is False
    assert not (out / "metrics.json").exists()
    server.start()  # back, on the same port
    try:
        done_before = len(server.bodies)
        m = run_interactive(server.url, small_corpus, out, **options)
    finally:
        server.stop()
    resumed = {b["dialogue_id"] for b in server.bodies[done_before:]}
    assert m["n_dialogues"] == 2 and len(resumed) == 1 and not set(first) & resumed


def test_interact_refuses_bad_numbers_when_parsed(small_corpus, tmp_path, capsys):
    base = ["interact", "--system", "popularity", "--data", small_corpus, "--out", tmp_path / "out"]
    for option, value, expected in (
        ("--seed", "-1", "expected an integer >= 0"),
        ("--timeout", "inf", "expected a finite number of seconds > 0"),
        ("--timeout", "nan", "expected a finite number of seconds > 0"),
        ("--max-reply-bytes", "0", "expected a size of at least 1 byte"),
        ("--param", "k=NaN", "expected a finite number"),
    ):
        rc, text = run_cli(capsys, *base, option, value)
        assert rc == 2 and f"argument {option}:" in text and expected in text, text
    assert not (tmp_path / "out").exists()


def test_a_reply_of_a_row_over_the_submission_limit_is_lost(small_corpus, kb, tmp_path):
    from trace_dataset.constants import MAX_PREDICTION_LINE_BYTES

    def respond(body):
        if body["turn_id"] == 1:
            return json_reply(ranking(body, "z" * MAX_PREDICTION_LINE_BYTES))
        return json_reply(ranking(body))

    with ScriptedHTTP(respond) as server:
        run(server.url, small_corpus, tmp_path / "out", kb, max_reply_bytes=4 * MAX_PREDICTION_LINE_BYTES)
    first = by_turn(tmp_path / "out")[1]
    assert first["meta"]["lost"] == "garbage" and "what trace-bench submit accepts" in first["meta"]["detail"]
    sizes = [len(line) for line in (tmp_path / "out" / "predictions.jsonl").read_bytes().splitlines()]
    assert max(sizes) <= MAX_PREDICTION_LINE_BYTES
    assert json.loads((tmp_path / "out" / "metrics.json").read_text())["lost_turns"]["total"] == 1


def test_a_chat_endpoint_that_keeps_failing_stops_the_run_instead_of_each_conversation(
    small_corpus, kb, tmp_path
):
    """Before, a failed batch was retried one conversation at a time with the full retry budget each (129 s for
    one dialogue, about 27 h for a test split), then the run exited 0 with every turn lost."""
    from tests.support.stub_server import StubOpenAI
    from trace_harness.protocols.interactive.systems import load_system
    from trace_llm import LLMConnectionError

    with StubOpenAI(responder=lambda body: (503, {"error": "overloaded"})) as stub:
        system = load_system(
            stub.spec(), kb, llm_options={"cache_path": False, "max_retries": 1, "backoff": 0.01}
        )
        with pytest.raises(LLMConnectionError, match="no answer after 2 attempts"):
            run_interactive(
                system, small_corpus, tmp_path / "out", n=3, turns=3, progress=False, n_boot=20, kb=kb
            )
        # one batch of three conversations, two attempts at most each: then it stops
        assert 2 <= len(stub.requests) <= 3 * 2
    assert not (tmp_path / "out" / "metrics.json").exists()


def test_the_llm_traveler_stops_on_a_connection_failure_and_falls_back_on_an_output_error():
    from tests.support.stub_server import StubOpenAI
    from trace_harness.protocols.interactive.simulator.llm import generate_or_none
    from trace_llm import LLMConnectionError, load_llm

    conversations = [[{"role": "user", "content": f"say hello {i}"}] for i in range(3)]
    with StubOpenAI(responder=lambda body: (503, {"error": "down"})) as stub:
        llm = load_llm(stub.spec(), cache_path=False, max_retries=1, backoff=0.01)
        with pytest.raises(LLMConnectionError):
            generate_or_none(llm, conversations)
        assert 2 <= len(stub.requests) <= 3 * 2  # not again one conversation at a time
    refused = {"say hello 1"}  # the server refuses one request (HTTP 400): only that answer is lost

    def answer(body):
        text = body["messages"][-1]["content"]
        return (400, {"error": "bad request"}) if text in refused else (200, f"hi from {text[-1]}")

    with StubOpenAI(responder=answer) as stub:
        llm = load_llm(stub.spec(), cache_path=False, max_retries=1, backoff=0.01)
        assert generate_or_none(llm, conversations) == ["hi from 0", None, "hi from 2"]


def test_headers_dripped_past_the_deadline_lose_the_turn(kb):
    """Each header line comes within the read timeout, so only a deadline over the whole request cuts it."""
    import socket
    import threading

    from trace_harness.protocols.interactive.http_system import _LostTurn

    stop = threading.Event()
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        conn, _ = listener.accept()
        conn.recv(65536)
        conn.sendall(b"HTTP/1.1 200 OK\r\n")
        while not stop.wait(0.1):
            try:
                conn.sendall(b"X-Drip: 1\r\n")
            except OSError:
                break
        conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    system = HTTPSystem(f"http://127.0.0.1:{listener.getsockname()[1]}/", kb, timeout=0.5)
    try:
        with pytest.raises(_LostTurn, match="whole reply") as lost:
            system._post({"turn_id": 1})
        assert lost.value.reason == "timeout"
    finally:
        stop.set()
        system.close()
        thread.join(5)
        listener.close()
