"""The backend option table (trace_llm.options), checked entry by entry: every option with a flag reaches
`llm_options(args)`, every option reaches through `load_llm` exactly the backends it names and is a parameter of
exactly those backends' constructors, the default its help shows is each backend's own, it is or is not part of
a run's identity as declared, a config value is checked by the flag's parser, and nothing else lists the
options (the lists that spelled them by hand are the table's now)."""

from __future__ import annotations

import argparse
import inspect
import re
from pathlib import Path
from typing import Any

import pytest

import trace_llm.loading as loading
from trace_harness.protocols.teacher_forced import runner
from trace_harness.reproduce import config
from trace_llm import LLMConfigError, load_llm
from trace_llm.cli import add_llm_argument, add_llm_backend_options, llm_options
from trace_llm.options import (
    BACKEND_OPTIONS,
    BACKENDS,
    CONFIG_OPTIONS,
    FLAGGED,
    OPTIONS,
    SECRET_OPTIONS,
    TRANSPORT_OPTIONS,
    LLMOption,
    check_options,
    markdown_table,
)

ROOT = Path(__file__).resolve().parents[2]
ALL = list(OPTIONS.values())
SPECS = {  # a spec each backend (and each runtime of smollm2) answers, and the runtime whose options it takes
    "hf:some/model": "hf",
    "llamacpp:/models/m.gguf": "llamacpp",
    "openai:http://127.0.0.1:9/v1#m": "openai",
    "smollm2:hf": "hf",
    "smollm2:llamacpp": "llamacpp",
}


def sample(option: LLMOption) -> tuple[list[str], Any]:
    """A value the option admits: its command-line words and the value load_llm then gets."""
    if option.switch:
        return [], True
    if option.choices:
        return [option.choices[-1]], option.choices[-1]
    if option.parse is None:
        return ["cpu"], "cpu"
    try:
        return [option.default], option.parse(option.default)
    except argparse.ArgumentTypeError:  # a default told in words ("torch's"): a small number then
        return ["1"], option.parse("1")


def constructors() -> dict[str, dict[str, inspect.Parameter]]:
    from trace_llm.hf import HFLLM
    from trace_llm.llamacpp import LlamaCppLLM
    from trace_llm.openai_backend import OpenAILLM

    classes = {"hf": HFLLM, "llamacpp": LlamaCppLLM, "openai": OpenAILLM}
    return {b: dict(inspect.signature(cls.__init__).parameters) for b, cls in classes.items()}


def test_the_table_is_well_formed():
    assert set(BACKENDS) == set(BACKEND_OPTIONS)
    for o in ALL:
        assert o.backends and o.backends <= set(BACKENDS), o.name
        assert o.help and o.default, o.name
        assert not (o.switch and (o.parse or o.choices)), o.name
        if o.flag is not None:
            assert o.flag.startswith("--") and (o.flag == "--structured" or o.flag.startswith("--llm-")), (
                o.name
            )
    assert len({o.flag for o in FLAGGED}) == len(FLAGGED)


@pytest.mark.parametrize("option", FLAGGED, ids=lambda o: o.name)
def test_every_flag_reaches_llm_options(option, monkeypatch):
    monkeypatch.setenv("COLUMNS", "1000")  # argparse's help unwrapped
    parser = argparse.ArgumentParser()
    add_llm_argument(parser)
    assert llm_options(parser.parse_args([])) == dict.fromkeys((o.name for o in FLAGGED), None)
    words, value = sample(option)
    given = llm_options(parser.parse_args([option.flag, *words]))
    assert given[option.name] == value
    assert all(v is None for k, v in given.items() if k != option.name)
    assert option.help_text() in parser.format_help()  # its help, as declared


def test_a_commands_own_default_is_given_shown_and_overridden(monkeypatch):
    monkeypatch.setenv("COLUMNS", "1000")
    parser = argparse.ArgumentParser()
    add_llm_argument(parser, options={"parallel": 4})
    assert llm_options(parser.parse_args([]))["parallel"] == 4
    assert llm_options(parser.parse_args(["--llm-parallel", "1"]))["parallel"] == 1
    assert OPTIONS["parallel"].help_text(4).endswith("(default: 4 for this command)")
    assert OPTIONS["parallel"].help_text(4) in parser.format_help()
    # one per system (trace-bench run): each value once, with its systems, then everyone else's
    shown = OPTIONS["parallel"].help_text({"a": 4, "b": 2, "c": 4})
    assert shown.endswith("(default: 4 for a, c; 2 for b; otherwise 1)")
    # a default is checked as a config value is, and only a flagged option may have one
    with pytest.raises(LLMConfigError, match="a command's default parallel"):
        add_llm_argument(argparse.ArgumentParser(), options={"parallel": 0})
    with pytest.raises(LLMConfigError, match=r"unknown option\(s\) a command's default api_key"):
        add_llm_argument(argparse.ArgumentParser(), options={"api_key": "sk-1"})


def test_the_backend_flags_are_the_tables_and_nothing_else():
    parser = argparse.ArgumentParser()
    add_llm_backend_options(parser)
    flags = [a.option_strings[0] for a in parser._actions if a.option_strings and a.dest != "help"]
    assert flags == ["--llm-cache", "--no-llm-cache", *(o.flag for o in FLAGGED)]


@pytest.mark.parametrize(("spec", "runtime"), SPECS.items())
def test_load_llm_passes_each_backend_exactly_its_options(monkeypatch, spec, runtime):
    import trace_llm.hf
    import trace_llm.llamacpp
    import trace_llm.openai_backend
    import trace_llm.smollm2

    received: dict[str, Any] = {}

    def record(*args: Any, **kwargs: Any) -> str:
        received.update(kwargs)
        return "built"

    for module, name in [
        (trace_llm.hf, "HFLLM"),
        (trace_llm.llamacpp, "LlamaCppLLM"),
        (trace_llm.openai_backend, "OpenAILLM"),
        (trace_llm.smollm2, "load_smollm2"),
    ]:
        monkeypatch.setattr(module, name, record)
    values = {o.name: sample(o)[1] for o in ALL}
    assert load_llm(spec, cache_path=False, **values) == "built"
    received.pop("spec", None), received.pop("gguf_file", None), received.pop("runtime", None)
    assert received == {o.name: values[o.name] for o in ALL if runtime in o.backends}
    with pytest.raises(LLMConfigError, match=r"unknown LLM option\(s\) \['colour'\]"):
        load_llm(spec, cache_path=False, colour=1)


def test_each_backend_constructor_takes_exactly_the_options_that_name_it():
    params = constructors()
    for o in ALL:
        for backend in BACKENDS:
            assert (o.name in params[backend]) == (backend in o.backends), (o.name, backend)


def test_the_default_the_help_shows_is_each_backends_own():
    params = constructors()
    for o in ALL:
        for backend in sorted(o.backends):
            own = params[backend][o.name].default
            if o.switch:
                assert own is (o.default == "on"), o.name
            elif o.parse is None and not o.choices:
                assert own is None, o.name  # text: a default told in words, chosen by the backend
            else:
                try:
                    shown = o.check(o.default)
                except LLMConfigError:  # told in words ("torch's", "the file's own"): the backend's choice
                    shown = None
                assert shown == own, (o.name, backend, shown, own)


@pytest.mark.parametrize("option", ALL, ids=lambda o: o.name)
def test_an_option_is_part_of_a_runs_identity_unless_it_is_transport(option):
    value = sample(option)[1]
    meta = {
        "baseline": "dst",
        "llm_options": {option.name: value},
        "parameters": {"llm": {option.name: value}},
    }
    identity = runner.run_identity(meta)
    assert (identity["llm_options"] is not None) == (not option.transport)
    assert (option.name in identity["parameters"]["llm"]) == (not option.transport)
    recorded = runner.recorded_llm_options({"llm_options": {option.name: value}})
    assert (recorded is None) == option.secret


@pytest.mark.parametrize("option", [o for o in ALL if not o.secret], ids=lambda o: o.name)
def test_a_config_value_is_checked_by_its_flags_parser(option):
    words, value = sample(option)
    config_value = value if option.switch or option.parse is None else words[0]
    assert check_options({option.name: config_value}) == {option.name: value}
    assert check_options({option.name: None}) == {option.name: None}
    bad: Any = "yes" if option.switch else "nope" if option.choices else 7 if option.parse is None else "-1"
    with pytest.raises(LLMConfigError, match=rf"^transport\.{option.name}: .*expected"):
        check_options({option.name: bad}, "transport.")
    if option.flag is not None and (option.parse is not None or option.choices):
        parser = argparse.ArgumentParser()
        add_llm_backend_options(parser)
        with pytest.raises(SystemExit):  # the flag refuses the same text (a number's -1, an unknown choice)
            parser.parse_args([option.flag, bad])


def test_a_config_refuses_an_unknown_or_secret_option_naming_it():
    with pytest.raises(LLMConfigError, match=r"unknown option\(s\) models\.core\.options\.api_key; expected"):
        check_options({"api_key": "sk-1"}, "models.core.options.")
    assert set(CONFIG_OPTIONS) == set(OPTIONS) - set(SECRET_OPTIONS) and SECRET_OPTIONS == ("api_key",)


def test_nothing_else_lists_the_options():
    assert (loading.HF_OPTIONS, loading.LLAMACPP_OPTIONS, loading.OPENAI_OPTIONS) == tuple(
        BACKEND_OPTIONS[b] for b in ("hf", "llamacpp", "openai")
    )
    assert runner.TRANSPORT_KEYS == TRANSPORT_OPTIONS and runner.SECRET_KEYS == SECRET_OPTIONS
    assert config.TRANSPORT_KEYS == CONFIG_OPTIONS
    # the modules that spelled the options by hand name none of them now
    for path in (
        "trace_llm/cli.py",
        "trace_llm/loading.py",
        "trace_harness/protocols/teacher_forced/runner.py",
    ):
        text = (ROOT / path).read_text(encoding="utf-8")
        named = sorted(n for n in OPTIONS if n != "structured" and re.search(rf"[\"']{n}[\"']", text))
        assert named == [], (path, named)


def test_docs_show_the_table():
    assert markdown_table() in (ROOT / "docs" / "llm.md").read_text(encoding="utf-8")
