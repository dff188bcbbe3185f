"""Structured outputs in the LLM layer: the server dialects of `auto` (tried once, a refusal falls back and is
remembered per server and counted), the dialect in the cache key, and grammar-constrained decoding in process
(valid by construction, even from a random-weight model)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.stub_server import StubOpenAI
from trace_llm import DecodingSettings, LLMConfigError, LLMError, load_llm
from trace_llm.budget import fit_schema
from trace_llm.jsonout import validation_errors
from trace_llm.options import OPTIONS
from trace_llm.structured import (
    DIALECTS,
    SERVER_DIALECT_MEMORY,
    STRUCTURED_MODES,
    Constraint,
    dialect_table,
    dialects_to_try,
    is_refusal,
    response_format,
)

SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
USER = [{"role": "user", "content": "Name one cafe."}]


@pytest.fixture(autouse=True)
def fresh_memory():
    SERVER_DIALECT_MEMORY.forget()
    yield
    SERVER_DIALECT_MEMORY.forget()


def server(accepts: tuple[str, ...], refusal: tuple[int, str]) -> StubOpenAI:
    """A stub that answers valid JSON when the request's response_format type is one it `accepts` (or absent)."""

    def respond(body):
        fmt = body.get("response_format")
        if fmt is not None and fmt["type"] not in accepts:
            return (refusal[0], {"error": {"message": refusal[1].format(kind=fmt["type"])}})
        return (200, json.dumps({"name": "Cafe Uno"}))

    return StubOpenAI(respond)


def kinds(stub: StubOpenAI) -> list[str | None]:
    return [(b.get("response_format") or {}).get("type") for b in stub.requests]


def test_response_formats_of_the_two_server_dialects():
    c = Constraint.json(SCHEMA)
    assert response_format("json_schema", c) == {
        "type": "json_schema",
        "json_schema": {"name": "answer", "schema": SCHEMA, "strict": True},
    }
    assert response_format("json_object", c) == {"type": "json_object", "schema": SCHEMA}
    assert response_format("prompt", c) is None
    # llama-cpp-python's server builds its grammar with its own converter, which cannot read `\d`: json_object
    # gets the schema spelled for that converter, json_schema (vLLM, OpenAI, SGLang) the schema as written
    score = Constraint.json({"type": "string", "pattern": r"^\d{1,2}$"})
    assert response_format("json_object", score)["schema"] == {"type": "string", "pattern": "^[0-9]{1,2}$"}
    assert response_format("json_schema", score)["json_schema"]["schema"]["pattern"] == r"^\d{1,2}$"
    assert is_refusal(400, "Invalid response_format: json_schema not supported")
    assert not is_refusal(400, "context length exceeded") and not is_refusal(503, "response_format")
    # llama-cpp-python's server: a 500 carrying the validation error of the field
    assert is_refusal(500, "{'loc': ('body', 'response_format', 'type'), 'msg': \"Input should be 'text'\"")
    assert not is_refusal(500, "internal error")
    with pytest.raises(LLMConfigError, match="gbnf"):
        Constraint("gbnf", grammar="no start rule")


def test_one_row_per_dialect_gives_the_modes_autos_order_the_refusals_and_the_docs():
    names = tuple(d.name for d in DIALECTS)
    assert STRUCTURED_MODES == ("auto", *names, "prompt") == OPTIONS["structured"].choices
    assert dialects_to_try("auto") == (*names, "prompt") and dialects_to_try(names[-1]) == (names[-1],)
    assert " / ".join(names) in OPTIONS["structured"].help  # --structured's help names each one
    for d in DIALECTS:
        sent = response_format(d.name, Constraint.json(SCHEMA))
        assert sent is not None and sent["type"] == d.type and d.servers
        assert is_refusal(400, f"unsupported type {d.type!r}")
    assert (
        response_format("json_schema", Constraint.gbnf('root ::= "a"')) is None
    )  # no server takes a grammar
    with pytest.raises(LLMConfigError, match="no response_format for dialect 'grammar'"):
        response_format("grammar", Constraint.json(SCHEMA))
    docs = (Path(__file__).resolve().parents[2] / "docs" / "llm.md").read_text(encoding="utf-8")
    assert dialect_table() in docs


def test_auto_uses_json_schema_where_the_server_takes_it(tmp_path):
    with server(("json_schema",), (400, "")) as stub:
        llm = load_llm(stub.spec(), cache_path=False, max_retries=0)
        assert (
            llm.generate_json_batch([USER, [{"role": "user", "content": "Another."}]], SCHEMA)
            == [{"name": "Cafe Uno"}] * 2
        )
        assert kinds(stub) == ["json_schema", "json_schema"]
        sent = stub.requests[0]["response_format"]["json_schema"]["schema"]
        assert (
            sent == fit_schema(SCHEMA, llm.settings.max_new_tokens) != SCHEMA
        )  # bounded to close in the budget
        assert llm.usage["constrained"] == 2 and llm.usage["dialect_fallbacks"] == 0


def test_auto_falls_back_on_a_400_once_remembers_the_server_and_counts(tmp_path):
    # llama-cpp-python's server: json_schema refused with a 400 naming the field, json_object with a schema taken
    with server(
        ("json_object",), (400, "response_format.type: '{kind}' is not one of json_object, text")
    ) as stub:
        llm = load_llm(stub.spec(), cache_path=tmp_path / "c.sqlite", max_retries=0)
        convs = [[{"role": "user", "content": f"Cafe {i}?"}] for i in range(3)]
        assert all(v == {"name": "Cafe Uno"} for v in llm.generate_json_batch(convs, SCHEMA))
        assert kinds(stub) == ["json_schema", "json_object", "json_object", "json_object"]  # tried once
        assert SERVER_DIALECT_MEMORY.get(stub.url) == "json_object"
        again = load_llm(stub.spec(), cache_path=False, max_retries=0)  # another client of the same server
        again.generate_json(USER, SCHEMA)
        assert kinds(stub)[-1] == "json_object" and len(stub.requests) == 5
        assert llm.usage["constrained"] == 3 and llm.usage["requests"] == 3


def test_a_server_refusing_response_format_altogether_gets_prompt_and_repair_counted(tmp_path):
    # transformers serve: any response_format refused (422 naming the field)
    with server((), (422, "Unexpected fields in the request: {{'response_format'}}")) as stub:
        llm = load_llm(stub.spec(), cache_path=tmp_path / "c.sqlite", max_retries=0)
        convs = [[{"role": "user", "content": f"Cafe {i}?"}] for i in range(3)]
        assert all(v == {"name": "Cafe Uno"} for v in llm.generate_json_batch(convs, SCHEMA))
        assert kinds(stub) == ["json_schema", "json_object", None, None, None]
        assert llm.usage["dialect_fallbacks"] == 3 and llm.usage["constrained"] == 0
        assert (
            "Reply with only a JSON value" in stub.requests[-1]["messages"][-1]["content"]
        )  # schema by prompt
        # the dialect is part of the cache key: the same request asked in prompt mode finds the answers
        cached = load_llm(stub.spec(), cache_path=tmp_path / "c.sqlite", max_retries=0, structured="prompt")
        cached.generate_json_batch(convs, SCHEMA)
        assert cached.usage["cache_hits"] == 3 and len(stub.requests) == 5


def test_explicit_dialect_refused_is_an_error_naming_it():
    with server((), (400, "response_format json_schema is not supported")) as stub:
        llm = load_llm(stub.spec(), cache_path=False, max_retries=0, structured="json_schema")
        with pytest.raises(LLMError, match="refused response_format json_schema"):
            llm.generate_json(USER, SCHEMA)


def test_prompt_mode_sends_no_response_format_and_other_errors_are_not_refusals():
    with server(("json_schema",), (400, "")) as stub:
        llm = load_llm(stub.spec(), cache_path=False, max_retries=0, structured="prompt")
        llm.generate_json(USER, SCHEMA)
        assert kinds(stub) == [None]
    with StubOpenAI(lambda body: (400, {"error": "bad api key"})) as stub:
        with pytest.raises(LLMError, match="bad api key"):
            load_llm(stub.spec(), cache_path=False, max_retries=0).generate_json(USER, SCHEMA)
        assert len(stub.requests) == 1  # not a refusal of the dialect: no other dialect tried


def test_cache_key_carries_the_dialect(tmp_path):
    with server(("json_schema",), (400, "")) as stub:
        path = tmp_path / "c.sqlite"
        load_llm(stub.spec(), cache_path=path, max_retries=0).generate_json(USER, SCHEMA)
        load_llm(stub.spec(), cache_path=path, max_retries=0, structured="prompt").generate_json(USER, SCHEMA)
        assert kinds(stub) == ["json_schema", None]  # a prompt-mode answer is not a constrained one
    SERVER_DIALECT_MEMORY.forget()
    dead = "openai:http://127.0.0.1:9/v1#stub-model"  # nothing listens: a wholly cached batch needs no server
    assert load_llm(dead, cache_path=path, max_retries=0).generate_json(USER, SCHEMA) == {"name": "Cafe Uno"}


def test_grammar_makes_a_random_model_answer_valid_json(tiny_llama_dir):
    pytest.importorskip("xgrammar")
    schema = {
        "type": "object",
        "properties": {
            "ranked_ids": {
                "type": "array",
                "items": {"type": "string", "enum": ["P1", "P2", "P3"]},
                "minItems": 1,
                "maxItems": 3,
            },
            "score": {"type": "integer", "minimum": 1, "maximum": 5},
        },
        "required": ["ranked_ids", "score"],
    }
    settings = DecodingSettings(max_new_tokens=60)
    convs = [[{"role": "user", "content": f"Rank the cafes {i}."}] for i in range(3)]
    free = load_llm(f"hf:{tiny_llama_dir}", settings, cache_path=False, structured="prompt")
    assert all(isinstance(a, Exception) for a in free.generate_json_batch(convs, schema, max_repairs=0))
    llm = load_llm(f"hf:{tiny_llama_dir}", settings, cache_path=False, batch_size=2)
    answers = llm.generate_json_batch(convs, schema, max_repairs=0)  # batches of 2 and 1: one matcher per row
    assert all(validation_errors(a, schema) == [] for a in answers), answers
    assert llm.usage["constrained"] == 3 and llm.usage["json_failures"] == 0 and llm.mask_seconds > 0
    assert llm.describe()["structured"] == "auto"


def test_a_server_that_accepts_response_format_and_ignores_it_is_found_out():
    # transformers serve 5.x: response_format is accepted, logged as ignored, and the reply is free text
    def respond(body):
        if body.get("response_format") is not None:
            return (200, "Sure! Cafe Uno is nice.")
        return (200, json.dumps({"name": "Cafe Uno"}))

    with StubOpenAI(respond) as stub:
        llm = load_llm(stub.spec(), cache_path=False, max_retries=0)
        assert llm.generate_json(USER, SCHEMA) == {"name": "Cafe Uno"}
        assert kinds(stub) == ["json_schema", "json_object", None]
        assert SERVER_DIALECT_MEMORY.get(stub.url) == "prompt"
        assert (
            llm.usage["dialect_fallbacks"] == 1 and llm.usage["requests"] == 3
        )  # the two probes are paid for


@pytest.mark.parametrize("accepts", [("json_object",), ()])  # llama.cpp's server; one refusing every dialect
def test_a_resumed_batch_sends_no_cached_probe_and_counts_as_an_uninterrupted_one(tmp_path, accepts):
    refusal = (400, "response_format.type: '{kind}' is not one of json_object, text")
    convs = [[{"role": "user", "content": f"Cafe {i}?"}] for i in range(4)]
    with server(accepts, refusal) as stub:
        whole = load_llm(stub.spec(), cache_path=tmp_path / "whole.sqlite", max_retries=0)
        whole.generate_json_batch(convs, SCHEMA)
        uninterrupted = dict(whole.usage)
        first = load_llm(stub.spec(), cache_path=tmp_path / "resumed.sqlite", max_retries=0)
        SERVER_DIALECT_MEMORY.forget()
        first.generate_json_batch(convs[2:], SCHEMA)  # the run stopped after the last two of the batch
        SERVER_DIALECT_MEMORY.forget()  # the resume is a new process: nothing remembered
        sent_before = len(stub.requests)
        resumed = load_llm(stub.spec(), cache_path=tmp_path / "resumed.sqlite", max_retries=0)
        assert resumed.generate_json_batch(convs, SCHEMA) == [{"name": "Cafe Uno"}] * 4
        sent = [(b.get("response_format") or {}).get("type") for b in stub.requests[sent_before:]]
        asked = [b["messages"][-1]["content"].split("\n")[0] for b in stub.requests[sent_before:]]
    # only the two answers missing go out (no probe of a cached answer), in the dialect the cache's answers name;
    # a server refusing every dialect is asked each once more (refused, nothing answered, nothing counted)
    refused = [] if accepts else ["json_schema", "json_object"]
    assert sent == [*refused, *[accepts[0] if accepts else None] * 2]
    assert sorted(asked[-2:]) == ["Cafe 0?", "Cafe 1?"]
    answers = ("requests", "cache_hits")
    assert sum(resumed.usage[k] for k in answers) == sum(uninterrupted[k] for k in answers) == 4
    for kind in ("constrained", "dialect_fallbacks", "json_failures"):
        assert resumed.usage[kind] + first.usage[kind] == uninterrupted[kind], kind
