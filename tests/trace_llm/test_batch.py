"""trace_llm.collecting and trace_llm.batch: synthetic answers, the collecting LLM, batch input shards (limits, one model per file, the live body), the output
import (refusals naming ids and models, cache keys shared with the live path), the collecting LLM."""

from __future__ import annotations

import json

import pytest

from tests.support.stub_server import StubOpenAI
from trace_llm import DecodingSettings, load_llm
from trace_llm.batch import (
    BatchFileError,
    import_batch_output,
    openai_body_parser,
    same_model,
    shard_requests,
)
from trace_llm.cache import ResponseCache
from trace_llm.collecting import (
    CollectingLLM,
    OverlayCache,
    RequestLedger,
    minimal_instance,
    schema_of,
    synthetic_reply,
)
from trace_llm.errors import AnswersPending, LLMRunStopped
from trace_llm.jsonout import schema_instruction, validation_errors

RANKING = {
    "type": "object",
    "properties": {
        "ranked_ids": {
            "type": "array",
            "items": {"type": "string", "enum": ["P1", "P2"]},
            "minItems": 1,
            "uniqueItems": True,
        },
        "response": {"type": "string", "minLength": 1},
    },
    "required": ["ranked_ids", "response"],
}
DELTA = {
    "type": "object",
    "properties": {
        "price_max": {"type": ["integer", "null"], "minimum": 1, "maximum": 4},
        "noise": {"type": ["string", "null"], "enum": ["quiet", None]},
    },
    "additionalProperties": False,
}
JUDGE = {
    "type": "object",
    "properties": {k: {"type": "integer", "minimum": 1, "maximum": 5} for k in "abc"},
    "required": ["a", "b", "c"],
    "additionalProperties": False,
}
DEAD = "openai:http://127.0.0.1:9/v1#m"  # nothing listens there: any request would fail


@pytest.mark.parametrize(
    "schema",
    [
        RANKING,
        DELTA,
        JUDGE,
        {"type": "array", "minItems": 2, "items": {"type": "number", "exclusiveMinimum": 3}},
    ],
)
def test_synthetic_replies_are_valid_for_the_schema_the_request_carries(schema):
    messages = [{"role": "user", "content": "Rank them.\n\n" + schema_instruction(schema)}]
    assert schema_of(messages) == schema
    value = json.loads(synthetic_reply(messages))
    assert validation_errors(value, schema) == []
    assert value == minimal_instance(schema)


def test_free_text_requests_get_the_fixed_text():
    assert synthetic_reply([{"role": "user", "content": "Say hello."}], "hi") == "hi"


def _ledger_llm(tmp_path, spec=DEAD, **kw):
    target = load_llm(spec, DecodingSettings(max_new_tokens=7), cache_path=tmp_path / "c.sqlite", **kw)
    ledger = RequestLedger()
    return target, ledger, CollectingLLM(target, ledger, OverlayCache(target.cache), "systems")


def test_the_collecting_llm_records_the_live_body_and_never_sends(tmp_path):
    target, ledger, llm = _ledger_llm(tmp_path)
    conv = [{"role": "user", "content": "x"}]
    with pytest.raises(AnswersPending) as caught:
        llm.generate_batch([conv, conv, [{"role": "user", "content": "y"}]])
    assert isinstance(caught.value, LLMRunStopped) and caught.value.count == 2  # deduplicated in the batch
    assert [r.body for r in ledger.order] == [
        target._body(conv, target.settings),
        target._body([{"role": "user", "content": "y"}], target.settings),
    ]
    assert llm.describe() == target.describe() and llm.cache_model == target.cache_model
    assert [r.role for r in ledger.order] == ["systems", "systems"]


def _shards(tmp_path, n=5, **limits):
    target, ledger, llm = _ledger_llm(tmp_path)
    for i in range(n):
        with pytest.raises(AnswersPending):
            llm.generate([{"role": "user", "content": f"question {i} " + "x" * 50}])
    return target, shard_requests(ledger.order, 1, **limits)


def test_shards_respect_the_request_and_byte_limits(tmp_path):
    _, by_count = _shards(tmp_path, 5, max_requests=2)
    assert [len(s.lines) for s in by_count] == [2, 2, 1]
    assert [s.shard for s in by_count] == ["r001s001", "r001s002", "r001s003"]
    line = by_count[0].lines[0]
    _, by_bytes = _shards(tmp_path / "b", 5, max_bytes=2 * len(line.encode()) + 10)
    assert all(sum(len(x.encode()) for x in s.lines) <= 2 * len(line.encode()) + 10 for s in by_bytes)
    assert sum(len(s.lines) for s in by_bytes) == 5 and len(by_bytes) == 3
    record = json.loads(line)
    assert record["custom_id"] == f"r001s001-000000-{by_count[0].index['requests'][0][0][:16]}"
    assert record["method"] == "POST"
    assert record["url"] == "/v1/chat/completions" and record["body"]["model"] == "m"


def test_one_model_per_file(tmp_path):
    ledger = RequestLedger()
    for model in ("a", "b"):
        target = load_llm(f"openai:http://127.0.0.1:9/v1#{model}", cache_path=False)
        with pytest.raises(AnswersPending):
            CollectingLLM(target, ledger, OverlayCache(None)).generate([{"role": "user", "content": "q"}])
    shards = shard_requests(ledger.order, 3)
    assert [(s.model, len(s.lines), s.file_name) for s in shards] == [
        ("a", 1, "r003s001-a.jsonl"),
        ("b", 1, "r003s002-b.jsonl"),
    ]


def test_in_process_models_cannot_go_to_batch_files(tmp_path):
    from trace_llm import LLMConfigError
    from trace_llm.collecting import PendingRequest

    request = PendingRequest("k", "hf", "m", "m|float32", {}, [], None, 1, "x")
    with pytest.raises(LLMConfigError, match="batch files are for OpenAI-compatible models"):
        shard_requests([request], 1)


def _outputs(shard, model="m", drop=0, extra=None, status=200):
    lines = []
    for i, line in enumerate(shard.lines[: len(shard.lines) - drop]):
        cid = json.loads(line)["custom_id"]
        body = {
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": f"answer {i}"},
                }
            ],
            "usage": {"prompt_tokens": 5, "completion_tokens": 2},
        }
        lines.append(
            json.dumps(
                {
                    "id": f"b{i}",
                    "custom_id": cid,
                    "response": {"status_code": status, "body": body},
                    "error": None,
                }
            )
        )
    return lines + list(extra or [])


def test_import_fills_the_cache_with_the_live_keys(tmp_path):
    target, shards = _shards(tmp_path, 3)
    indexes = {s.shard: s.index for s in shards}
    cache = ResponseCache(tmp_path / "c.sqlite")
    report = import_batch_output(_outputs(shards[0]), "out.jsonl", indexes, cache, openai_body_parser(target))
    assert report.imported == 3 and report.models == ["m"] and report.completion_tokens == 6
    # the live object, with a dead URL, now answers every question from the cache: nothing is sent
    live = load_llm(DEAD, DecodingSettings(max_new_tokens=7), cache_path=tmp_path / "c.sqlite")
    answers = live.generate_batch(
        [[{"role": "user", "content": f"question {i} " + "x" * 50}] for i in range(3)]
    )
    assert answers == ["answer 0", "answer 1", "answer 2"] and live.usage["requests"] == 0


def test_import_refuses_another_models_file_naming_it(tmp_path):
    target, shards = _shards(tmp_path, 2)
    cache = ResponseCache(tmp_path / "c.sqlite")
    with pytest.raises(BatchFileError, match=r"another model than the exported 'm'.*answered by 'other'"):
        import_batch_output(
            _outputs(shards[0], model="other"),
            "o",
            {s.shard: s.index for s in shards},
            cache,
            openai_body_parser(target),
        )
    assert len(cache) == 0  # nothing of the file is imported


def test_import_refuses_missing_and_unknown_ids_naming_them(tmp_path):
    target, shards = _shards(tmp_path, 3)
    indexes = {s.shard: s.index for s in shards}
    cache = ResponseCache(tmp_path / "c.sqlite")
    parse = openai_body_parser(target)
    with pytest.raises(
        BatchFileError,
        match=r"1 request\(s\) of the exported file\(s\) r001s001 have no line: "
        r"r001s001-000002",
    ):
        import_batch_output(_outputs(shards[0], drop=1), "o", indexes, cache, parse)
    stray = json.dumps({"custom_id": "r009s001-000000", "response": {"status_code": 200, "body": {}}})
    with pytest.raises(BatchFileError, match=r"match no exported request: 'r009s001-000000' \(line 4\)"):
        import_batch_output(_outputs(shards[0], extra=[stray]), "o", indexes, cache, parse)
    with pytest.raises(BatchFileError, match="line 1: not JSON"):
        import_batch_output(["{oops"], "o", indexes, cache, parse)
    assert len(cache) == 0


def test_failed_lines_are_reported_and_left_for_the_next_round(tmp_path):
    target, shards = _shards(tmp_path, 2)
    cache = ResponseCache(tmp_path / "c.sqlite")
    lines = _outputs(shards[0])
    failed = json.loads(lines[1])
    failed.update(response={"status_code": 500, "body": None}, error={"message": "engine crashed"})
    report = import_batch_output(
        [lines[0], json.dumps(failed)],
        "o",
        {s.shard: s.index for s in shards},
        cache,
        openai_body_parser(target),
    )
    assert report.imported == 1 and list(report.failed) == [failed["custom_id"]] and len(cache) == 1


@pytest.mark.parametrize(
    ("spoil", "said"),
    [
        (
            lambda body: body["choices"][0]["message"].update(content={"not": "text"}),
            "message.content is dict",
        ),
        (lambda body: body["choices"][0]["message"].update(content=["a"]), "message.content is list"),
        (lambda body: body.update(usage="many"), "usage is str"),
        (lambda body: body["usage"].update(prompt_tokens=float("nan")), "usage.prompt_tokens is 'nan'"),
        (lambda body: body.update(choices=[]), "not an OpenAI chat completion"),
    ],
)
def test_an_invalid_answer_body_is_one_failed_line_named_and_the_rest_is_imported(tmp_path, spoil, said):
    target, shards = _shards(tmp_path, 3)
    lines = _outputs(shards[0])
    bad = json.loads(lines[1])
    spoil(bad["response"]["body"])
    cache = ResponseCache(tmp_path / "c.sqlite")
    report = import_batch_output(
        [lines[0], json.dumps(bad), lines[2]],
        "out.jsonl",
        {s.shard: s.index for s in shards},
        cache,
        openai_body_parser(target),
    )
    cid = bad["custom_id"]
    assert report.imported == 2 and len(cache) == 2 and list(report.failed) == [cid]
    assert (
        report.failed[cid].startswith(f"out.jsonl, line 2, custom_id {cid}: ") and said in report.failed[cid]
    )
    assert "batch-output.invalid" not in report.failed[cid]


def test_an_answer_over_the_live_size_cap_is_a_failed_line(tmp_path):
    target, shards = _shards(tmp_path, 2)
    lines = _outputs(shards[0])
    big = json.loads(lines[0])
    big["response"]["body"]["choices"][0]["message"]["content"] = "x" * 5000
    cache = ResponseCache(tmp_path / "c.sqlite")
    indexes = {s.shard: s.index for s in shards}
    parse = openai_body_parser(target)
    report = import_batch_output(
        [json.dumps(big), lines[1]], "o", indexes, cache, parse, max_answer_bytes=4096
    )
    assert (
        report.imported == 1 and "over the 4,096 bytes an answer may have" in report.failed[big["custom_id"]]
    )
    report = import_batch_output(
        [json.dumps(big), lines[1]], "o", indexes, cache, parse
    )  # the live default: 4 MiB
    assert report.imported == 2 and not report.failed


def test_an_output_of_another_export_with_other_prompts_is_refused(tmp_path):
    """Same model, same shard names and request count, other questions: the ids' digests tell them apart."""
    target, mine = _shards(tmp_path / "a", 2)
    _, theirs = _ledger_llm(tmp_path / "b")[:2]
    other = CollectingLLM(
        load_llm(DEAD, DecodingSettings(max_new_tokens=7), cache_path=False), theirs, OverlayCache(None)
    )
    for i in range(2):
        with pytest.raises(AnswersPending):
            other.generate([{"role": "user", "content": f"another question {i}"}])
    [foreign] = shard_requests(theirs.order, 1)
    assert foreign.shard == mine[0].shard and len(foreign.lines) == len(mine[0].lines)
    cache = ResponseCache(tmp_path / "c.sqlite")
    with pytest.raises(BatchFileError, match=r"2 custom_id\(s\) answer other requests: 'r001s001-000000-"):
        import_batch_output(
            _outputs(foreign), "o", {s.shard: s.index for s in mine}, cache, openai_body_parser(target)
        )
    assert len(cache) == 0


def test_a_line_nested_too_deep_is_named_not_a_traceback(tmp_path):
    target, shards = _shards(tmp_path, 1)
    with pytest.raises(BatchFileError, match=r"o, line 1: not readable JSON \(RecursionError\)"):
        import_batch_output(
            ["[" * 200_000],
            "o",
            {s.shard: s.index for s in shards},
            ResponseCache(tmp_path / "c.sqlite"),
            openai_body_parser(target),
        )


@pytest.mark.parametrize(
    ("requested", "answered", "ok"),
    [
        ("m", "m", True),
        ("gpt-4o-mini", "gpt-4o-mini-2024-07-18", True),
        ("gpt-4", "gpt-4-0613", True),
        ("claude-3-5-sonnet", "claude-3-5-sonnet-20240620", True),
        ("Qwen/Qwen2.5-7B", "Qwen/Qwen2.5-7B-1M", False),
        ("Qwen/Qwen2.5-7B", "Qwen/Qwen2.5-7B-2024-07-18x", False),
        ("m", "m-7", False),
        ("m", "m-large", False),
        ("m", None, False),
        ("Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-7B-Instruct", True),
        ("a", "b", False),
    ],
)
def test_same_model_accepts_dated_snapshots_only(requested, answered, ok):
    assert same_model(requested, answered) is ok


def test_a_stub_round_trip_sends_each_request_once(tmp_path):
    """Collect, answer through a server, import: the live object then needs nothing."""
    from tests.support.batch_runner import answer_batch_file

    target, shards = _shards(tmp_path, 3)
    folder = tmp_path / "files"
    folder.mkdir()
    with StubOpenAI(lambda body: (200, "ok " + body["messages"][-1]["content"][:10])) as stub:
        src = folder / shards[0].file_name
        src.write_text("".join(shards[0].lines))
        answer_batch_file(src, folder / "out.jsonl", stub.url.removesuffix("/v1"), model="m")
        assert len(stub.requests) == 3
    with open(folder / "out.jsonl") as f:
        import_batch_output(
            f,
            "out",
            {s.shard: s.index for s in shards},
            ResponseCache(tmp_path / "c.sqlite"),
            openai_body_parser(target),
        )
    live = load_llm(DEAD, DecodingSettings(max_new_tokens=7), cache_path=tmp_path / "c.sqlite")
    assert live.generate([{"role": "user", "content": "question 1 " + "x" * 50}]) == "ok question 1"
