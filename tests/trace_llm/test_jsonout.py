from __future__ import annotations

import pytest

from trace_llm import LLMConfigError
from trace_llm.jsonout import (
    JSONOutputInvalid,
    check_schema,
    json_candidates,
    parse_json_output,
    schema_example,
    validation_errors,
)

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "score": {"type": "integer", "minimum": 1, "maximum": 5},
        "tags": {
            "type": "array",
            "items": {"type": "string", "enum": ["quiet", "cheap", "cozy"]},
            "maxItems": 3,
        },
    },
    "required": ["name", "score"],
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "Cafe", "score": 4}',
        'Sure! Here is the JSON:\n```json\n{"name": "Cafe", "score": 4}\n```\nHope it helps.',
        '```\n{"name": "Cafe", "score": 4}\n```',
        'The answer is {"name": "Cafe", "score": 4} as requested.',
        'First a bad try {"name": 3} then {"name": "Cafe", "score": 4}',
        '{"name": "Cafe", "score": 4.0}',  # 4.0 is an integer in JSON Schema
    ],
)
def test_parse_tolerates_fences_and_leading_text(text):
    assert parse_json_output(text, SCHEMA) in ({"name": "Cafe", "score": 4}, {"name": "Cafe", "score": 4.0})


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("no json here", "no parseable JSON"),
        ('{"name": "Cafe", "score": 4', "no parseable JSON"),  # cut off
        ('{"name": "Cafe"}', "missing required property 'score'"),
        ('{"name": "Cafe", "score": 9}', "$.score: 9 is not <= 5"),
        ('{"name": "Cafe", "score": true}', "$.score: expected integer, got boolean"),
        ('{"name": "Cafe", "score": 2, "x": 1}', "unexpected property 'x'"),
        ('{"name": "Cafe", "score": 2, "tags": ["loud"]}', "$.tags[0]"),
        ('{"name": "", "score": 2}', "shorter than 1"),
    ],
)
def test_parse_reports_what_is_wrong(text, fragment):
    with pytest.raises(JSONOutputInvalid) as info:
        parse_json_output(text, SCHEMA)
    assert fragment in str(info.value)


def test_validator_keywords():
    assert validation_errors([1, 2], {"type": "array", "uniqueItems": True}) == []
    assert validation_errors([1, 1], {"type": "array", "uniqueItems": True})
    assert validation_errors("b", {"anyOf": [{"const": "a"}, {"const": "b"}]}) == []
    assert validation_errors("c", {"anyOf": [{"const": "a"}, {"const": "b"}]})
    assert validation_errors(3, {"oneOf": [{"type": "integer"}, {"type": "number"}]})  # both match
    assert validation_errors(None, {"type": ["string", "null"]}) == []
    assert validation_errors("R12", {"type": "string", "pattern": r"^R\d+$"}) == []
    assert validation_errors("x", {"not": {"type": "string"}})
    assert validation_errors(True, {"enum": [1]})  # True is not 1 in JSON
    assert validation_errors({"a": 1}, {"additionalProperties": {"type": "string"}})
    assert validation_errors(0, {"exclusiveMinimum": 0})
    assert validation_errors(1, True) == [] and validation_errors(1, False)


def test_check_schema_rejects_unsupported_keywords():
    check_schema(SCHEMA)
    with pytest.raises(LLMConfigError, match=r"\$ref"):
        check_schema({"type": "object", "properties": {"a": {"$ref": "#/defs/x"}}})
    with pytest.raises(LLMConfigError, match="unknown type"):
        check_schema({"type": "str"})
    with pytest.raises(LLMConfigError, match="regular expression"):
        check_schema({"pattern": "("})


def test_schema_example_has_the_schema_shape():
    example = schema_example(SCHEMA)
    assert set(example) == {"name", "score", "tags"}
    assert (
        validation_errors(
            example, {**SCHEMA, "properties": {**SCHEMA["properties"], "score": {"type": "integer"}}}
        )
        == []
    )


def test_candidates_bounded_on_long_text():
    assert json_candidates("{" * 5000) == []
