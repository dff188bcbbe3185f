"""Checking `trace-bench run` settings before anything is loaded: numbers, the baseline name, `--param`
(`key_value_param` reads one, the argparse type of `run`'s and `interact`'s `--param`).

`--param KEY=VALUE` takes a JSON value, or the bare text when VALUE is not JSON (`--param device=cuda`).
Each KEY must be a constructor parameter of the baseline, and the value must be of the JSON type the
parameter's annotation (or, without one, its default) names: `text_weight=abc` is refused here with the
expected type, not met later as a traceback. Parameters typed as objects only Python callers can pass (an
index, an encoder) are not checked. Ranges (`radius_m > 0`) stay the pipeline's own checks; the runner
turns what a pipeline raises about its parameters into the same one-line error.
"""

from __future__ import annotations

import argparse
import inspect
import json
import math
from typing import Any

# annotation names -> the JSON value types they accept
_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "bool": (bool,),
    "int": (int,),
    "float": (int, float),
    "str": (str,),
    "None": (type(None),),
    "os.PathLike": (str,),
    "Path": (str,),
    "list": (list,),
    "tuple": (list,),
    "dict": (dict,),
}
_EXPECTED = {
    bool: "true or false",
    int: "an integer",
    float: "a number",
    str: "a string",
    type(None): "null",
    list: "a JSON list",
    dict: "a JSON object",
}
_SKIP = ("self", "kb", "batch_size")  # not `--param`s: the knowledge base, and --batch-size


def accepted_types(annotation: Any, default: Any) -> tuple[type, ...] | None:
    """The JSON value types a constructor parameter takes (None: not checkable here)."""
    if isinstance(annotation, str) and annotation:
        found: list[type] = []
        for part in annotation.split("|"):
            base = part.strip().split("[")[0]
            if base == "Literal":
                found.append(str)
            elif base in _JSON_TYPES:
                found.extend(_JSON_TYPES[base])
            else:
                return None
        return tuple(found)
    if default is inspect.Parameter.empty or default is None:
        return None
    return (int, float) if type(default) is float else (type(default),)


def _finite(value: Any) -> bool:
    """No NaN or infinity anywhere in `value` (a config file's `.nan`, `.inf`; the flag refuses them as it reads)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return False
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return True


def _fits(value: Any, accepted: tuple[type, ...]) -> bool:
    if isinstance(value, bool):  # bool is an int in Python, never in a JSON schema
        return bool in accepted
    return isinstance(value, accepted)


def check_params(name: str, params: dict[str, Any]) -> str | None:
    """Why `params` do not fit the constructor of baseline `name` (unknown key, wrong JSON type), or None."""
    from baselines import BASELINES

    signature = inspect.signature(BASELINES[name].__init__)
    named = {
        k: p
        for k, p in signature.parameters.items()
        if k not in _SKIP and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    }
    for key, value in params.items():
        if key not in named:
            known = ", ".join(sorted(named)) or "none"
            return f"--param {key}: baseline {name!r} has no parameter {key!r}; expected one of: {known}"
        if not _finite(value):
            return f"--param {key}={str(value)[:60]}: expected finite numbers (no NaN or infinity)"
        accepted = accepted_types(named[key].annotation, named[key].default)
        if accepted is None or _fits(value, accepted):
            continue
        names = list(dict.fromkeys(_EXPECTED.get(t, t.__name__) for t in accepted))
        if float in accepted:  # an integer is a number
            names.remove(_EXPECTED[int])
        wanted = " or ".join(names)
        if isinstance(value, str):
            return (
                f"--param {key}={value[:60]}: expected {wanted}, got the text {value[:60]!r} (values are JSON: "
                "true/false, numbers, lists; text that is not JSON is taken as a string)"
            )
        return f"--param {key}={json.dumps(value)[:60]}: expected {wanted}"
    return None


def usage_error(args: argparse.Namespace) -> str | None:
    """The first thing wrong with `trace-bench run` arguments that can be told without loading anything."""
    from baselines import BASELINES

    name = getattr(args, "name", None)
    if name is None:
        return None
    if name not in BASELINES:
        return f"unknown baseline {name!r}; expected one of: {', '.join(BASELINES)}"
    return check_params(name, dict(args.param))


def key_value_param(text: str) -> tuple[str, Any]:
    """argparse type of `--param KEY=VALUE`: a JSON value, else the bare text; NaN and infinities are refused
    (JSON has none, and a NaN parameter scores everything NaN)."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        return key, json.loads(value, parse_constant=_no_constant, parse_float=_finite_float)
    except _NotFinite:
        raise argparse.ArgumentTypeError(f"expected a finite number, got {key}={value[:40]}") from None
    except (json.JSONDecodeError, RecursionError, ValueError):
        pass
    if value.strip().lower().lstrip("+-") in ("nan", "inf", "infinity"):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {key}={value[:40]}")
    return key, value  # a bare string (its type is checked by check_params)


class _NotFinite(Exception):
    pass


def _no_constant(name: str) -> Any:
    raise _NotFinite(name)


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):  # 1e999
        raise _NotFinite(text)
    return value
