from __future__ import annotations

import argparse
import json

from trace_bench.cli import main
from trace_llm import DecodingSettings, add_llm_argument, llm_from_args
from trace_llm.cli import settings_from_args


def test_add_llm_argument_defaults_and_overrides():
    parser = argparse.ArgumentParser()
    add_llm_argument(parser, max_new_tokens=1024)
    args = parser.parse_args([])
    assert args.llm == "smollm2"
    assert settings_from_args(args) == DecodingSettings(max_new_tokens=1024)
    args = parser.parse_args(
        [
            "--llm",
            "openai:http://127.0.0.1:9/v1#m",
            "--temperature",
            "0.5",
            "--llm-seed",
            "3",
            "--no-llm-cache",
            "--llm-concurrency",
            "4",
        ]
    )
    llm = llm_from_args(args)
    assert llm.backend == "openai" and llm.concurrency == 4 and llm.cache is None
    assert llm.settings == DecodingSettings(temperature=0.5, seed=3, max_new_tokens=1024)


def test_llm_prompt_cache_reaches_llama_cpp_and_is_checked(capsys):
    import pytest

    from trace_llm.cli import llm_options

    parser = argparse.ArgumentParser()
    add_llm_argument(parser)
    assert llm_options(parser.parse_args([]))["prompt_cache"] is None  # the backend's default (1024 MB)
    assert llm_options(parser.parse_args(["--llm-prompt-cache", "0"]))["prompt_cache"] == 0
    with pytest.raises(SystemExit):
        parser.parse_args(["--llm-prompt-cache", "-1"])
    assert "--llm-prompt-cache" in capsys.readouterr().err
    # an option of llama.cpp only: another backend is built without it
    llm = llm_from_args(
        parser.parse_args(["--llm", "openai:http://127.0.0.1:9/v1#m", "--llm-prompt-cache", "64"])
    )
    assert llm.backend == "openai" and "prompt_cache" not in llm.describe()


def test_add_llm_argument_into_a_group():
    parser = argparse.ArgumentParser()
    group = parser.add_argument_group("generator")
    add_llm_argument(group)
    assert parser.parse_args(["--llm", "hf:x"]).llm == "hf:x"
    assert [g.title for g in parser._action_groups].count("language model") == 0


def test_chat_prints_answer(stub, tmp_path, capsys):
    rc = main(["llm", "chat", "--llm", stub.spec(), "--llm-cache", str(tmp_path / "c.sqlite"), "Hello there"])
    assert rc == 0
    assert capsys.readouterr().out.strip() == "echo: Hello there"


def test_chat_json_schema(stub, tmp_path, capsys):
    stub.responder = lambda body: (200, 'ok: {"city": "Tampa"}')
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"type": "object", "required": ["city"]}))
    rc = main(
        ["llm", "chat", "--llm", stub.spec(), "--no-llm-cache", "--json-schema", str(schema), "A city?"]
    )
    assert rc == 0
    assert json.loads(capsys.readouterr().out) == {"city": "Tampa"}


def test_chat_tiny_hf(tiny_llama_dir, tmp_path, capsys):
    rc = main(
        [
            "llm",
            "chat",
            "--llm",
            f"hf:{tiny_llama_dir}",
            "--max-new-tokens",
            "3",
            "--llm-cache",
            str(tmp_path / "c.sqlite"),
            "hi",
        ]
    )
    assert rc == 0 and capsys.readouterr().out != ""


def test_info_and_ping(stub, capsys):
    rc = main(["llm", "info", "--llm", stub.spec("m1"), "--no-llm-cache"])
    report = json.loads(capsys.readouterr().out)
    assert rc == 0 and report["describe"]["model"] == "m1" and report["describe"]["base_url"] == stub.url
    assert stub.requests == []
    rc = main(["llm", "info", "--llm", stub.spec("m1"), "--no-llm-cache", "--ping"])
    report = json.loads(capsys.readouterr().out)
    assert report["ping"]["answer"].startswith("echo:") and report["usage"]["requests"] == 1


def test_bad_spec_and_server_errors_exit_2(stub, capsys):
    assert main(["llm", "chat", "--llm", "gpt-4", "hi"]) == 2
    assert "openai:BASE_URL#MODEL" in capsys.readouterr().err
    stub.script = [(404, {"error": "no such model"})]
    assert main(["llm", "chat", "--llm", stub.spec(), "--no-llm-cache", "hi"]) == 2
    err = capsys.readouterr().err
    assert stub.url in err and "no such model" in err


def test_info_reports_the_cache(stub, tmp_path, capsys):
    cache = tmp_path / "c.sqlite"
    assert main(["llm", "info", "--llm", stub.spec(), "--llm-cache", str(cache), "--ping"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (
        report["cache"]["path"] == str(cache) and report["cache"]["entries"] == 0
    )  # counted before the ping
    assert main(["llm", "info", "--llm", stub.spec(), "--llm-cache", str(cache)]) == 0
    assert json.loads(capsys.readouterr().out)["cache"]["entries"] == 1
