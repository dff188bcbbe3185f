"""JSON Schemas in the forms llama-cpp-python's schema-to-grammar converter honours, for both places that
converter runs: in process (trace_llm.llamacpp, which then checks the grammar with llama.cpp's own parser) and
inside llama-cpp-python's server (the `json_object` dialect, trace_llm.structured), which builds its grammar
from the schema a request sends. Plain functions on dicts and strings; nothing here imports llama_cpp.
"""

from __future__ import annotations

from typing import Any

MAX_ENUM_RANGE = 100  # integer bounds spelled out as an enum up to this many values


# Regex escapes that llama-cpp-python's pattern converter copies into the grammar as they are, and that
# llama.cpp's GBNF parser then refuses ("unknown escape"): each becomes a character class of its own.
_PATTERN_CLASSES = {"d": "0-9", "s": " \\t\\n\\r", "w": "a-zA-Z0-9_"}


def converter_pattern(pattern: str) -> str:
    r"""The same regular expression with `\d`, `\s`, `\w` spelled as character classes and an escaped
    punctuation mark (`\.`) as a class of that one character, the forms that survive llama-cpp-python's
    converter and llama.cpp's GBNF parser."""
    out: list[str] = []
    in_class = False
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            if nxt in _PATTERN_CLASSES:
                body = _PATTERN_CLASSES[nxt]
                out.append(body if in_class else f"[{body}]")
            elif not nxt.isalnum() and not in_class:
                out.append(f"[\\{nxt}]" if nxt in "]\\^-" else f"[{nxt}]")
            else:
                out.append(c + nxt)
            i += 2
            continue
        if c == "[" and not in_class:
            in_class = True
        elif c == "]" and in_class:
            in_class = False
        out.append(c)
        i += 1
    return "".join(out)


def converter_schema(schema: Any) -> Any:
    """The same schema in the forms llama-cpp-python's converter honours: it drops every other keyword of a
    `type` list (`["string", "null"]` with an `enum`) and the bounds of an integer, so a type list becomes an
    `anyOf` and a bounded integer (at most MAX_ENUM_RANGE values) an `enum`; a `pattern` is rewritten by
    `converter_pattern`."""
    if isinstance(schema, list):
        return [converter_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {
        k: converter_schema(v) if k in ("items", "additionalProperties", "not") else v
        for k, v in schema.items()
    }
    if isinstance(out.get("pattern"), str):
        out["pattern"] = converter_pattern(out["pattern"])
    if isinstance(out.get("properties"), dict):
        out["properties"] = {k: converter_schema(v) for k, v in out["properties"].items()}
    for key in ("anyOf", "oneOf", "allOf"):
        if isinstance(out.get(key), list):
            out[key] = converter_schema(out[key])
    types = out.get("type")
    if isinstance(types, list):
        rest = {k: v for k, v in out.items() if k != "type"}
        alternatives = []
        for t in types:
            alt = {"type": t} if t == "null" else {"type": t, **rest}
            if "enum" in alt:
                alt["enum"] = [v for v in alt["enum"] if v is not None] if t != "null" else alt["enum"]
            alternatives.append(converter_schema(alt))
        return {"anyOf": alternatives}
    low, high = out.get("minimum"), out.get("maximum")
    if (
        types == "integer"
        and "enum" not in out
        and isinstance(low, int)
        and isinstance(high, int)
        and 0 <= high - low < MAX_ENUM_RANGE
    ):
        out = {k: v for k, v in out.items() if k not in ("minimum", "maximum")}
        out["enum"] = list(range(low, high + 1))
    return out
