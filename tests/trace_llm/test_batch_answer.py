"""Batch files for llama.cpp's dialect answered locally: an export in the `json_object` dialect (the model's
`structured` option; llama-cpp-python's server refuses `json_schema`), answered by `trace-bench llm answer-batch`
through a live server (a loopback stub refusing json_schema as that server does), imported, then found by the
live run in the cache."""

from __future__ import annotations

import json

import pytest

from tests.support.cli import run_cli
from tests.support.stub_server import StubOpenAI, completion
from trace_llm import DecodingSettings, load_llm
from trace_llm.batch import BatchFileError, import_batch_output, openai_body_parser, shard_requests
from trace_llm.batch_answer import answer_batch_file, output_path
from trace_llm.cache import ResponseCache
from trace_llm.collecting import CollectingLLM, OverlayCache, RequestLedger
from trace_llm.errors import AnswersPending
from trace_llm.structured import SERVER_DIALECT_MEMORY

SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
DEAD = "openai:http://127.0.0.1:9/v1#m"
SETTINGS = DecodingSettings(max_new_tokens=24)  # a reply to SCHEMA always closes in 16 (trace_llm.budget)


def llama_cpp_like(body):
    """llama-cpp-python's server: json_schema refused naming the field; json_object (with a schema) answered."""
    fmt = body.get("response_format")
    if fmt is not None and fmt["type"] != "json_object":
        return (
            400,
            {"error": {"message": f"response_format.type: '{fmt['type']}' is not one of json_object"}},
        )
    if body["messages"][-1]["content"].startswith("fail"):
        return (500, {"error": {"message": "out of memory"}})
    return (
        200,
        {**completion(json.dumps({"name": body["messages"][-1]["content"][:7]})), "model": body["model"]},
    )


@pytest.fixture(autouse=True)
def fresh_memory():
    SERVER_DIALECT_MEMORY.forget()
    yield
    SERVER_DIALECT_MEMORY.forget()


def _export(tmp_path, questions, spec=DEAD, settings=SETTINGS, **options):
    target = load_llm(spec, settings, cache_path=tmp_path / "c.sqlite", **options)
    ledger = RequestLedger()
    collecting = CollectingLLM(target, ledger, OverlayCache(target.cache), "systems")
    with pytest.raises(AnswersPending):
        collecting.generate_json_batch([[{"role": "user", "content": q}] for q in questions], SCHEMA)
    (shard,) = shard_requests(ledger.order, 1)
    source = tmp_path / shard.file_name
    source.write_text("".join(shard.lines), encoding="utf-8")
    return target, shard, source


def _import(path, shard, target, tmp_path):
    """Import the answers file into the export's response cache (what `reproduce --import-batch` does)."""
    with open(path, encoding="utf-8") as lines:
        return import_batch_output(
            lines,
            "out",
            {shard.shard: shard.index},
            ResponseCache(tmp_path / "c.sqlite"),
            openai_body_parser(target),
        )


def test_an_export_in_the_json_object_dialect_answered_locally_imports_for_the_live_run(tmp_path, capsys):
    target, shard, source = _export(tmp_path, ["Cafe Uno", "Cafe Due"], structured="json_object")
    bodies = [json.loads(line)["body"] for line in shard.lines]
    assert {b["response_format"]["type"] for b in bodies} == {"json_object"}  # what llama.cpp's server takes
    with StubOpenAI(llama_cpp_like) as stub:
        rc, text = run_cli(capsys, "llm", "answer-batch", str(source), "--llm", stub.spec("m"))
        assert rc == 0 and len(stub.requests) == 2 and "2 answered, 0 failed" in text
    report = _import(output_path(source), shard, target, tmp_path)
    assert report.imported == 2
    live = load_llm(DEAD, SETTINGS, cache_path=tmp_path / "c.sqlite", structured="json_object")
    convs = [[{"role": "user", "content": q}] for q in ["Cafe Uno", "Cafe Due"]]
    assert live.generate_json_batch(convs, SCHEMA) == [{"name": "Cafe Un"}, {"name": "Cafe Du"}]
    assert live.usage["requests"] == 0


def test_unanswered_requests_are_error_lines_the_import_asks_again(tmp_path):
    target, shard, source = _export(tmp_path, ["Cafe Uno", "fail me"], structured="json_object")
    with StubOpenAI(llama_cpp_like) as stub:
        llm = load_llm(stub.spec("m"), cache_path=False, max_retries=0)
        out, answered, failed = answer_batch_file(llm, source, tmp_path / "answers.jsonl")
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert (answered, failed) == (1, 1) and [r["custom_id"] for r in records] == [
        json.loads(line)["custom_id"] for line in shard.lines
    ]
    assert records[1]["response"] is None and "HTTP 500" in records[1]["error"]["message"]
    report = _import(out, shard, target, tmp_path)
    assert report.imported == 1 and list(report.failed) == [records[1]["custom_id"]]


def test_a_json_schema_export_is_refused_by_such_a_server_line_by_line(tmp_path):
    _, _, source = _export(tmp_path, ["Cafe Uno"])  # the default export dialect: json_schema
    with StubOpenAI(llama_cpp_like) as stub:
        out, answered, failed = answer_batch_file(load_llm(stub.spec("m"), cache_path=False), source)
    (record,) = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert (answered, failed) == (0, 1) and "json_schema" in record["error"]["message"]


def test_a_file_that_is_not_a_batch_input_is_named(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"custom_id": "a", "body": {}}\n[1, 2]\n', encoding="utf-8")
    with pytest.raises(BatchFileError, match=r"bad\.jsonl, line 2: expected a batch request"):
        answer_batch_file(load_llm(DEAD, cache_path=False), bad)
    rc, text = run_cli(capsys, "llm", "answer-batch", str(bad), "--llm", "smollm2")
    assert rc == 2 and "expected openai:BASE_URL#MODEL" in text


@pytest.mark.slow
def test_llama_cpp_python_s_server_answers_a_json_object_export_of_the_packaged_model(
    llama_cpp_server, tmp_path
):
    settings = DecodingSettings(
        max_new_tokens=48
    )  # the schema's reply always closes in 48 (trace_llm.budget)
    questions = ["Name one museum in Tampa.", "Name one cafe in Reno."]
    target, shard, source = _export(
        tmp_path, questions, llama_cpp_server.spec, settings, structured="json_object"
    )
    out, answered, failed = answer_batch_file(load_llm(llama_cpp_server.spec, cache_path=False), source)
    assert (answered, failed) == (2, 0)
    report = _import(out, shard, target, tmp_path)
    assert report.imported == 2 and not report.failed
    live = load_llm(
        DEAD.replace("#m", f"#{target.model}"),
        settings,
        cache_path=tmp_path / "c.sqlite",
        structured="json_object",
    )
    values = live.generate_json_batch(
        [[{"role": "user", "content": q}] for q in questions], SCHEMA, max_repairs=0
    )
    assert live.usage["requests"] == 0 and all(
        isinstance(v, dict) and isinstance(v.get("name"), str) for v in values
    )
