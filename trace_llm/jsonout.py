"""JSON output: find the JSON value in a model's reply and check it against a JSON-Schema subset.

Small models wrap JSON in ```json fences or put a sentence before it, so extraction tries, in order: the
contents of each fenced block, the whole reply, then every `{` / `[` position (json.JSONDecoder.raw_decode).
The first candidate that validates wins.

The validator implements the JSON-Schema keywords the package's prompts need (listed in SUPPORTED_KEYWORDS);
a schema using any other validation keyword is rejected up front rather than silently half-checked.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from trace_llm.errors import LLMConfigError

SUPPORTED_KEYWORDS = frozenset(
    {
        "type",
        "enum",
        "const",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minLength",
        "maxLength",
        "pattern",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "anyOf",
        "oneOf",
        "allOf",
        "not",
        "minProperties",
        "maxProperties",
    }
)
# Annotations: allowed, never checked.
ANNOTATION_KEYWORDS = frozenset(
    {"$schema", "$id", "$comment", "title", "description", "default", "examples", "format", "readOnly"}
)
JSON_TYPES = ("object", "array", "string", "integer", "number", "boolean", "null")
_FENCE = re.compile(r"```[ \t]*(?:json|JSON|javascript)?[ \t]*\n?(.*?)```", re.DOTALL)
MAX_START_POSITIONS = 200  # bound the scan on long, JSON-free replies


class JSONOutputInvalid(ValueError):
    """A reply that holds no JSON value valid for the schema; the message is what the model is told."""


def check_schema(schema: Any, path: str = "$") -> None:
    """Reject schemas this validator cannot honour (unknown keywords, bad types) with a clear error."""
    if isinstance(schema, bool):
        return
    if not isinstance(schema, dict):
        raise LLMConfigError(
            f"JSON schema at {path}: expected an object or a boolean, got {type(schema).__name__}"
        )
    unknown = sorted(set(schema) - SUPPORTED_KEYWORDS - ANNOTATION_KEYWORDS)
    if unknown:
        raise LLMConfigError(
            f"JSON schema at {path}: unsupported keyword(s) {unknown}; supported: {sorted(SUPPORTED_KEYWORDS)}"
        )
    types = schema.get("type")
    for t in [types] if isinstance(types, str) else (types or []):
        if t not in JSON_TYPES:
            raise LLMConfigError(f"JSON schema at {path}: unknown type {t!r}; expected one of {JSON_TYPES}")
    for key, sub in (schema.get("properties") or {}).items():
        check_schema(sub, f"{path}.properties.{key}")
    if isinstance(schema.get("additionalProperties"), dict):
        check_schema(schema["additionalProperties"], f"{path}.additionalProperties")
    if "items" in schema:
        check_schema(schema["items"], f"{path}.items")
    if "not" in schema:
        check_schema(schema["not"], f"{path}.not")
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            if not isinstance(schema[key], list) or not schema[key]:
                raise LLMConfigError(f"JSON schema at {path}.{key}: expected a non-empty list of schemas")
            for i, sub in enumerate(schema[key]):
                check_schema(sub, f"{path}.{key}[{i}]")
    if "pattern" in schema:
        try:
            re.compile(schema["pattern"])
        except re.error as e:
            raise LLMConfigError(f"JSON schema at {path}.pattern: bad regular expression ({e})") from e


def _type_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _is_type(value: Any, t: str) -> bool:
    actual = _type_of(value)
    if t == "number":
        return actual in ("integer", "number")
    if t == "integer" and actual == "number":
        return math.isfinite(value) and float(value).is_integer()
    return actual == t


def _equal(a: Any, b: Any) -> bool:
    # JSON equality: 1 == 1.0 but True != 1.
    numeric = ("integer", "number")
    if _type_of(a) in numeric and _type_of(b) in numeric:
        return a == b
    return _type_of(a) == _type_of(b) and a == b


def validation_errors(value: Any, schema: Any, path: str = "$") -> list[str]:
    """Every way `value` breaks `schema`, as `path: message` strings (empty list = valid)."""
    if schema is True:
        return []
    if schema is False:
        return [f"{path}: no value is allowed here"]
    errors: list[str] = []
    types = schema.get("type")
    if types is not None:
        allowed = [types] if isinstance(types, str) else list(types)
        if not any(_is_type(value, t) for t in allowed):
            return [f"{path}: expected {' or '.join(allowed)}, got {_type_of(value)}"]
    if "const" in schema and not _equal(value, schema["const"]):
        errors.append(f"{path}: expected {json.dumps(schema['const'])}")
    if "enum" in schema and not any(_equal(value, option) for option in schema["enum"]):
        errors.append(f"{path}: {json.dumps(value)[:80]} is not one of {json.dumps(schema['enum'])}")
    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            errors.append(f"{path}: string shorter than {schema['minLength']} characters")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            errors.append(f"{path}: string longer than {schema['maxLength']} characters")
        if "pattern" in schema and not re.search(schema["pattern"], value):
            errors.append(f"{path}: {value[:80]!r} does not match pattern {schema['pattern']!r}")
    if _type_of(value) in ("integer", "number"):
        for key, bad, word in (
            ("minimum", lambda v, b: v < b, ">="),
            ("maximum", lambda v, b: v > b, "<="),
            ("exclusiveMinimum", lambda v, b: v <= b, ">"),
            ("exclusiveMaximum", lambda v, b: v >= b, "<"),
        ):
            if key in schema and bad(value, schema[key]):
                errors.append(f"{path}: {value} is not {word} {schema[key]}")
    if isinstance(value, list):
        if "minItems" in schema and len(value) < schema["minItems"]:
            errors.append(f"{path}: fewer than {schema['minItems']} items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            errors.append(f"{path}: more than {schema['maxItems']} items")
        if schema.get("uniqueItems"):
            seen = [json.dumps(v, sort_keys=True) for v in value]
            if len(set(seen)) != len(seen):
                errors.append(f"{path}: items are not unique")
        if "items" in schema:
            for i, item in enumerate(value):
                errors.extend(validation_errors(item, schema["items"], f"{path}[{i}]"))
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                errors.append(f"{path}: missing required property {key!r}")
        if "minProperties" in schema and len(value) < schema["minProperties"]:
            errors.append(f"{path}: fewer than {schema['minProperties']} properties")
        if "maxProperties" in schema and len(value) > schema["maxProperties"]:
            errors.append(f"{path}: more than {schema['maxProperties']} properties")
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            if key in properties:
                errors.extend(validation_errors(item, properties[key], f"{path}.{key}"))
            elif extra is False:
                errors.append(f"{path}: unexpected property {key!r} (allowed: {sorted(properties)})")
            elif isinstance(extra, dict):
                errors.extend(validation_errors(item, extra, f"{path}.{key}"))
    if "allOf" in schema:
        for sub in schema["allOf"]:
            errors.extend(validation_errors(value, sub, path))
    if "anyOf" in schema and not any(not validation_errors(value, sub, path) for sub in schema["anyOf"]):
        errors.append(f"{path}: matches none of the anyOf alternatives")
    if "oneOf" in schema:
        matches = sum(not validation_errors(value, sub, path) for sub in schema["oneOf"])
        if matches != 1:
            errors.append(f"{path}: matches {matches} of the oneOf alternatives (expected exactly 1)")
    if "not" in schema and not validation_errors(value, schema["not"], path):
        errors.append(f"{path}: matches a schema it must not match")
    return errors


def json_candidates(text: str) -> list[Any]:
    """JSON values found in `text`, most likely first (fenced blocks, whole text, then embedded values)."""
    found: list[Any] = []
    decoder = json.JSONDecoder()

    def attempt(chunk: str) -> None:
        chunk = chunk.strip()
        if not chunk:
            return
        try:
            found.append(json.loads(chunk))
        except json.JSONDecodeError:
            return

    for block in _FENCE.findall(text):
        attempt(block)
    attempt(text)
    starts = [m.start() for m in re.finditer(r"[\[{]", text)][:MAX_START_POSITIONS]
    for start in starts:
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        found.append(value)
    return found


def parse_json_output(text: str, schema: Any) -> Any:
    """The first JSON value in `text` that satisfies `schema`; JSONOutputInvalid says why there is none."""
    candidates = json_candidates(text)
    if not candidates:
        raise JSONOutputInvalid("the reply contains no parseable JSON value")
    first_errors: list[str] = []  # the first candidate's (never empty: a valid candidate returns)
    for value in candidates:
        errors = validation_errors(value, schema)
        if not errors:
            return value
        if not first_errors:
            first_errors = errors
    shown = "; ".join(first_errors[:5]) + (
        f"; and {len(first_errors) - 5} more" if len(first_errors) > 5 else ""
    )
    raise JSONOutputInvalid(f"the JSON does not match the schema: {shown}")


def schema_example(schema: Any, depth: int = 0) -> Any:
    """A value shaped like the schema: small models copy a shape more reliably than they read a schema."""
    if not isinstance(schema, dict) or depth > 6:
        return "..."
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            return schema_example(schema[key][0], depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((t for t in kind if t != "null"), kind[0] if kind else None)
    if kind is None:
        kind = "object" if "properties" in schema else "array" if "items" in schema else "string"
    if kind == "object":
        return {k: schema_example(v, depth + 1) for k, v in (schema.get("properties") or {}).items()}
    if kind == "array":
        return [schema_example(schema.get("items", {}), depth + 1)]
    return {"string": "...", "integer": 0, "number": 0.0, "boolean": True, "null": None}[kind]


def schema_instruction(schema: Any) -> str:
    return (
        "Reply with only a JSON value, no other text. Shape (fill in real values):\n"
        + json.dumps(schema_example(schema), ensure_ascii=False)
        + "\nJSON Schema it must satisfy:\n"
        + json.dumps(schema, sort_keys=True, ensure_ascii=False)
    )


def repair_instruction(error: str, schema: Any) -> str:
    return (
        f"That reply is not usable: {error}. Reply again with only the corrected JSON value, no other text, "
        "conforming to this JSON Schema:\n" + json.dumps(schema, sort_keys=True, ensure_ascii=False)
    )
