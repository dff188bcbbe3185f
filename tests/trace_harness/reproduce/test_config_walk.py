"""The CLI walk's number scenarios in their config forms: every numeric key of a reproduce config, found from
the config's records and the LLM option table, set to each value a flag refuses, is refused with the file and
the dotted key (a TraceDataError, never another exception, never accepted), and every backend option under
`transport:` and `models.ROLE.options` accepts exactly what its `--llm-*` flag accepts (the same parse)."""

from __future__ import annotations

import argparse
import dataclasses
import typing

import pytest
import yaml

from tests.trace_harness.reproduce.test_config import BASE, write
from trace_dataset.io import TraceDataError
from trace_harness.reproduce import config as rc
from trace_harness.reproduce.config import load_config
from trace_llm.options import OPTIONS

# YAML forms of what a numeric flag refuses (a YAML `.nan` is the float NaN; `nan` would be the text)
REFUSED = ("-1", ".nan", ".inf", "-.inf", "1e400", "lots", "true", "[1]", "{a: 1}")
NOT_AN_INTEGER = ("2.5",)
# where each record's fields sit in a config (the record, its dotted prefix); fields of another kind are skipped
SECTIONS = (
    (rc.RunSet, "closed."),
    (rc.RunSet, "open."),
    (rc.InteractiveConfig, "interactive."),
    (rc.CoreConfig, "core."),
    (rc.NLIConfig, "nli."),
    (rc.ModelConfig, "models.systems."),
)
RENAMED = {  # fields read under another key than their name
    "models.systems.price_input": "models.systems.price.input",
    "models.systems.price_output": "models.systems.price.output",
}
TOP = {
    "batch_size": int,
    "num_proc": int,
    "leaderboard.n_boot": int,
    "batch.max_requests": int,
    "batch.max_bytes": int,
}


def _numeric_keys() -> dict[str, type]:
    keys = dict(TOP)
    for record, prefix in SECTIONS:
        hints = typing.get_type_hints(record)
        for f in dataclasses.fields(record):
            kinds = set(typing.get_args(hints[f.name])) or {hints[f.name]}
            number = kinds & {int, float}
            if number:
                keys[RENAMED.get(prefix + f.name, prefix + f.name)] = float if float in number else int
    return keys


NUMERIC_KEYS = _numeric_keys()


def _config(key: str, text: str) -> dict:
    body = yaml.safe_load(yaml.safe_dump(BASE))
    if key.startswith("models.systems."):
        body["models"]["systems"] = {"llm": BASE["models"]["systems"]}
    node = body
    *parents, last = key.split(".")
    for part in parents:
        node = node.setdefault(part, {})
    node[last] = yaml.safe_load(f"v: {text}")["v"]
    return body


def test_the_walk_finds_the_numeric_keys():
    assert {"interactive.turns", "core.max_rounds", "models.systems.temperature", "closed.subset"} <= set(
        NUMERIC_KEYS
    )
    assert NUMERIC_KEYS["models.systems.top_p"] is float and NUMERIC_KEYS["core.chunk"] is int
    assert len(NUMERIC_KEYS) >= 25


@pytest.mark.parametrize("key", sorted(NUMERIC_KEYS))
def test_every_numeric_key_refuses_what_a_flag_refuses(tmp_path, key):
    values = REFUSED + (NOT_AN_INTEGER if NUMERIC_KEYS[key] is int else ())
    accepted = []
    for text in values:
        path = write(tmp_path, _config(key, text))
        try:
            load_config(path)
        except TraceDataError as e:
            message = str(e)
            assert message.startswith(str(path)) and key.rsplit(".", 1)[-1] in message, (key, text, message)
            continue
        accepted.append(text)
    assert not accepted, f"{key} accepted {accepted}"


def _flag_accepts(parse, text: str) -> bool:
    try:
        parse(text)
    except (argparse.ArgumentTypeError, ValueError, TypeError, OverflowError):
        return False
    return True


FLAG_VALUES = (
    "-1",
    "0",
    "1",
    "2",
    "0.5",
    "1.5",
    "nan",
    "inf",
    "-inf",
    "1e400",
    "lots",
    "64",
    "100000",
    "1MB",
)
PARSED = sorted(name for name, o in OPTIONS.items() if o.parse is not None and name in rc.TRANSPORT_KEYS)


@pytest.mark.parametrize("section", ["transport", "models.systems.options"])
@pytest.mark.parametrize("name", PARSED)
def test_backend_options_accept_exactly_what_their_flag_accepts(tmp_path, section, name):
    parse = OPTIONS[name].parse
    differ = []
    for text in FLAG_VALUES:
        yaml_text = {"nan": ".nan", "inf": ".inf", "-inf": "-.inf"}.get(text, text)
        body = _config(f"{section}.{name}", yaml_text)
        if isinstance(yaml.safe_load(f"v: {yaml_text}")["v"], str) and text not in ("lots", "1MB"):
            continue
        path = write(tmp_path, body)
        try:
            load_config(path)
            config_ok = True
        except TraceDataError as e:
            assert str(e).startswith(str(path)) and name in str(e), str(e)
            config_ok = False
        if config_ok != _flag_accepts(parse, text):
            differ.append(f"{text}: config {'accepts' if config_ok else 'refuses'}")
    assert not differ, f"{section}.{name} differs from its flag: {differ}"
