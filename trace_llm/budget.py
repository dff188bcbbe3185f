"""A JSON constraint that closes within the token budget: the longest reply a schema allows under a grammar, and
the schema with its free lengths bounded so that every reply fits `max_new_tokens`.

Under constrained decoding the schema is the grammar, so a string without a `maxLength` (or with one too long
for the budget) lets a small model run on (SmolLM2 repeating timestamps) until the budget cuts the JSON, which
then fails the schema. `fit_schema(schema, max_new_tokens)` gives the same schema with every free string's
`maxLength` and every array's `maxItems` lowered (the strings first, by one factor, then strings and arrays together where that is not
enough; never below their minimum) until the
longest reply the grammar allows is at most the budget, and leaves a schema that already fits unchanged (so its
grammar, its cache keys and its replies stay as they were). The longest reply is counted in characters, one
token each at worst (a token is at least one character; some tokenizers read digits one at a time): the
grammar's text (keys, punctuation, and the optional space llama.cpp's converter allows after every token of
the structure and every value), the longest enum value, numbers as the grammar bounds them, strings as
`maxLength` characters (an escape such as `\u00e9` is longer in characters, not in what it can cost: the
count is a bound for replies without escapes).

`smallest_budget(schema)` is the least budget at which a reply always closes (every free length at its
minimum); `fit_schema` refuses less (`BudgetTooSmall`, naming it), and so does the LLM layer on every
constrained request (`fit_constraint`): a request below it is refused before anything is sent, since its reply
could be cut before the JSON closes. Callers that know their schemas check them when they are built
(`require_budget`: an LLM baseline, a reproduce config), so that the refusal names the option to raise before
any work is done. A schema the count cannot bound (`$ref`, `allOf`,
`additionalProperties` true or a schema, `patternProperties`) is left as it is.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from trace_llm.errors import LLMConfigError
from trace_llm.structured import Constraint

SPACE = 1  # the optional space llama.cpp's converter allows at each separator ('" "?')
INTEGER_CHARS = 17  # "-" and 16 digits: the converter's integral part
NUMBER_CHARS = 52  # sign, 16 digits, ".", 16 digits, an exponent of sign and 16 digits
_UNBOUNDED = ("$ref", "allOf", "patternProperties", "not", "if")


class BudgetTooSmall(LLMConfigError):
    """max_new_tokens below the smallest budget in which a constrained reply to the schema always closes."""


def _types(schema: dict[str, Any]) -> list[str]:
    kind = schema.get("type")
    if isinstance(kind, list):
        return [str(k) for k in kind]
    if kind is None:
        return ["object" if "properties" in schema else "array" if "items" in schema else "string"]
    return [str(kind)]


Scale = tuple[float, float] | None  # (strings, arrays): the share of each free length kept; None: as they are


def longest(schema: Any, scale: Scale = None, budget: int = 0) -> int | None:
    """The longest JSON text `schema` allows under a grammar, in characters (None: unbounded). With `scale`,
    as if every string's maxLength and every array's maxItems (`budget` where there is none) were that share
    of it, never below its minimum: what `fit_schema` would make of it."""
    if schema is True or schema == {}:
        return None
    if not isinstance(schema, dict) or any(k in schema for k in _UNBOUNDED):
        return None
    if "const" in schema:
        return len(json.dumps(schema["const"], ensure_ascii=False)) + SPACE
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return max(len(json.dumps(v, ensure_ascii=False)) for v in schema["enum"]) + SPACE
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            sizes = [longest(s, scale, budget) for s in schema[key]]
            return None if not sizes or None in sizes else max(s for s in sizes if s is not None)
    sizes = [_longest_of_type(schema, t, scale, budget) for t in _types(schema)]
    return None if None in sizes else max(s for s in sizes if s is not None)


def _free(value: Any, low: Any, scale: float | None, budget: int) -> int | None:
    """A free length (maxLength, maxItems; None: none given) at `scale` of it, as `fit_schema` would set it."""
    low = low if isinstance(low, int) and not isinstance(low, bool) else 0
    if scale is None:
        return value if isinstance(value, int) and not isinstance(value, bool) else None
    top = value if isinstance(value, int) and not isinstance(value, bool) else budget
    return max(low, int(top * scale))


def _longest_of_type(schema: dict[str, Any], kind: str, scale: Scale, budget: int) -> int | None:
    if kind == "null":
        return 4 + SPACE
    if kind == "boolean":
        return 5 + SPACE
    if kind in ("integer", "number"):
        low, high = schema.get("minimum"), schema.get("maximum")
        if kind == "integer" and isinstance(low, int) and isinstance(high, int):
            return max(len(str(low)), len(str(high))) + SPACE
        return (INTEGER_CHARS if kind == "integer" else NUMBER_CHARS) + SPACE
    if kind == "string":
        chars = _free(schema.get("maxLength"), schema.get("minLength"), scale and scale[0], budget)
        return None if chars is None else chars + 2 + SPACE
    if kind == "array":
        items = _free(schema.get("maxItems"), schema.get("minItems"), scale and scale[1], budget)
        item = longest(schema.get("items", True), scale, budget) if items else 0
        if items is None or item is None:
            return None
        return 2 + 2 * SPACE + items * item + max(0, items - 1) * (1 + SPACE)
    if kind == "object":
        extra = schema.get("additionalProperties")
        if extra is True or isinstance(extra, dict) or ("properties" not in schema and extra is not False):
            return None  # other keys allowed (the grammars take a missing additionalProperties as false)
        total = 2 + 2 * SPACE
        for n, (key, sub) in enumerate((schema.get("properties") or {}).items()):
            value = longest(sub, scale, budget)
            if value is None:
                return None
            total += (
                len(json.dumps(key, ensure_ascii=False)) + 1 + 2 * SPACE + value + (1 + SPACE if n else 0)
            )
        return total
    return None


def smallest_budget(schema: Any) -> int | None:
    """The least max_new_tokens at which every constrained reply to `schema` closes (None: unbounded)."""
    return longest(schema, (0.0, 0.0), 0)


def _scaled(schema: Any, scale: tuple[float, float], budget: int) -> Any:
    if isinstance(schema, list):
        return [_scaled(s, scale, budget) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _scaled(v, scale, budget) if k in ("items", "anyOf", "oneOf") else v for k, v in schema.items()}
    if isinstance(out.get("properties"), dict):
        out["properties"] = {k: _scaled(v, scale, budget) for k, v in out["properties"].items()}
    if "enum" in out or "const" in out:
        return out
    kinds = _types(out)
    if "string" in kinds:
        out["maxLength"] = _free(out.get("maxLength"), out.get("minLength"), scale[0], budget)
    if "array" in kinds:
        out["maxItems"] = _free(out.get("maxItems"), out.get("minItems"), scale[1], budget)
    return out


def fit_schema(schema: Any, max_new_tokens: int) -> Any:
    """`schema` with its free lengths bounded so that every reply fits `max_new_tokens` (module docstring);
    the same object where it already fits or cannot be bounded; BudgetTooSmall below `smallest_budget`."""
    current = longest(schema)
    if current is not None and current <= max_new_tokens:
        return schema
    least = smallest_budget(schema)
    if least is None:
        return schema
    if least > max_new_tokens:
        raise BudgetTooSmall(
            f"max_new_tokens={max_new_tokens} is below the {least} tokens in which a constrained reply to this "
            f"JSON schema always closes; raise --max-new-tokens to at least {least}"
        )
    # the strings first (free text is what runs on), the arrays as they are; both together where that is not
    # enough: the largest share that fits, by bisection
    strings_only = longest(schema, (0.0, 1.0), max_new_tokens)
    joint = strings_only is None or strings_only > max_new_tokens

    def at(share: float) -> tuple[float, float]:
        return (share, share) if joint else (share, 1.0)

    low, high = 0.0, 1.0
    for _ in range(40):
        mid = (low + high) / 2
        size = longest(schema, at(mid), max_new_tokens)
        if size is not None and size <= max_new_tokens:
            low = mid
        else:
            high = mid
    return _scaled(schema, at(low), max_new_tokens)


def fit_constraint(constraint: Constraint, max_new_tokens: int) -> Constraint:
    """A JSON constraint fitted to the budget (`fit_schema`); the same object where nothing changes;
    BudgetTooSmall where the budget is below the smallest in which a reply always closes."""
    if constraint.kind != "json":
        return constraint
    fitted = fit_schema(constraint.schema, max_new_tokens)
    return constraint if fitted is constraint.schema else Constraint.json(fitted)


def least_budget(schemas: Mapping[str, Any]) -> tuple[int, str] | None:
    """The largest `smallest_budget` among named schemas and the name of the schema that sets it (None where no
    schema can be bounded): the least max_new_tokens at which every one of them closes."""
    sizes = [(b, name) for name, s in schemas.items() if (b := smallest_budget(s)) is not None]
    return max(sizes, key=lambda x: x[0]) if sizes else None


def require_budget(schemas: Mapping[str, Any], max_new_tokens: int, who: str, raise_with: str) -> None:
    """Refuse (`BudgetTooSmall`) a budget below the least in which every constrained reply of `who` closes
    (`least_budget`), naming that budget, the schema that needs it and the option to raise (`raise_with`)."""
    least = least_budget(schemas)
    if least is not None and max_new_tokens < least[0]:
        raise BudgetTooSmall(
            f"{who}: max_new_tokens={max_new_tokens} is below the {least[0]} tokens in which its {least[1]} (a "
            f"constrained JSON reply) always closes; raise {raise_with} to at least {least[0]}"
        )
